/* PTX reader: each `.entry` and its `.param` list. PTX carries types and alignments but no
 * offsets; each parameter becomes gclaunch signature text ("u32", "ptr",
 * "bytes(2048) align(128)") and the layout engine places them for the chosen architecture. */
#include "image_internal.h"
#include "nameset.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lexer {
  const char *p, *end;
  const char *tok; /* current token */
  size_t len;
} lexer;

static bool ident_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '%' || c == '.';
}

/* ptxas's blanks: space, tab, newline, carriage return, form feed (a vertical tab is a syntax
 * error to it, so it is a token here). */
static bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

static void skip_blank(lexer *lx) {
  while (lx->p < lx->end) {
    if (blank(*lx->p)) lx->p++;
    else if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '/') {
      while (lx->p < lx->end && *lx->p != '\n') lx->p++;
    } else if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '*') {
      const char *q = lx->p + 2;
      while (q + 1 < lx->end && !(q[0] == '*' && q[1] == '/')) q++;
      lx->p = q + 1 < lx->end ? q + 2 : lx->end;
    } else
      return;
  }
}

/* Advances to the next token; false at the end. Strings are one token, quotes included. */
static bool next(lexer *lx) {
  skip_blank(lx);
  if (lx->p >= lx->end) return false;
  const char *s = lx->p;
  if (*s == '"') {
    const char *q = s + 1;
    while (q < lx->end && *q != '"' && *q != '\n') q++;
    lx->p = q < lx->end ? q + 1 : q;
  } else if (ident_char(*s)) {
    while (lx->p < lx->end && ident_char(*lx->p)) lx->p++;
  } else
    lx->p++;
  lx->tok = s;
  lx->len = (size_t)(lx->p - s);
  return true;
}

static bool is(const lexer *lx, const char *word) {
  return lx->len == strlen(word) && memcmp(lx->tok, word, lx->len) == 0;
}

typedef struct ptx_param {
  size_t elem, count, align;
  const char *scalar; /* signature scalar of one element; NULL: bytes(N) align(A) */
  bool ptr;
  char type[8];       /* the PTX type (".u32"): a declaration and its definition must agree */
  char name[64];      /* its first 63 characters, for messages */
  const char *src;    /* the name in the module text (src_len characters): the duplicate check */
  size_t src_len;
} ptx_param;

/* What the reader needs of the module: its PTX ISA version (10 * major + minor, for the
 * features that depend on it) and the architecture offsets are computed for. */
typedef struct ptx_module {
  int version;
  int sm;
  int target; /* the NN of its `.target sm_NN`, 0 if none was read */
} ptx_module;

/* Element size and signature scalar of a .param type; 0 if tok is none. The PTX ISA's .param
 * types (ptxas 13.0 refuses .bf16, .pred and vector types there; .b128 needs PTX ISA 8.3). */
static size_t type_size(const lexer *lx, const char **scalar) {
  static const struct { const char *ptx, *sig; size_t size; } types[] = {
      {".b8", "u8", 1},    {".u8", "u8", 1},    {".s8", "i8", 1},    {".b16", "u16", 2},
      {".u16", "u16", 2},  {".s16", "i16", 2},  {".f16", "f16", 2},  {".b32", "u32", 4},
      {".u32", "u32", 4},  {".s32", "i32", 4},  {".f32", "f32", 4},  {".b64", "u64", 8},
      {".u64", "u64", 8},  {".s64", "i64", 8},  {".f64", "f64", 8},  {".b128", NULL, 16}};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (is(lx, types[i].ptx)) {
      *scalar = types[i].sig;
      return types[i].size;
    }
  return 0;
}

/* An identifier by the PTX ISA: [a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+ (ASCII only), not
 * the predefined WARP_SZ (a syntax error to ptxas as a name; %tid and the like it takes). */
