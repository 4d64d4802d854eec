/* The PTX reader against ptxas: generator, mutations and oracle (ptx_oracle.h). */
#include "ptx_oracle.h"
#include "test_rng.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gclaunch/gclaunch.h"

/* --- generator ------------------------------------------------------------------------------ */

typedef struct oracle_rng {
  uint64_t s;
} oracle_rng;

static uint64_t next64(oracle_rng *r) { return test_rng_next(&r->s); }
static unsigned below(oracle_rng *r, unsigned n) { return (unsigned)(next64(r) % n); }
static bool chance(oracle_rng *r, unsigned percent) { return below(r, 100) < percent; }

typedef struct toks {
  char **t;
  size_t n, cap;
} toks;

static void push(toks *ts, const char *fmt, ...) {
  if (ts->n == ts->cap) {
    ts->cap = ts->cap ? 2 * ts->cap : 64;
    ts->t = realloc(ts->t, ts->cap * sizeof *ts->t);
  }
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  ts->t[ts->n++] = strdup(buf);
}

/* The .param types ptxas 13.0 accepts (.bf16, .pred and vectors it refuses there); .b128 last,
 * only from PTX ISA 8.3. */
static const char *const scalar_types[] = {".u8", ".s8", ".b8", ".u16", ".s16", ".b16", ".f16",
                                           ".u32", ".s32", ".b32", ".f32", ".u64",
                                           ".s64", ".b64", ".f64", ".b128"};
enum { N_SCALARS = sizeof scalar_types / sizeof *scalar_types };

