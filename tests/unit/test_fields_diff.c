/* Fields differential test (issues 14 and 25): random kernels whose parameters are nested structs
 * (tests/common/sig_gen.c, mode DG_FIELDS: named and unnamed members, arrays of structs, tensor maps
 * 128/64/lowered/raised, bytes(N) align(A), over-aligned scalars, raised struct alignment -- all
 * alignments up to 4096 -- every scalar and pointer kind, depth up to 4).
 *  - leaves_equal_cc: every leaf gcl_layout_visit_leaves lists has the generator's path, resolves
 *    again by that path (gcl_layout_field) to the same field, formats back to it
 *    (gcl_layout_field_path), and has the offset and size that the system C compiler gives the
 *    same struct (offsetof/sizeof in a generated C11 program); every leaf is then set through its
 *    field (typed setters for scalars, set_field_ptr for pointers, raw for maps and bytes) and the
 *    packed leaf bytes must equal the C struct filled with the same values.
 *  - params_equal_nvrtc: the same structs as CUDA C++ kernels compiled by NVRTC for every
 *    architecture it lists: every parameter offset and size equals the cubin's, and every leaf
 *    size is checked on the device side too (static_asserts from the engine's numbers).
 * A fixed seed and a fresh one each run (GCL_FIELDS_SEED=<seed> replays). CPU only. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/sig_gen.h"
#include "../common/image_test_util.h"

#define PER_SEED 100
#define MAX_REPORTED 12
#define FIXED_SEED 20261202ull


typedef struct lrec { size_t param, rel, size; } lrec; /* the engine's view of a leaf */

typedef struct tcase {
  fg_case g;
  gcl_signature *sig;
  gcl_layout *layout; /* sm_90 */
  lrec *leaves;       /* one per generated leaf */
} tcase;

typedef struct suite {
  uint64_t seed;
  tcase cases[PER_SEED];
  size_t mismatches;
  char report[MAX_REPORTED][1024];
} suite;