static bool identifier(const char *t, size_t n) {
  if (n == 0 || (n == 7 && memcmp(t, "WARP_SZ", 7) == 0)) return false; /* predefined: ptxas */
  bool letter = (t[0] >= 'a' && t[0] <= 'z') || (t[0] >= 'A' && t[0] <= 'Z');
  if (!letter && !(t[0] == '_' || t[0] == '$' || t[0] == '%')) return false;
  if (!letter && n < 2) return false;
  for (size_t i = 1; i < n; i++) {
    char c = t[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$'))
      return false;
  }
  return true;
}

/* An integer literal by the PTX ISA (decimal, 0x hex, 0b binary, 0 octal; a U suffix) from the
 * next token, at most 2^32 - 1; false if the token is none. */
static bool read_number(lexer *lx, size_t *out) {
  if (!next(lx) || !isdigit((unsigned char)lx->tok[0])) return false;
  const char *t = lx->tok;
  size_t n = lx->len, i = 0;
  if (n > 1 && t[n - 1] == 'U') n--; /* ptxas: 'U' only, a lowercase 'u' is a syntax error */
  unsigned base = 10;
  if (n > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, i = 2;
  else if (n > 2 && t[0] == '0' && (t[1] == 'b' || t[1] == 'B')) base = 2, i = 2;
  else if (n > 1 && t[0] == '0') base = 8, i = 1;
  uint64_t v = 0;
  for (; i < n; i++) {
    int c = (unsigned char)t[i], d = isdigit(c) ? c - '0' : isxdigit(c) ? 10 + (tolower(c) - 'a') : 99;
    if (d >= (int)base) return false;
    v = v * base + (unsigned)d;
    if (v > 0xffffffffu) return false;
  }
  *out = (size_t)v;
  return true;
}

static gcl_status bad(const char *kernel, size_t index, const char *what) {
  return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s' parameter %zu: %s", kernel, index,
                   what);
}

static gcl_status read_align(lexer *lx, const char *kernel, size_t index, size_t *a) {
  if (!read_number(lx, a) || *a == 0 || (*a & (*a - 1)))
    return bad(kernel, index, ".align is not followed by a power of two");
  return GCL_OK;
}

/* One parameter declaration by the PTX ISA's grammar, as ptxas 13.0 reads it:
 *   {.align N} .param {.align N} TYPE [.ptr [.global|.const|.local|.shared] [.align N] | {.align N}]
 *   NAME [[N]]
 * The alignment is the largest of the type's and every .align before the type; an .align after
 * the type (of the data a .ptr points to, or none) does not place the parameter. Leaves lx on
 * the token after it (`,` or `)`). */
static gcl_status read_param(lexer *lx, const char *kernel, size_t index, const ptx_module *m,
                             ptx_param *p) {
  ptx_param r = {.count = 1};
  size_t a, align = 1;
  gcl_status s;
  while (is(lx, ".align")) { /* ".align 16 .param .u32 a": ptxas places it so too */
    if ((s = read_align(lx, kernel, index, &a)) != GCL_OK) return s;
    if (a > align) align = a;
    if (!next(lx)) return bad(kernel, index, "the module ends in the declaration");
  }
  if (!is(lx, ".param")) return bad(kernel, index, "expected .param");
  while (next(lx) && is(lx, ".align"))
    if ((s = read_align(lx, kernel, index, &a)) != GCL_OK) return s;
    else if (a > align) align = a;
  if ((r.elem = type_size(lx, &r.scalar)) == 0)
    return bad(kernel, index, "expected a type (.u8 .s8 .b8 .u16 .s16 .b16 .f16 .u32 .s32 .b32 "
                              ".f32 .u64 .s64 .b64 .f64 .b128) after .param and .align");
  bool b128 = r.elem == 16; /* a scalar .b128 needs PTX ISA 8.3 (ptxas lets arrays through) */
  snprintf(r.type, sizeof r.type, "%.*s", (int)lx->len, lx->tok);
  if (!next(lx)) return bad(kernel, index, "the module ends in the declaration");
  if (is(lx, ".ptr")) {
    r.ptr = true;
    if (!next(lx)) return bad(kernel, index, "the module ends in the declaration");
    if (is(lx, ".global") || is(lx, ".const") || is(lx, ".local") || is(lx, ".shared"))
      if (!next(lx)) return bad(kernel, index, "the module ends in the declaration");
    if (is(lx, ".align")) {
      if ((s = read_align(lx, kernel, index, &a)) != GCL_OK) return s;
      if (!next(lx)) return bad(kernel, index, "the module ends in the declaration");
    }
  } else
    while (is(lx, ".align")) {
      if ((s = read_align(lx, kernel, index, &a)) != GCL_OK) return s;
      if (!next(lx)) return bad(kernel, index, "the module ends in the declaration");
    }
  if (!identifier(lx->tok, lx->len) && !is(lx, "_")) /* ptxas takes "_" here, not as a kernel's */
    return bad(kernel, index, "expected a parameter name");
  snprintf(r.name, sizeof r.name, "%.*s", (int)(lx->len < 63 ? lx->len : 63), lx->tok);
  r.src = lx->tok;
  r.src_len = lx->len;
  if (!next(lx)) return bad(kernel, index, "the parameter list is not closed");
  if (is(lx, "[")) {
    if (!read_number(lx, &r.count) || r.count == 0 || !next(lx) || !is(lx, "]"))
      return bad(kernel, index, "array size is not a positive number in [ ]");
    if (!next(lx)) return bad(kernel, index, "the parameter list is not closed");
    b128 = false;
  }
  if (b128 && m->version < 83) return bad(kernel, index, ".b128 needs PTX ISA 8.3");
  if (!is(lx, ",") && !is(lx, ")"))
    return bad(kernel, index, "expected ',' or ')' after the parameter");
  r.align = align > r.elem ? align : r.elem;
  *p = r;
  return GCL_OK;
}

/* Signature text of one parameter into buf. */
static void param_text(const ptx_param *p, char *buf, size_t cap) {
  if (p->count == 1 && p->align == p->elem && p->scalar)
    snprintf(buf, cap, "%s", p->ptr && p->elem == 8 ? "ptr" : p->scalar);
  else
    snprintf(buf, cap, "bytes(%zu) align(%zu)", p->elem * p->count, p->align);
}

/* Places the kernel's parameters with the layout engine for sm; fills k. */
static gcl_status place(gcl__image_kernel *k, const char *sig_text, int sm) {
  gcl_signature *sig = NULL;
  gcl_layout *layout = NULL;
  gcl_status s = gcl_signature_parse(sig_text, &sig);
  if (s == GCL_OK) s = gcl_layout_create(sig, sm, &layout);
  for (size_t p = 0; s == GCL_OK && p < k->info.param_count; p++)
    s = gcl_layout_param(layout, p, &k->params[p].offset, &k->params[p].size,
                         &k->params[p].align);
  if (s == GCL_OK) k->info.param_bytes = gcl_layout_size(layout);
  gcl_layout_destroy(layout);
  gcl_signature_destroy(sig);
  if (s != GCL_OK) {
    char why[GCL__MESSAGE_MAX];
    snprintf(why, sizeof why, "%s", gcl_last_error());
    gcl__fail(s, "ptx: kernel '%.200s' on sm_%d: %s", k->name, sm, why);
  }
  return s;
}

/* Offset of a parameter of `text` placed after `end` bytes of parameters on sm, by the layout
 * engine (the rule for alignments above 128 depends on the architecture's base). */
static gcl_status offset_after(size_t end, const char *text, int sm, size_t *offset) {
  char sig_text[128];
  if (end) snprintf(sig_text, sizeof sig_text, "bytes(%zu), %s", end, text);
  else snprintf(sig_text, sizeof sig_text, "%s", text);
  gcl_signature *sig = NULL;
  gcl_layout *layout = NULL;
  gcl_status s = gcl_signature_parse(sig_text, &sig);
  if (s == GCL_OK) s = gcl_layout_create(sig, sm, &layout);
  if (s == GCL_OK) s = gcl_layout_param(layout, end ? 1 : 0, offset, NULL, NULL);
  gcl_layout_destroy(layout);
  gcl_signature_destroy(sig);
  return s;
}

/* A PTX parameter's size is its elements' (`.align 16 .b32 a[7]` is 28 bytes, as the cubin
 * records it), not rounded up to its alignment as bytes(28) align(16) is in C: so the next
 * parameter may start inside that rounding. The layout engine placed the whole list (its
 * checks); the offsets are placed again here from the exact sizes: up to 16-byte alignment the
 * offset is aligned (every architecture's parameter base is), above it the layout engine's rule
 * for sm decides (offset_after: nvcc aligns the constant-bank address, not the offset). */
static gcl_status exact_sizes(gcl__image_kernel *k, const ptx_param *params, size_t n, int sm) {
  size_t end = 0;
  for (size_t p = 0; p < n; p++) {
    size_t size = params[p].elem * params[p].count, align = params[p].align, off;
    if (align <= 16) off = (end + align - 1) / align * align; /* every base is 16-aligned */
    else {
      gcl_status s = offset_after(end, k->params[p].kind, sm, &off);
      if (s != GCL_OK) return s;
    }
    k->params[p].offset = off;
    k->params[p].size = size;
    k->params[p].align = align;
    end = off + size;
  }
  k->info.param_bytes = end;
  return GCL_OK;
}

static gcl_status fill_kernel(gcl__image_kernel *k, const ptx_param *params, size_t n,
                              const char *text, const ptx_module *m) {
  k->params = gcl__calloc(n ? n : 1, sizeof *k->params);
  if (!k->params) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "ptx: out of memory");
  k->info.param_count = n;
  for (size_t p = 0; p < n; p++) param_text(&params[p], k->params[p].kind, sizeof k->params[p].kind);
  gcl_status s = n ? place(k, text, m->sm) : GCL_OK;
  if (s == GCL_OK && n) s = exact_sizes(k, params, n, m->sm);
  /* The parameter space ptxas allows: 4352 bytes before PTX ISA 8.1, 32764 from it (the layout
   * engine refuses more than that). */
  size_t end = n ? k->params[n - 1].offset + k->params[n - 1].size : 0;
  if (s == GCL_OK && m->version < 81 && end > 4352)
    s = gcl__fail(GCL_ERROR_LAYOUT_TOO_LARGE, "ptx: kernel '%.200s': its parameters end at byte "
                  "%zu, past the 4352 bytes PTX ISA versions before 8.1 allow", k->name, end);
  return s;
}