/* An identifier by the PTX ISA: [a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+. */
static void identifier(oracle_rng *r, char *out, size_t cap, unsigned id) {
  static const char first[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  static const char follow[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$";
  size_t n = 0;
  unsigned kind = below(r, 10);
  if (kind == 0) out[n++] = '_';
  else if (kind == 1) out[n++] = '$';
  else if (kind == 2) out[n++] = '%';
  else out[n++] = first[below(r, sizeof first - 1)];
  unsigned len = below(r, 6);
  for (unsigned i = 0; i < len && n + 12 < cap; i++) out[n++] = follow[below(r, sizeof follow - 1)];
  n += (size_t)snprintf(out + n, cap - n, "_%u", id); /* unique */
}

static const char *const alignments[] = {"1", "2", "4", "8", "16", "32", "64", "128", "256"};

static void number(oracle_rng *r, toks *ts, unsigned v) {
  switch (below(r, 8)) { /* the PTX ISA's integer literals */
  case 0: push(ts, "0x%x", v); break;
  case 1: push(ts, "0%o", v); break;
  case 2: push(ts, "%uU", v); break;
  default: push(ts, "%u", v); break;
  }
}

static int types_n = N_SCALARS;

static void param(oracle_rng *r, toks *ts, unsigned id) {
  char name[64];
  identifier(r, name, sizeof name, id);
  push(ts, ".param");
  unsigned kind = below(r, 10);
  if (kind < 5) { /* scalar, maybe aligned */
    push(ts, "%s", scalar_types[below(r, (unsigned)types_n)]);
    push(ts, "%s", name);
  } else if (kind < 8) { /* array: .align A .b8 name[N], element types too */
    if (chance(r, 70)) {
      push(ts, ".align");
      unsigned a = 1u << below(r, 8);
      number(r, ts, a);
    }
    push(ts, "%s", scalar_types[below(r, (unsigned)types_n)]);
    push(ts, "%s", name);
    push(ts, "[");
    number(r, ts, 1 + below(r, chance(r, 90) ? 64 : 1000));
    push(ts, "]");
  } else { /* .ptr: .u64 .ptr [.space] [.align N] name */
    push(ts, "%s", chance(r, 50) ? ".u64" : ".b64");
    push(ts, ".ptr");
    static const char *const spaces[] = {".global", ".const", ".local", ".shared"};
    if (chance(r, 70)) push(ts, "%s", spaces[below(r, 4)]);
    if (chance(r, 70)) {
      push(ts, ".align");
      push(ts, "%s", alignments[below(r, 9)]);
    }
    push(ts, "%s", name);
  }
}

static void directive(oracle_rng *r, toks *ts, unsigned id) {
  char name[64];
  identifier(r, name, sizeof name, id);
  switch (below(r, 4)) {
  case 0: push(ts, ".global"), push(ts, ".align"), push(ts, "4"), push(ts, ".b32"), push(ts, "%s", name), push(ts, ";"); break;
  case 1: push(ts, ".const"), push(ts, ".b8"), push(ts, "%s", name), push(ts, "["), push(ts, "16"), push(ts, "]"), push(ts, ";"); break;
  case 2: /* a device function with parameters: not a kernel */
    push(ts, ".visible"), push(ts, ".func"), push(ts, "%s", name), push(ts, "(");
    push(ts, ".param"), push(ts, ".b32"), push(ts, "x_%u", id), push(ts, ")");
    push(ts, "{"), push(ts, "ret"), push(ts, ";"), push(ts, "}");
    break;
  default: push(ts, ".extern"), push(ts, ".shared"), push(ts, ".align"), push(ts, "16"), push(ts, ".b8"), push(ts, "%s", name), push(ts, "["), push(ts, "]"), push(ts, ";"); break;
  }
}

static void entry(oracle_rng *r, toks *ts, unsigned *id) {
  char name[64];
  identifier(r, name, sizeof name, (*id)++);
  if (name[0] == '%') name[0] = 'k'; /* ptxas: kernel names may not start with % */
  size_t start = ts->n;
  if (chance(r, 80)) push(ts, ".visible");
  push(ts, ".entry");
  push(ts, "%s", name);
  unsigned n = below(r, 9);
  if (n || chance(r, 50)) {
    push(ts, "(");
    for (unsigned i = 0; i < n; i++) {
      if (i) push(ts, ",");
      param(r, ts, (*id)++);
    }
    push(ts, ")");
  }
  if (chance(r, 15)) { /* a declaration of it before: the same tokens, then ';' */
    size_t end = ts->n, len = end - start;
    for (size_t i = 0; i < len; i++) push(ts, "%s", ts->t[start + i]);
    push(ts, ";");
    char **copy = malloc((len + 1) * sizeof *copy); /* rotate: the copy and ';' go first */
    memcpy(copy, ts->t + end, (len + 1) * sizeof *copy);
    memmove(ts->t + start + len + 1, ts->t + start, len * sizeof *copy);
    memcpy(ts->t + start, copy, (len + 1) * sizeof *copy);
    free(copy);
  }
  bool threads = false;
  if (chance(r, 20)) threads = true, push(ts, ".maxntid"), push(ts, "128"), push(ts, ","), push(ts, "1"), push(ts, ","), push(ts, "1");
  else if (chance(r, 10)) threads = true, push(ts, ".reqntid"), push(ts, "64"); /* not both (ptxas) */
  if (threads && chance(r, 30)) push(ts, ".minnctapersm"), push(ts, "2");
  if (chance(r, 10)) push(ts, ".maxnreg"), push(ts, "64");
  if (chance(r, 10)) push(ts, ".explicitcluster");
  if (chance(r, 10)) push(ts, ".reqnctapercluster"), push(ts, "2"), push(ts, ","), push(ts, "1");
  else if (chance(r, 10)) push(ts, ".maxclusterrank"), push(ts, "4"); /* not both (ptxas) */
  if (chance(r, 5)) push(ts, ".pragma"), push(ts, "\"nounroll\""), push(ts, ";");
  push(ts, "{");
  if (chance(r, 30)) push(ts, ".reg"), push(ts, ".b32"), push(ts, "%%r<4>"), push(ts, ";");
  push(ts, "ret");
  push(ts, ";");
  push(ts, "}");
}

static const char *const vocabulary[] = {
    ".param", ".u32", ".b8", ".f16", ".u64", ".align", ".ptr", ".global", ".entry", ".func", ".reg",
    ".visible", ".extern", ".const", ",", "(", ")", "[", "]", "{", "}", ";", "8", "0", "16", "0x10",
    "07", "4U", "-1", "1e3", "a", "$x", "%y", "_", "__", "k1", ".u128", ".b128", ".pred", ".s32",
    ".maxntid", ".version", ".target", "//", "/*", "*/", "\"s\"", ".align 8", ".weak", ".noreturn",
    ".minnctapersm", ".maxnreg", ".explicitcluster", ".reqnctapercluster", ".maxclusterrank",
    ".blocksareclusters", ".pragma", ".maxnctapersm", ".reqntid", "\v", "\f"};
enum { N_VOCAB = sizeof vocabulary / sizeof *vocabulary };

static void mutate(oracle_rng *r, toks *ts) {
  if (ts->n < 8) return;
  size_t i = 7 + below(r, (unsigned)(ts->n - 7)); /* after the header */
  switch (below(r, 6)) {
  case 0: free(ts->t[i]), ts->t[i] = strdup(vocabulary[below(r, N_VOCAB)]); break;
  case 1: { /* duplicate: the copy right after i */
    push(ts, "%s", ts->t[i]);
    char *t = ts->t[ts->n - 1];
    memmove(ts->t + i + 2, ts->t + i + 1, (ts->n - 2 - i) * sizeof *ts->t);
    ts->t[i + 1] = t;
    break;
  }
  case 2: free(ts->t[i]); memmove(ts->t + i, ts->t + i + 1, (--ts->n - i) * sizeof *ts->t); break;
  case 3: if (i + 1 < ts->n) { char *t = ts->t[i]; ts->t[i] = ts->t[i + 1]; ts->t[i + 1] = t; } break;
  case 4: { /* insert */
    push(ts, "%s", vocabulary[below(r, N_VOCAB)]);
    char *t = ts->t[ts->n - 1];
    memmove(ts->t + i + 1, ts->t + i, (ts->n - 1 - i) * sizeof *ts->t);
    ts->t[i] = t;
    break;
  }
  default: { /* one byte of the token changed */
    size_t len = strlen(ts->t[i]);
    static const char bytes[] = "._$%0123456789abfuxABZ[]()/* ,;";
    if (len) ts->t[i][below(r, (unsigned)len)] = bytes[below(r, sizeof bytes - 1)];
  }
  }
}

static const char *separator(oracle_rng *r, const char *prev, const char *next) {
  /* A body on lines of its own: ptxas's errors in it are then told from the declaration's. */
  if (strcmp(next, "{") == 0 || strcmp(prev, "{") == 0 || strcmp(prev, "}") == 0) return "\n";
  switch (below(r, 12)) {
  case 0: return "\n";
  case 1: return "\t";
  case 2: return " /* c */ ";
  case 3: return " // line\n";
  case 4: return "  \n\t ";
  default: return " ";
  }
}

char *ptx_gen_module(uint64_t seed, int mutations) {
  oracle_rng r = {seed};
  toks ts = {0};
  unsigned id = 0;
  unsigned version = below(&r, 4); /* 8.0 (4352 parameter bytes), 8.8, 9.0 (.b128) */
  types_n = version == 3 ? N_SCALARS : N_SCALARS - 1;
  push(&ts, ".version"), push(&ts, version == 0 ? "8.0" : version == 3 ? "9.0" : "8.8"),
      push(&ts, ".target"), push(&ts, "sm_90"),
      push(&ts, ".address_size"), push(&ts, "64"), push(&ts, "//");
  unsigned before = below(&r, 3), entries = 1 + below(&r, 3);
  for (unsigned i = 0; i < before; i++) directive(&r, &ts, id++);
  for (unsigned i = 0; i < entries; i++) {
    entry(&r, &ts, &id);
    if (chance(&r, 30)) directive(&r, &ts, id++);
  }
  for (int m = 0; m < mutations; m++) mutate(&r, &ts);
  size_t cap = 64;
  for (size_t i = 0; i < ts.n; i++) cap += strlen(ts.t[i]) + 16;
  char *text = malloc(cap), *p = text;
  p += sprintf(p, "// generated, seed %llu, %d mutations\n", (unsigned long long)seed, mutations);
  for (size_t i = 0; i < ts.n; i++) {
    if (i == 6) { p += sprintf(p, "\n"); free(ts.t[i]); continue; } /* the header's end */
    p += sprintf(p, "%s%s", ts.t[i], i < 6 ? " " : i + 1 < ts.n ? separator(&r, ts.t[i], ts.t[i + 1]) : "\n");
    free(ts.t[i]);
  }
  free(ts.t);
  return text;
}

/* --- oracle --------------------------------------------------------------------------------- */

const char *ptx_oracle_ptxas(void) {
  static char path[1024];
  const char *env = getenv("GCL_PTXAS"), *home = getenv("CUDA_HOME");
  if (env && access(env, X_OK) == 0) return env;
  if (home) {
    snprintf(path, sizeof path, "%s/bin/ptxas", home);
    if (access(path, X_OK) == 0) return path;
  }
  if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) return "/usr/local/cuda/bin/ptxas";
  const char *dirs = getenv("PATH");
  while (dirs && *dirs) {
    size_t n = strcspn(dirs, ":");
    snprintf(path, sizeof path, "%.*s/ptxas", (int)n, dirs);
    if (n && access(path, X_OK) == 0) return path;
    dirs += n + (dirs[n] == ':');
  }
  return NULL;
}

const char *ptx_verdict_name(ptx_verdict v) {
  static const char *const names[] = {"agree", "both refuse", "ptxas refuses elsewhere",
                                      "DIFFERENT KERNELS", "READER REFUSES what ptxas accepts",
                                      "READER ACCEPTS a declaration ptxas refuses", "no ptxas"};
  return (unsigned)v < sizeof names / sizeof *names ? names[v] : "?";
}

bool ptx_oracle_disagrees(ptx_verdict v) {
  return v == PTX_DIFFERENT || v == PTX_READER_REFUSES || v == PTX_READER_ACCEPTS;
}

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, used = 0, got;
  unsigned char *buf = malloc(cap + 1);
  while ((got = fread(buf + used, 1, cap - used, f)) > 0)
    if ((used += got) == cap) buf = realloc(buf, (cap *= 2) + 1);
  fclose(f);
  buf[used] = 0;
  *n = used;
  return buf;
}