static void bad(suite *s, const tcase *c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bad(suite *s, const tcase *c, const char *fmt, ...) {
  if (s->mismatches < MAX_REPORTED) {
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(s->report[s->mismatches], sizeof s->report[0], "seed %llu %s (%.300s): %s",
             (unsigned long long)s->seed, c->g.name, c->g.sig.p, what);
  }
  s->mismatches++;
}

typedef struct visit_ctx { suite *s; tcase *c; size_t n; } visit_ctx;

/* Leaf n of the visit against generated leaf n: path, lookup by path, path round trip. */
static int on_leaf(const gcl_field *f, const char *path, void *user) {
  visit_ctx *v = user;
  if (v->n >= v->c->g.nleaves) {
    bad(v->s, v->c, "visit lists more leaves than the %zu generated (extra '%s')", v->c->g.nleaves, path);
    return 1;
  }
  const fg_leaf *l = &v->c->g.leaves[v->n];
  size_t poff = 0, psize = 0;
  gcl_layout_param(v->c->layout, f->param, &poff, &psize, NULL);
  v->c->leaves[v->n] = (lrec){f->param, f->offset - poff, f->size};
  v->n++;
  if (strcmp(path, l->path) || f->param != l->param) {
    bad(v->s, v->c, "leaf %zu: visit says '%s' (param %zu), expected '%s' (param %zu)", v->n - 1,
        path, f->param, l->path, l->param);
    return 1;
  }
  if (f->offset < poff || f->offset + f->size > poff + psize)
    bad(v->s, v->c, "leaf '%s' at %zu+%zu lies outside its parameter %zu+%zu", path, f->offset, f->size, poff, psize);
  gcl_field g;
  char back[256];
  if (gcl_layout_field(v->c->layout, path, &g) != GCL_OK)
    bad(v->s, v->c, "gcl_layout_field('%s') fails: %s", path, gcl_last_error());
  else if (g.offset != f->offset || g.size != f->size || g.param != f->param || g.info.kind != f->info.kind)
    bad(v->s, v->c, "'%s': by path offset %zu size %zu, visited %zu %zu", path, g.offset, g.size, f->offset, f->size);
  else if (gcl_layout_field_path(v->c->layout, &g, back, sizeof back, NULL) != GCL_OK || strcmp(back, path))
    bad(v->s, v->c, "'%s' formats back as '%s'", path, back);
  return 0;
}

/* Sets every leaf by its field; the args must then be complete. */
static gcl_args *fill_args(suite *s, tcase *c) {
  gcl_args *a = NULL;
  cr_assert_eq(gcl_args_create(c->layout, &a), GCL_OK, "%s", gcl_last_error());
  for (size_t i = 0; i < c->g.nleaves; i++) {
    const fg_leaf *l = &c->g.leaves[i];
    gcl_field f;
    gcl_status st = gcl_layout_field(c->layout, l->path, &f);
    if (!st) st = fg_set_leaf(a, &f, l);
    if (st) bad(s, c, "setting '%s': %s: %s", l->path, gcl_status_name(st), gcl_last_error());
    if (!st && !gcl_args_field_is_set(a, &f)) bad(s, c, "'%s' set but not counted set", l->path);
  }
  return a;
}

static void make_cases(suite *s) {
  uint64_t rng = s->seed;
  for (size_t i = 0; i < PER_SEED; i++) {
    tcase *c = &s->cases[i];
    char name[24];
    snprintf(name, sizeof name, "k%zu", i);
    fg_case_make(&rng, name, &c->g);
    gcl_status st = gcl_signature_parse(c->g.sig.p, &c->sig);
    cr_assert_eq(st, GCL_OK, "seed %llu %s: generated signature does not parse: %s\n%s",
                 (unsigned long long)s->seed, name, gcl_last_error(), c->g.sig.p);
    st = gcl_layout_create(c->sig, 90, &c->layout);
    cr_assert_eq(st, GCL_OK, "seed %llu %s: %s\n%s", (unsigned long long)s->seed, name, gcl_last_error(), c->g.sig.p);
    c->leaves = calloc(c->g.nleaves, sizeof *c->leaves);
    visit_ctx v = {s, c, 0};
    cr_assert_eq(gcl_layout_visit_leaves(c->layout, on_leaf, &v), GCL_OK);
    if (v.n != c->g.nleaves) bad(s, c, "visit lists %zu leaves, %zu generated", v.n, c->g.nleaves);
  }
}

static void free_cases(suite *s) {
  for (size_t i = 0; i < PER_SEED; i++) {
    gcl_layout_destroy(s->cases[i].layout);
    gcl_signature_destroy(s->cases[i].sig);
    free(s->cases[i].leaves);
    fg_case_free(&s->cases[i].g);
  }
}

static void finish(suite *s, const char *what) {
  for (size_t m = 0; m < s->mismatches && m < MAX_REPORTED; m++) cr_log_error("%s", s->report[m]);
  cr_expect_eq(s->mismatches, 0, "seed %llu: %zu mismatches (%s; see the log above)",
               (unsigned long long)s->seed, s->mismatches, what);
}

static uint64_t fresh_seed(void) {
  const char *env = getenv("GCL_FIELDS_SEED");
  if (env) return strtoull(env, NULL, 10);
  return (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
}


/* --- the C compiler's view ------------------------------------------------------------------ */

/* One C11 program for the whole suite: per case, its structs filled leaf by leaf, then per leaf
 * "L case leaf offset size" and per parameter "B case param hex...". */
static void c_program(suite *s, dg_buf *src) {
  dg_buf_printf(src, "%s", fg_prelude(0));
  dg_buf_printf(src, "static void out(int k, int p, const void *v, size_t n) {\n"
                     "  const unsigned char *b = v;\n  printf(\"B %%d %%d \", k, p);\n"
                     "  for (size_t i = 0; i < n; i++) printf(\"%%02x\", b[i]);\n"
                     "  printf(\"\\n\");\n}\n");
  for (size_t k = 0; k < PER_SEED; k++) {
    const fg_case *g = &s->cases[k].g;
    dg_buf_printf(src, "%s\nstatic void case_%zu(void) {\n", g->decls.p ? g->decls.p : "", k);
    for (size_t p = 0; p < g->nparams; p++)
      dg_buf_printf(src, "  %s v%zu;\n  memset(&v%zu, 0, sizeof v%zu);\n", g->ptype[p], p, p, p);
    for (size_t i = 0; i < g->nleaves; i++) fg_emit_fill(src, &g->leaves[i]);
    for (size_t i = 0; i < g->nleaves; i++) {
      const fg_leaf *l = &g->leaves[i];
      if (l->cmember[0])
        dg_buf_printf(src, "  printf(\"L %zu %zu %%zu %%zu\\n\", offsetof(%s, %s), sizeof %s);\n",
                      k, i, g->ptype[l->param], l->cmember, l->cwrap);
      else
        dg_buf_printf(src, "  printf(\"L %zu %zu 0 %%zu\\n\", sizeof %s);\n", k, i, l->cwrap);
    }
    for (size_t p = 0; p < g->nparams; p++) dg_buf_printf(src, "  out(%zu, %zu, &v%zu, sizeof v%zu);\n", k, p, p, p);
    dg_buf_printf(src, "}\n");
  }
  dg_buf_printf(src, "int main(void) {\n");
  for (size_t k = 0; k < PER_SEED; k++) dg_buf_printf(src, "  case_%zu();\n", k);
  dg_buf_printf(src, "  return 0;\n}\n");
}

typedef struct cview {
  size_t *off[PER_SEED], *size[PER_SEED];
  unsigned char *bytes[PER_SEED][16];
  size_t nbytes[PER_SEED][16];
} cview;

static int hexval(char ch) { return ch <= '9' ? ch - '0' : ch - 'a' + 10; }

/* Reads the program's output into v; false (with a message) when it is not what was printed. */
static bool read_cview(suite *s, FILE *f, cview *v) {
  static char line[300000];
  for (size_t k = 0; k < PER_SEED; k++) {
    v->off[k] = calloc(s->cases[k].g.nleaves + 1, sizeof(size_t));
    v->size[k] = calloc(s->cases[k].g.nleaves + 1, sizeof(size_t));
  }
  while (fgets(line, sizeof line, f)) {
    size_t k, i, a, b;
    int used = 0;
    if (sscanf(line, "L %zu %zu %zu %zu", &k, &i, &a, &b) == 4 && k < PER_SEED && i < s->cases[k].g.nleaves) {
      v->off[k][i] = a, v->size[k][i] = b;
    } else if (sscanf(line, "B %zu %zu %n", &k, &i, &used) == 2 && k < PER_SEED && i < 16) {
      size_t n = (strlen(line + used) - 1) / 2;
      v->bytes[k][i] = malloc(n + 1);
      v->nbytes[k][i] = n;
      for (size_t j = 0; j < n; j++)
        v->bytes[k][i][j] = (unsigned char)(hexval(line[used + 2 * j]) * 16 + hexval(line[used + 2 * j + 1]));
    } else {
      cr_log_error("seed %llu: unexpected line from the C program: %.200s", (unsigned long long)s->seed, line);
      return false;
    }
  }
  return true;
}

static void free_cview(cview *v) {
  for (size_t k = 0; k < PER_SEED; k++) {
    free(v->off[k]);
    free(v->size[k]);
    for (size_t p = 0; p < 16; p++) free(v->bytes[k][p]);
  }
}

/* Offsets, sizes and (after filling the args) the leaf bytes of case k against C's. */
static void compare_case(suite *s, tcase *c, const cview *v, size_t k) {
  for (size_t i = 0; i < c->g.nleaves; i++) {
    const fg_leaf *l = &c->g.leaves[i];
    if (v->off[k][i] != c->leaves[i].rel || v->size[k][i] != c->leaves[i].size)
      bad(s, c, "leaf '%s': engine offset %zu size %zu, C offsetof %zu sizeof %zu", l->path,
          c->leaves[i].rel, c->leaves[i].size, v->off[k][i], v->size[k][i]);
  }
  gcl_args *a = fill_args(s, c);
  const void *data = NULL;
  size_t n = 0;
  if (gcl_args_buffer(a, &data, &n) != GCL_OK) {
    bad(s, c, "every leaf set, yet gcl_args_buffer: %s", gcl_last_error());
    gcl_args_destroy(a);
    return;
  }
  for (size_t i = 0; i < c->g.nleaves; i++) {
    const fg_leaf *l = &c->g.leaves[i];
    size_t poff = 0;
    gcl_layout_param(c->layout, l->param, &poff, NULL, NULL);
    const unsigned char *mine = (const unsigned char *)data + poff + c->leaves[i].rel;
    const unsigned char *theirs = v->bytes[k][l->param];
    if (!theirs || v->off[k][i] + l->bytes > v->nbytes[k][l->param]) {
      bad(s, c, "leaf '%s': the C program printed no bytes for it", l->path);
      continue;
    }
    if (memcmp(mine, theirs + v->off[k][i], l->bytes))
      bad(s, c, "leaf '%s': packed bytes differ from the C struct's (%zu bytes at %zu)", l->path,
          l->bytes, c->leaves[i].rel);
  }
  gcl_args_destroy(a);
}

static void run_cc(uint64_t seed, const char *cc) {
  suite *s = calloc(1, sizeof *s);
  s->seed = seed;
  make_cases(s);
  char dir[] = "/tmp/gcl_fields_XXXXXX", path[256], cmd[1024];
  cr_assert(mkdtemp(dir) != NULL, "mkdtemp failed");
  dg_buf src = {0};
  c_program(s, &src);
  snprintf(path, sizeof path, "%s/fields.c", dir);
  FILE *f = fopen(path, "w");
  cr_assert(f != NULL);
  fputs(src.p, f);
  fclose(f);
  dg_buf_free(&src);
  snprintf(cmd, sizeof cmd, "%s -std=c11 -O0 -w -o %s/fields %s 2>%s/cc.log", cc, dir, path, dir);
  int rc = system(cmd);
  cr_assert_eq(rc, 0, "seed %llu: the C program does not compile (kept in %s; see %s/cc.log)",
               (unsigned long long)seed, dir, dir);
  snprintf(cmd, sizeof cmd, "%s/fields", dir);
  f = popen(cmd, "r");
  cr_assert(f != NULL);
  cview *v = calloc(1, sizeof *v);
  bool ok = read_cview(s, f, v);
  cr_assert(pclose(f) == 0 && ok, "seed %llu: the C program failed (kept in %s)", (unsigned long long)seed, dir);
  size_t leaves = 0;
  for (size_t k = 0; k < PER_SEED; k++) compare_case(s, &s->cases[k], v, k), leaves += s->cases[k].g.nleaves;
  cr_log_info("seed %llu: %d structs, %zu leaves compared with %s", (unsigned long long)seed, PER_SEED, leaves, cc);
  finish(s, "engine vs C compiler");
  if (!s->mismatches) {
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) cr_log_warn("could not remove %s", dir);
  } else {
    cr_log_error("seed %llu: C program kept in %s", (unsigned long long)seed, dir);
  }
  free_cview(v);
  free(v);
  free_cases(s);
  free(s);
}

Test(fields_diff, leaves_equal_cc, .timeout = 120) {
  const char *cc = getenv("CC") ? getenv("CC") : "cc";
  char probe[256];
  snprintf(probe, sizeof probe, "command -v %s >/dev/null 2>&1", cc);
  if (system(probe) != 0) cr_skip_test("no C compiler '%s' on PATH: leaf layouts not compared", cc);
  uint64_t fresh = fresh_seed();
  cr_log_info("fields seeds: %llu (fixed) and %llu (fresh; GCL_FIELDS_SEED=%llu replays)",
              FIXED_SEED, (unsigned long long)fresh, (unsigned long long)fresh);
  run_cc(FIXED_SEED, cc);
  run_cc(fresh, cc);
}

/* --- NVRTC's view ---------------------------------------------------------------------------- */

/* Case k as CUDA C++: its structs, static_asserts of the engine's leaf sizes, and an empty
 * kernel. (NVRTC has no usable __builtin_offsetof here -- "type name is not allowed" -- so leaf
 * offsets on the device are left to cc above and to the GPU echo test.) */
static void cuda_case(const tcase *c, dg_buf *src) {
  const fg_case *g = &c->g;
  dg_buf_printf(src, "%s", g->decls.p ? g->decls.p : "");
  for (size_t i = 0; i < g->nleaves; i++) {
    const fg_leaf *l = &g->leaves[i];
    const char *t = g->ptype[l->param];
    if (l->cmember[0])
      dg_buf_printf(src, "static_assert(sizeof(((%s *)0)->%s) == %zu, \"%s: leaf '%s'\");\n", t,
                    l->cmember, c->leaves[i].size, g->name, l->path);
    else
      dg_buf_printf(src, "static_assert(sizeof(%s) == %zu, \"%s: leaf '%s'\");\n", t,
                    c->leaves[i].size, g->name, l->path);
  }
  dg_buf_printf(src, "extern \"C\" __global__ void %s(%s) {}\n", g->name, g->params.p);
}

static void compare_params(suite *s, const tcase *c, const gcl_image *img, int sm) {
  size_t k;
  gcl_image_kernel_info info;
  gcl_layout *l = NULL;
  if (gcl_image_find_kernel(img, c->g.name, &k) || gcl_image_kernel(img, k, &info))
    return bad(s, c, "sm_%d: kernel missing from the cubin", sm);
  if (gcl_layout_create(c->sig, sm, &l) != GCL_OK)
    return bad(s, c, "sm_%d: NVRTC compiles it, the engine says: %s", sm, gcl_last_error());
  if (info.param_count != gcl_layout_count(l)) {
    bad(s, c, "sm_%d: cubin has %zu params, engine %zu", sm, info.param_count, gcl_layout_count(l));
  } else {
    for (size_t p = 0; p < info.param_count; p++) {
      size_t co, cs, lo, ls;
      gcl_image_param(img, k, p, &co, &cs, NULL);
      gcl_layout_param(l, p, &lo, &ls, NULL);
      if (co != lo || cs != ls)
        bad(s, c, "sm_%d param %zu: cubin offset %zu size %zu, engine offset %zu size %zu", sm, p,
            co, cs, lo, ls);
    }
    if (info.param_bytes != gcl_layout_size(l))
      bad(s, c, "sm_%d: CBANK_PARAM_SIZE %zu, engine size %zu", sm, info.param_bytes, gcl_layout_size(l));
  }
  gcl_layout_destroy(l);
}

/* Cases [from, from + n) in one NVRTC program; on failure halved down to the case it rejects. */
static size_t compile_range(suite *s, size_t from, size_t n, int sm) {
  dg_buf src = {0};
  dg_buf_printf(&src, "%s", fg_prelude(1));
  for (size_t i = from; i < from + n; i++) cuda_case(&s->cases[i], &src);
  unsigned char *cubin = NULL;
  size_t size = 0, compiled = 0;
  char *log = NULL;
  nvrtcResult r = itu_nvrtc_compile(src.p, sm, &cubin, &size, NULL, &log);
  dg_buf_free(&src);
  if (r != NVRTC_SUCCESS) {
    if (n == 1) bad(s, &s->cases[from], "sm_%d: NVRTC rejects it: %.400s", sm, log ? log : "");
    free(log);
    if (n == 1) return 0;
    return compile_range(s, from, n / 2, sm) + compile_range(s, from + n / 2, n - n / 2, sm);
  }
  gcl_image *img = NULL;
  if (gcl_image_parse(cubin, size, 0, &img) != GCL_OK)
    bad(s, &s->cases[from], "sm_%d: cubin unreadable: %s", sm, gcl_last_error());
  for (size_t i = from; img && i < from + n; i++) compare_params(s, &s->cases[i], img, sm), compiled++;
  gcl_image_destroy(img);
  free(cubin);
  return compiled;
}

static void run_nvrtc(uint64_t seed) {
  suite *s = calloc(1, sizeof *s);
  s->seed = seed;
  make_cases(s);
  int archs[32];
  size_t narchs = itu_nvrtc_archs(archs, 32);
  for (size_t a = 0; a < narchs; a++) {
    size_t n = compile_range(s, 0, PER_SEED, archs[a]);
    printf("fields seed %llu sm_%d: %zu of %d kernels compiled and compared\n",
           (unsigned long long)seed, archs[a], n, PER_SEED);
  }
  finish(s, "engine vs NVRTC");
  free_cases(s);
  free(s);
}

/* One seed per test (a process each): see test_differential.c on NVRTC's memory. */
Test(fields_diff, params_equal_nvrtc_fixed_seed, .timeout = 170) {
  itu_require_nvrtc();
  run_nvrtc(FIXED_SEED);
}

Test(fields_diff, params_equal_nvrtc_fresh_seed, .timeout = 170) {
  itu_require_nvrtc();
  uint64_t fresh = fresh_seed();
  printf("fields seed %llu (fresh; GCL_FIELDS_SEED=%llu replays)\n", (unsigned long long)fresh,
         (unsigned long long)fresh);
  run_nvrtc(fresh);
}

/* Found by this suite's probes: a typed setter on `bytes(3) align(8)` compared the value with
 * the padded size (8), so gcl_args_set_field_u64 was accepted and 5 of its bytes fell into
 * padding; a u32 on `bytes(4) align(8)` was refused. The N of bytes(N) is what must match. */
Test(fields_diff, typed_setters_on_padded_bytes_match_n) {
  gcl_signature *sig = NULL;
  gcl_layout *l = NULL;
  gcl_args *a = NULL;
  gcl_field z, w;
  cr_assert_eq(gcl_signature_parse("grid_constant struct{u8 c, bytes(3) align(8) z, bytes(4) align(8) w} g", &sig), GCL_OK);
  cr_assert_eq(gcl_layout_create(sig, 90, &l), GCL_OK);
  cr_assert_eq(gcl_args_create(l, &a), GCL_OK);
  cr_assert_eq(gcl_layout_field(l, "g.z", &z), GCL_OK);
  cr_assert_eq(gcl_layout_field(l, "g.w", &w), GCL_OK);
  cr_expect_eq(z.size, 8);
  cr_expect_eq(gcl_args_set_field_u64(a, &z, 1), GCL_ERROR_TYPE_MISMATCH, "u64 into bytes(3) align(8)");
  cr_expect(!gcl_args_field_is_set(a, &z), "a refused set changes nothing");
  cr_expect_eq(gcl_args_set_field_u32(a, &w, 0x01020304u), GCL_OK, "u32 into bytes(4) align(8): %s", gcl_last_error());
  cr_expect(gcl_args_field_is_set(a, &w));
  gcl_args_destroy(a);
  gcl_layout_destroy(l);
  gcl_signature_destroy(sig);
}