/* The parameters read so far: the array (grown geometrically), their signature text and the
 * set of their names, so that n parameters cost time linear in n (issue 50: a list scan per
 * parameter and a realloc of one more element made 100k parameters take 18 s). */
typedef struct param_list {
  ptx_param *p;
  size_t n, cap;
  char *text;
  size_t used, text_cap;
  gcl__nameset names;
} param_list;

static gcl_status list_push(param_list *l, const ptx_param *p, const char *kernel) {
  char item[64];
  if (gcl__nameset_find(&l->names, p->src, p->src_len, &(size_t){0}))
    return bad(kernel, l->n, "a parameter of that name was declared before");
  param_text(p, item, sizeof item);
  size_t need = l->used + strlen(item) + 3;
  if (need > l->text_cap) {
    size_t cap = l->text_cap ? l->text_cap : 256;
    while (cap < need) cap *= 2;
    char *t = gcl__realloc(l->text, cap);
    if (!t) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "ptx: out of memory");
    l->text = t, l->text_cap = cap;
  }
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    ptx_param *grown = gcl__realloc(l->p, cap * sizeof *grown);
    if (!grown) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "ptx: out of memory");
    l->p = grown, l->cap = cap;
  }
  if (!gcl__nameset_add(&l->names, p->src, p->src_len, l->n))
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "ptx: out of memory");
  l->used += (size_t)snprintf(l->text + l->used, l->text_cap - l->used, "%s%s", l->n ? ", " : "",
                              item);
  l->p[l->n++] = *p;
  return GCL_OK;
}