/* Runs ptxas on dir/x.ptx into dir/x.cubin, stderr into dir/x.err. Its exit status, -1 if it
 * could not run. */
static int run_ptxas(const char *ptxas, const char *dir) {
  char ptx[1100], cubin[1100], err[1100];
  snprintf(ptx, sizeof ptx, "%s/x.ptx", dir);
  snprintf(cubin, sizeof cubin, "%s/x.cubin", dir);
  snprintf(err, sizeof err, "%s/x.err", dir);
  unlink(cubin);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) dup2(fd, 2), dup2(fd, 1);
    execl(ptxas, ptxas, "-arch=sm_90", "-o", cubin, ptx, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  pid_t got;
  while ((got = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {} /* libFuzzer's -timeout alarm */
  if (got < 0 || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st) == 127 ? -1 : WEXITSTATUS(st);
}

/* The kernels of a and b equal by name (any order), parameter count, offsets and sizes. */
static bool same_kernels(const gcl_image *a, const gcl_image *b, char *why, size_t cap) {
  size_t na = gcl_image_kernel_count(a), nb = gcl_image_kernel_count(b);
  if (na != nb) return snprintf(why, cap, "%zu kernels, ptxas's cubin has %zu", na, nb), false;
  for (size_t k = 0; k < na; k++) {
    gcl_image_kernel_info ka, kb;
    size_t j;
    gcl_image_kernel(a, k, &ka);
    if (gcl_image_find_kernel(b, ka.name, &j) != GCL_OK)
      return snprintf(why, cap, "kernel '%.100s' is not in ptxas's cubin", ka.name), false;
    gcl_image_kernel(b, j, &kb);
    if (ka.param_count != kb.param_count)
      return snprintf(why, cap, "kernel '%.100s': %zu parameters, cubin %zu", ka.name,
                      ka.param_count, kb.param_count), false;
    for (size_t p = 0; p < ka.param_count; p++) {
      size_t oa, sa, ob, sb;
      gcl_image_param(a, k, p, &oa, &sa, NULL);
      gcl_image_param(b, j, p, &ob, &sb, NULL);
      if (oa != ob || sa != sb)
        return snprintf(why, cap, "kernel '%.100s' parameter %zu: offset %zu size %zu, cubin "
                        "offset %zu size %zu", ka.name, p, oa, sa, ob, sb), false;
    }
  }
  return true;
}

/* Line (1-based) of ptxas's first error ("..., line N; error" or "..., line N; fatal", as a
 * syntax error is told: "fatal   : Parsing error near ..."), 0 if none is given. */
static unsigned error_line(const char *err) {
  for (const char *p = err; (p = strstr(p, ", line ")); p++) {
    unsigned line = 0;
    char tail[16] = "";
    if (sscanf(p, ", line %u; %15s", &line, tail) == 2 &&
        (strncmp(tail, "error", 5) == 0 || strncmp(tail, "fatal", 5) == 0))
      return line;
  }
  return 0;
}

/* The token .entry in buf (not "ld.pa.entryram" nor ".entry_x"), NULL if none. */
static char *find_entry(char *buf) {
  for (char *e = buf; (e = strstr(e, ".entry")); e++) {
    char before = e > buf ? e[-1] : ' ', after = e[6];
    bool ident_before = isalnum((unsigned char)before) || before == '_' || before == '$' ||
                        before == '%' || before == '.';
    bool ident_after = isalnum((unsigned char)after) || after == '_' || after == '$' || after == '.';
    if (!ident_before && !ident_after) return e;
  }
  return NULL;
}

/* in_declaration on text whose comments are blanked (code_only). */
static bool in_code_declaration(const char *text, size_t n, unsigned line, const char *near) {
  unsigned cur = 1, start = 0;
  const char *p = text, *end = text + n;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    size_t len = (size_t)(eol - p);
    char buf[4096];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf - 1 ? len : sizeof buf - 1), p);
    if (find_entry(buf)) start = cur;
    /* A line that also holds a body's brace, or another statement ended before its .entry, is
     * not judged: its error may be that one's (a module variable refused on the entry's line). */
    if (start && cur == line) {
      if (strchr(buf, '{') || strchr(buf, '}')) return false;
      /* The token ptxas names only after the declaration's ';': the next statement's error. */
      char *semi = strchr(buf, ';');
      if (semi && near && *near) {
        *semi = 0;
        bool before = strstr(buf, near) != NULL;
        *semi = ';';
        if (!before && strstr(semi, near)) return false;
      }
      char *entry = start == cur ? find_entry(buf) : NULL;
      if (!entry) return true;
      /* On the .entry's own line only "[.visible|.extern|.weak] .entry ...": a token before
       * that is another statement's (ptxas's syntax error there is that one's). */
      char *q = entry;
      while (q > buf && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\r' || q[-1] == '\f')) q--;
      static const char *const links[] = {".visible", ".extern", ".weak"};
      for (int i = 0; i < 3; i++) {
        size_t w = strlen(links[i]);
        if ((size_t)(q - buf) >= w && memcmp(q - w, links[i], w) == 0) { q -= w; break; }
      }
      while (q > buf && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\r' || q[-1] == '\f')) q--;
      return q == buf;
    }
    if (start && (strchr(buf, '{') || strchr(buf, ';'))) start = 0;
    if (cur > line) return false;
    p = eol + 1;
    cur++;
  }
  return false;
}

/* A copy of text with its comments (// to the line's end, block comments across lines) blanked
 * to spaces, newlines kept: lines and columns stay where ptxas counts them. */
static char *code_only(const char *text, size_t n) {
  char *code = malloc(n + 1);
  bool string = false;
  for (size_t i = 0; i < n;) {
    if (!string && text[i] == '/' && i + 1 < n && (text[i + 1] == '/' || text[i + 1] == '*')) {
      bool block = text[i + 1] == '*';
      size_t j = i + 2;
      if (block) while (j < n && !(text[j - 1] == '*' && text[j] == '/' && j >= i + 3)) j++;
      else while (j < n && text[j] != '\n') j++;
      if (block && j < n) j++; /* past the closing '/' */
      for (; i < j && i < n; i++) code[i] = text[i] == '\n' ? '\n' : ' ';
      continue;
    }
    if (text[i] == '"') string = !string;
    else if (text[i] == '\n') string = false;
    code[i] = text[i];
    i++;
  }
  code[n] = 0;
  return code;
}

/* True if line lies in an entry declaration: from a line holding ".entry" (outside comments)
 * to the first line after it holding "{" or ";". near: the token ptxas's syntax error names
 * ("" if none). */
static bool in_declaration(const char *text, size_t n, unsigned line, const char *near) {
  char *code = code_only(text, n);
  bool in = in_code_declaration(code, n, line, near);
  free(code);
  return in;
}

ptx_verdict ptx_oracle_judge(const char *text, size_t n, const char *dir, char *why, size_t cap) {
  why[0] = 0;
  const char *ptxas = ptx_oracle_ptxas();
  if (!ptxas) return snprintf(why, cap, "no ptxas"), PTX_NO_PTXAS;
  char path[1100];
  snprintf(path, sizeof path, "%s/x.ptx", dir);
  FILE *f = fopen(path, "wb");
  if (!f) return snprintf(why, cap, "cannot write %s", path), PTX_NO_PTXAS;
  fwrite(text, 1, n, f);
  fclose(f);
  gcl_image *mine = NULL, *theirs = NULL;
  gcl_status ms = gcl_image_parse(text, n, 90, &mine);
  char mine_why[512];
  snprintf(mine_why, sizeof mine_why, "%s", ms == GCL_OK ? "" : gcl_last_error());
  int rc = run_ptxas(ptxas, dir);
  if (rc < 0) {
    gcl_image_destroy(mine);
    return snprintf(why, cap, "ptxas (%s) did not run", ptxas), PTX_NO_PTXAS;
  }
  ptx_verdict v;
  size_t len;
  if (rc == 0) {
    snprintf(path, sizeof path, "%s/x.cubin", dir);
    unsigned char *cubin = slurp(path, &len);
    if (!cubin || gcl_image_parse(cubin, len, 0, &theirs) != GCL_OK) {
      snprintf(why, cap, "ptxas's cubin unreadable: %s", cubin ? gcl_last_error() : "missing");
      v = PTX_NO_PTXAS;
    } else if (ms != GCL_OK) {
      snprintf(why, cap, "reader: %s", mine_why);
      v = PTX_READER_REFUSES;
    } else
      v = same_kernels(mine, theirs, why, cap) ? PTX_AGREE : PTX_DIFFERENT;
    free(cubin);
  } else if (ms != GCL_OK)
    v = PTX_BOTH_REFUSE;
  else {
    snprintf(path, sizeof path, "%s/x.err", dir);
    char *err = (char *)slurp(path, &len);
    unsigned line = err ? error_line(err) : 0;
    /* A syntax error at a declaration's first token (its linkage or .entry) is the statement
     * before's: left open (".align 8" alone), it takes that token. */
    bool first_token = err && (strstr(err, "Parsing error near '.visible'") ||
                               strstr(err, "Parsing error near '.extern'") ||
                               strstr(err, "Parsing error near '.weak'") ||
                               strstr(err, "Parsing error near '.entry'"));
    char near[128] = ""; /* the token of "Parsing error near 'X'" */
    const char *q = err ? strstr(err, "Parsing error near '") : NULL;
    if (q) sscanf(q + 20, "%127[^']", near);
    bool decl = line && !first_token && in_declaration(text, n, line, near);
    snprintf(why, cap, "ptxas: %.300s", err ? err : "?");
    v = decl ? PTX_READER_ACCEPTS : PTX_REFUSED_ELSEWHERE;
    free(err);
  }
  gcl_image_destroy(mine);
  gcl_image_destroy(theirs);
  return v;
}