/* Parameters of one .entry; lx is on the token after the kernel name. The parameters read go to
 * *out (*out_n of them; the caller frees *out) for the match of a declaration and its
 * definition. */
static gcl_status read_params(lexer *lx, gcl__image_kernel *k, const ptx_module *m,
                              ptx_param **out, size_t *out_n) {
  param_list l = {0};
  gcl_status s = GCL_OK;
  bool open = is(lx, "(") && next(lx) && !is(lx, ")");
  while (s == GCL_OK && open) {
    ptx_param p;
    if ((s = read_param(lx, k->name, l.n, m, &p)) == GCL_OK) s = list_push(&l, &p, k->name);
    open = s == GCL_OK && is(lx, ",") && next(lx);
  }
  if (s == GCL_OK && is(lx, "(") && !is(lx, ")")) /* "(" then not ")" nor a parameter */
    s = bad(k->name, 0, "expected .param or ')'");
  if (s == GCL_OK) s = fill_kernel(k, l.p, l.n, l.text ? l.text : "", m);
  gcl__free(l.text);
  gcl__nameset_free(&l.names);
  if (s != GCL_OK) {
    gcl__free(l.p);
    return s;
  }
  *out = l.p;
  *out_n = l.n;
  return GCL_OK;
}

/* N[, N[, N]] (1 to 3 numbers, each at least `least`) after a directive into xyz; false if
 * not. */
static bool read_dims(lexer *lx, size_t xyz[3], size_t least) {
  for (int i = 0; i < 3; i++) {
    if (!read_number(lx, &xyz[i]) || xyz[i] < least) return false;
    lexer peek = *lx;
    if (i == 2 || !next(&peek) || !is(&peek, ",")) break; /* a 4th: ',' is then no directive */
    *lx = peek;
  }
  return true;
}

typedef struct directives_seen {
  bool maxntid, reqntid, cluster, rank, blocks;
} directives_seen;

/* One directive at lx (not `{` or `;`), read into k and noted in seen. */
static gcl_status read_directive(lexer *lx, gcl__image_kernel *k, const ptx_module *m,
                                 directives_seen *seen) {
  static const char takes[] = "(.maxntid, .reqntid, .maxnreg, .minnctapersm, .reqnctapercluster, "
                              ".maxclusterrank, .explicitcluster, .blocksareclusters, .pragma)";
  size_t xyz[3] = {1, 1, 1}, v;
  bool max = is(lx, ".maxntid"), req = is(lx, ".reqntid");
  bool clustered = is(lx, ".reqnctapercluster") || is(lx, ".maxclusterrank") ||
                   is(lx, ".explicitcluster") || is(lx, ".blocksareclusters");
  int needs = is(lx, ".blocksareclusters") ? 90 : 78;
  if (clustered && (m->version < needs || (m->target && m->target < 90)))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': %.*s needs PTX ISA %d.%d and "
                     ".target sm_90 or later (the module: .version %d.%d, .target sm_%d)",
                     k->name, (int)lx->len, lx->tok, needs / 10, needs % 10, m->version / 10,
                     m->version % 10, m->target);
  if (max || req) {
    if (!read_dims(lx, xyz, 1))
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': %s expects 1 to 3 positive "
                       "numbers separated by ','", k->name, max ? ".maxntid" : ".reqntid");
    seen->maxntid |= max, seen->reqntid |= req;
    if (max) k->info.max_threads = (int)(xyz[0] * xyz[1] * xyz[2] > (1u << 20) ? 0 : xyz[0] * xyz[1] * xyz[2]);
    for (int i = 0; req && i < 3; i++) k->info.reqntid[i] = (int)xyz[i];
  } else if (is(lx, ".maxnreg") || is(lx, ".minnctapersm")) {
    bool nreg = is(lx, ".maxnreg");
    if (!read_number(lx, &v) || v == 0)
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': %s expects a positive number",
                       k->name, nreg ? ".maxnreg" : ".minnctapersm");
  } else if (is(lx, ".reqnctapercluster")) {
    if (!read_dims(lx, xyz, 0))
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': .reqnctapercluster expects 1 "
                       "to 3 numbers separated by ','", k->name);
    seen->cluster = true;
  } else if (is(lx, ".maxclusterrank")) {
    seen->rank = true;
    if (!read_number(lx, &v))
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': .maxclusterrank expects a "
                       "number", k->name);
  } else if (is(lx, ".blocksareclusters")) seen->blocks = true;
  else if (is(lx, ".pragma")) {
    if (!next(lx) || lx->tok[0] != '"' || lx->len < 2 || lx->tok[lx->len - 1] != '"' ||
        !next(lx) || !is(lx, ";"))
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': .pragma expects a string and "
                       "';'", k->name);
  } else if (!is(lx, ".explicitcluster"))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': '%.*s' after the parameter "
                     "list is neither the body '{' (nor ';' of a declaration) nor a directive an "
                     ".entry takes %s", k->name, (int)(lx->len > 40 ? 40 : lx->len), lx->tok, takes);
  return GCL_OK;
}

/* The directives between the parameter list and the body, as ptxas 13.0 takes them (the PTX ISA's
 * performance-tuning and cluster directives):
 *   .maxntid N[,N[,N]]  .reqntid N[,N[,N]]  .maxnreg N  .minnctapersm N   (N >= 1)
 *   .reqnctapercluster N[,N[,N]]  .maxclusterrank N  .explicitcluster  .blocksareclusters
 *   .pragma "..." ;
 * Anything else there (.noreturn, .maxnctapersm, a name, ...) is a syntax error to ptxas and is
 * refused by name. Leaves lx on the `{` or `;` that ends the declaration; *count: the directives
 * read. */
static gcl_status read_directives(lexer *lx, gcl__image_kernel *k, const ptx_module *m,
                                  bool list, size_t *count) {
  bool here = !list; /* no parameter list: lx is on the first token after the name */
  directives_seen seen = {0};
  *count = 0;
  for (;; (*count)++) {
    if (!here && !next(lx))
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': the module ends before its "
                       "body '{' (or ';' of a declaration)", k->name);
    here = false;
    if (is(lx, "{") || is(lx, ";")) break;
    gcl_status s = read_directive(lx, k, m, &seen);
    if (s != GCL_OK) return s;
  }
  if (seen.maxntid && seen.reqntid)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': .maxntid and .reqntid cannot "
                     "both be given", k->name);
  if (seen.cluster && seen.rank)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': .reqnctapercluster and "
                     ".maxclusterrank cannot both be given", k->name);
  if (seen.blocks && !(seen.reqntid && seen.cluster))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': .blocksareclusters needs "
                     ".reqntid and .reqnctapercluster", k->name);
  return GCL_OK;
}

/* Reads the body starting at lx's `{` to its matching `}` (lx left there): k->waits is whether it
 * holds griddepcontrol.wait (cudaGridDependencySynchronize compiles to it). A body the module
 * ends in, or with an .entry inside (its braces do not match), is refused. */
static gcl_status read_body(lexer *lx, gcl__image_kernel *k) {
  int waits = 0;
  size_t depth = 1;
  bool entry = false;
  while (depth && !entry && next(lx)) {
    if (is(lx, "{")) depth++;
    else if (is(lx, "}")) depth--;
    else if (is(lx, "griddepcontrol.wait")) waits = 1;
    else entry = is(lx, ".entry");
  }
  if (depth)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s': its body is not closed (%zu '}' "
                     "missing) before %s", k->name, depth, entry ? "the next .entry"
                     : "the module ends");
  k->waits = waits;
  return GCL_OK;
}

/* Every .entry of the module by name, declared (`... ;`) or defined (`... { }`). A declaration
 * and its definition must agree in linkage and parameter types (ptxas: "Inconsistent
 * prototypes"); a later one without linkage takes the first's. A declaration is no kernel of the
 * module: an .extern one names another module's; any other must be defined here (ptxas refuses
 * "Unresolved extern function"). */
enum { LINK_NONE, LINK_VISIBLE, LINK_EXTERN, LINK_WEAK };
static const char *const link_names[] = {"no linkage", ".visible", ".extern", ".weak"};

typedef struct ptx_decl {
  char *name;
  ptx_param *params;
  size_t n;
  int linkage;
  bool defined;
} ptx_decl;

typedef struct ptx_decls {
  ptx_decl *d;
  size_t n, cap;
  gcl__nameset names; /* d[i].name -> i: a kernel's earlier declaration in constant time */
} ptx_decls;

static void decls_free(ptx_decls *ds) {
  for (size_t i = 0; i < ds->n; i++) gcl__free(ds->d[i].name), gcl__free(ds->d[i].params);
  gcl__free(ds->d);
  gcl__nameset_free(&ds->names);
}

/* Whether params (n) match the declaration's: the same PTX types, array sizes and alignments
 * (names may differ; .ptr and what follows it do not count, as for ptxas). */
static bool same_params(const ptx_decl *d, const ptx_param *params, size_t n) {
  if (d->n != n) return false;
  for (size_t i = 0; i < n; i++)
    if (strcmp(d->params[i].type, params[i].type) != 0 || d->params[i].count != params[i].count ||
        d->params[i].align != params[i].align)
      return false;
  return true;
}

/* Whether a later declaration or definition with linkage `later` fits the first one's: without
 * linkage it takes the first's (not .extern's: that names another module's kernel), with one it
 * must be the same (ptxas: "Inconsistent redefinition"). */
static bool same_linkage(int first, int later) {
  return later == LINK_NONE ? first != LINK_EXTERN : later == first;
}

/* Appends a declaration of name (params taken: *params becomes NULL) to decls; *d is it. */
static gcl_status decls_add(ptx_decls *decls, const char *name, ptx_param **params, size_t n,
                            int linkage, ptx_decl **d) {
  if (decls->n == decls->cap) {
    size_t cap = decls->cap ? 2 * decls->cap : 8;
    ptx_decl *grown = gcl__realloc(decls->d, cap * sizeof *grown);
    if (!grown) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "ptx: out of memory");
    decls->d = grown, decls->cap = cap;
  }
  char *copy = gcl__malloc(strlen(name) + 1);
  if (copy) strcpy(copy, name);
  if (!copy || !gcl__nameset_add(&decls->names, copy, strlen(copy), decls->n)) {
    gcl__free(copy);
    return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "ptx: out of memory");
  }
  *d = &decls->d[decls->n++];
  **d = (ptx_decl){.name = copy, .params = *params, .n = n, .linkage = linkage};
  *params = NULL;
  return GCL_OK;
}

/* Whether an .entry called name -- a definition (body) or a declaration, with `directives`
 * directives, `linkage` and params (n) -- may follow d, the earlier one of that name (NULL: none). */
static gcl_status entry_fits(const char *name, const ptx_decl *d, bool body, size_t directives,
                             int linkage, const ptx_param *params, size_t n) {
  if (!body && directives)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%s': a declaration (ending in ';') takes "
                     "no directives (they go on the definition)", name);
  if (body && linkage == LINK_EXTERN)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%s': an .extern .entry is another "
                     "module's and has no body here", name);
  if (d && d->defined)
    return gcl__fail(GCL_ERROR_BAD_IMAGE, body ? "ptx: kernel '%s' is defined twice"
                     : "ptx: kernel '%s' is declared after its definition", name);
  if (d && (!same_linkage(d->linkage, linkage) || !same_params(d, params, n)))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%s': this %s (%s, %zu parameters) does "
                     "not match its declaration before (%s, %zu parameters): linkage and parameter "
                     "types must be the same", name, body ? "definition" : "declaration",
                     link_names[linkage], n, link_names[d->linkage], d->n);
  return GCL_OK;
}

static gcl_status read_entry(lexer *lx, gcl_image *img, ptx_decls *decls, int linkage,
                             const ptx_module *m) {
  if (!next(lx) || !identifier(lx->tok, lx->len))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: .entry is not followed by a kernel name (an "
                     "identifier: [a-zA-Z][a-zA-Z0-9_$]* or [_$%%][a-zA-Z0-9_$]+)");
  size_t at;
  ptx_decl *d = gcl__nameset_find(&decls->names, lx->tok, lx->len, &at) ? &decls->d[at] : NULL;
  gcl__image_kernel *k;
  gcl_status s = gcl__image_add_kernel(img, lx->tok, lx->len, 0, &k);
  if (s != GCL_OK) return s;
  if (!next(lx))
    return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%s' ends after its name", k->name);
  ptx_param *params = NULL;
  size_t n = 0, directives = 0;
  bool list = is(lx, "("); /* else a ')' there is a stray token, not the list's end */
  if ((s = read_params(lx, k, m, &params, &n)) != GCL_OK) return s;
  if ((s = read_directives(lx, k, m, list, &directives)) != GCL_OK) goto out;
  bool body = is(lx, "{");
  if ((s = entry_fits(k->name, d, body, directives, linkage, params, n)) != GCL_OK) goto out;
  if (!d && (s = decls_add(decls, k->name, &params, n, linkage, &d)) != GCL_OK) goto out;
  if (body) {
    d->defined = true;
    s = read_body(lx, k);
  } else { /* a declaration: no kernel of this module */
    gcl__free(k->name);
    gcl__free(k->params);
    img->count--;
  }
out:
  gcl__free(params);
  return s;
}

/* `.version MAJOR.MINOR` into 10 * major + minor (minor < 10). */
static gcl_status read_version(lexer *lx, int *version) {
  const char *t = lx->tok;
  if (next(lx) && lx->len == 3 && isdigit((unsigned char)lx->tok[0]) && lx->tok[1] == '.' &&
      isdigit((unsigned char)lx->tok[2])) {
    *version = 10 * (lx->tok[0] - '0') + (lx->tok[2] - '0');
    return GCL_OK;
  }
  (void)t;
  return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: .version is not followed by MAJOR.MINOR");
}

/* The module's `.target sm_NN` (the architecture it was written for; with sm 0 the one offsets
 * are computed for): NN of the token after .target, *sm left unchanged when it is not sm_NN. */
static void target_sm(lexer *lx, int *sm) {
  if (!next(lx) || lx->len < 5 || memcmp(lx->tok, "sm_", 3) != 0) return;
  int v = 0;
  for (size_t i = 3; i < lx->len && isdigit((unsigned char)lx->tok[i]) && v < 1000; i++)
    v = 10 * v + (lx->tok[i] - '0');
  if (v >= 10 && v <= 255) *sm = v;
}

/* ptxas reads ASCII only ("Unexpected non-ASCII character", comments and strings included):
 * a byte above 0x7F anywhere is refused, so "k\xc3\xa9(" is never read as kernel 'k'. */
static gcl_status check_ascii(const char *p, const char *end) {
  unsigned line = 1;
  for (const char *c = p; c < end; c++)
    if (*c == '\n') line++;
    else if ((unsigned char)*c >= 0x80)
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: line %u holds the non-ASCII byte 0x%02X (PTX is "
                       "ASCII: an identifier is [a-zA-Z][a-zA-Z0-9_$]* or [_$%%][a-zA-Z0-9_$]+)",
                       line, (unsigned char)*c);
  return GCL_OK;
}

/* Every declaration that is not .extern was defined in the module (ptxas: "Unresolved extern
 * function"). */
static gcl_status check_defined(const ptx_decls *decls) {
  for (size_t i = 0; i < decls->n; i++)
    if (!decls->d[i].defined && decls->d[i].linkage != LINK_EXTERN)
      return gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: kernel '%.200s' is declared (%s) but not "
                       "defined in this module (only an .extern declaration may name another "
                       "module's)", decls->d[i].name, link_names[decls->d[i].linkage]);
  return GCL_OK;
}

gcl_status gcl__ptx_read(gcl_image *img, gcl__bytes data, int sm) {
  const char *text = (const char *)data.p;
  lexer lx = {.p = text, .end = text + strnlen(text, data.n)}; /* text ends at a NUL if any */
  gcl_status s = check_ascii(lx.p, lx.end);
  if (s != GCL_OK) return s;
  bool version = false, own = sm == 0, elsewhere = false;
  size_t first = img->count;
  ptx_decls decls = {0};
  int linkage = LINK_NONE; /* of the token before: .visible, .extern, .weak */
  if (sm == 0) sm = 90;
  ptx_module m = {.version = 0, .sm = sm};
  int earlier = LINK_NONE; /* two tokens before */
  size_t depth = 0;         /* of { } outside the kernels' bodies (.func bodies, initializers) */
  while (s == GCL_OK && next(&lx)) {
    if (is(&lx, "{")) depth++;
    else if (is(&lx, "}") && depth) depth--;
    int before = linkage;
    linkage = is(&lx, ".visible") ? LINK_VISIBLE : is(&lx, ".extern") ? LINK_EXTERN
              : is(&lx, ".weak") ? LINK_WEAK : LINK_NONE;
    if (is(&lx, ".version") && !version) {
      version = true;
      s = read_version(&lx, &m.version);
    } else if (is(&lx, "griddepcontrol.wait")) elsewhere = true; /* in a .func an entry may call */
    else if (is(&lx, ".target")) {
      target_sm(&lx, &m.target);
      if (own && m.target) m.sm = m.target;
    }
    else if (is(&lx, ".entry") && depth)
      s = gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: an .entry inside a body or initializer (%zu '}' "
                    "missing before it)", depth);
    else if (is(&lx, ".entry") && !version)
      s = gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: .entry before the .version directive");
    else if (is(&lx, ".entry") && before != LINK_NONE && earlier != LINK_NONE)
      s = gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: '%s %s .entry': one linkage directive at most",
                    link_names[earlier], link_names[before]);
    else if (is(&lx, ".entry")) s = read_entry(&lx, img, &decls, before, &m);
    earlier = before;
  }
  if (s == GCL_OK && depth)
    s = gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: the module ends inside a body or initializer (%zu "
                  "'}' missing)", depth);
  if (s == GCL_OK) s = check_defined(&decls);
  decls_free(&decls);
  sm = m.sm;
  if (s == GCL_OK && !version) s = gcl__fail(GCL_ERROR_BAD_IMAGE, "ptx: no .version directive");
  if (s != GCL_OK) return s;
  for (size_t k = first; k < img->count; k++) /* griddepcontrol.wait in a .func: unknown */
    if (img->kernels[k].waits == 0 && elsewhere) img->kernels[k].waits = -1;
  img->format = GCL_IMAGE_PTX;
  img->sm = sm;
  return GCL_OK;
}
