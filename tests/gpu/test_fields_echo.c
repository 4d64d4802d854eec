/* GPU fields echo (issue 14): random kernels from the fields generator (nested structs with named
 * and unnamed members, arrays of structs and of tensor maps, bytes(N) align(k), raised struct
 * alignment, every scalar and pointer kind), each reading EVERY leaf through the struct as CUDA
 * C++ declares it -- every other leaf with its array subscripts taken at run time from a
 * separate `const i32* ix` array -- and writing the leaves' bytes densely, in order, to `u8* out`.
 * The host sets every leaf by field (typed setters, set_field_ptr, raw maps and bytes); the echo
 * must equal the values byte for byte, and nothing past them may be written. A fixed seed and a
 * fresh one (GCL_FIELDS_ECHO_SEED=<seed> replays). */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/sig_gen.h"
#include "gclaunch/gclaunch.h"

#define PER_SEED 60
#define BATCH 30
#define GUARD 64
#define POISON 0xcd
#define MAX_REPORTED 10
#define FIXED_SEED 20261203ull
#define MAX_OUT 65536
#define MAX_IX 16384

typedef struct ecase {
  fg_case g;
  dg_buf code, fullsig;
  int ix[MAX_IX]; /* the subscripts the kernel reads at run time */
  size_t nix, total;
} ecase;

static gcl_context *ctx;
static size_t failures, launches, leaves_checked, runtime_subscripts;

static void setup(void) {
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "gcl_context_create: %s", gcl_last_error());
}
static void teardown(void) { gcl_context_destroy(ctx); }
TestSuite(fields_echo, .init = setup, .fini = teardown);

static void fail(uint64_t seed, const ecase *c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(uint64_t seed, const ecase *c, const char *fmt, ...) {
  if (failures++ >= MAX_REPORTED) return;
  char what[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  cr_log_error("seed %llu %s (%.400s): %s", (unsigned long long)seed, c->g.name, c->g.sig.p, what);
}

/* expr with each "[N]" turned into "[ix[j]]" (N recorded as ix[j]) when runtime is set. */
static void subscripts(ecase *c, const char *expr, bool runtime, dg_buf *out) {
  for (const char *p = expr; *p; p++) {
    if (*p != '[' || !runtime || c->nix >= MAX_IX) {
      dg_buf_printf(out, "%c", *p);
      continue;
    }
    c->ix[c->nix] = (int)strtol(p + 1, NULL, 10);
    dg_buf_printf(out, "[ix[%zu]]", c->nix++);
    runtime_subscripts++;
    p = strchr(p, ']');
  }
}

/* The kernel: one byte loop per leaf, reading through the parameter variables. */
static void make_kernel(ecase *c) {
  dg_buf_printf(&c->code, "%sextern \"C\" __global__ void %s(%s, const int *ix, unsigned char *out) {\n",
                c->g.decls.p ? c->g.decls.p : "", c->g.name, c->g.params.p);
  dg_buf_printf(&c->fullsig, "%s, const i32* ix, u8* out", c->g.sig.p);
  size_t at = 0;
  for (size_t i = 0; i < c->g.nleaves; i++) {
    const fg_leaf *l = &c->g.leaves[i];
    dg_buf_printf(&c->code, "  echo(out + %zu, &(", at);
    subscripts(c, l->cexpr, i % 2 == 1, &c->code);
    dg_buf_printf(&c->code, "), %zu);\n", l->bytes);
    at += l->bytes;
  }
  dg_buf_printf(&c->code, "}\n");
  c->total = at;
}

static const char echo_fn[] =
    "__device__ __forceinline__ void echo(unsigned char *d, const void *s, unsigned n) {\n"
    "  const unsigned char *b = (const unsigned char *)s;\n"
    "  for (unsigned i = 0; i < n; i++) d[i] = b[i];\n}\n";

/* Sets every leaf by field plus ix and out, launches one thread, compares every byte. */
static void run_case(uint64_t seed, ecase *c, gcl_kernel *k, uint64_t ix, uint64_t out,
                     unsigned char *want, unsigned char *got) {
  const gcl_layout *l = gcl_kernel_layout(k);
  gcl_args *a = NULL;
  cr_assert_eq(gcl_args_create(l, &a), GCL_OK, "%s", gcl_last_error());
  size_t at = 0;
  for (size_t i = 0; i < c->g.nleaves; i++) {
    const fg_leaf *lf = &c->g.leaves[i];
    gcl_field f;
    gcl_status s = gcl_layout_field(l, lf->path, &f);
    if (!s) s = fg_set_leaf(a, &f, lf);
    if (s) return fail(seed, c, "setting '%s': %s", lf->path, gcl_last_error()), gcl_args_destroy(a);
    memcpy(want + at, lf->value, lf->bytes);
    at += lf->bytes;
  }
  size_t n = gcl_layout_count(l);
  cr_assert_eq(gcl_mem_upload(ctx, ix, c->ix, (c->nix ? c->nix : 1) * sizeof(int)), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_ptr(a, n - 2, ix), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_ptr(a, n - 1, out), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_fill_u8(ctx, out, POISON, c->total + GUARD), GCL_OK, "%s", gcl_last_error());
  gcl_launch_config cfg = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
  gcl_status s = gcl_launch(k, &cfg, a);
  if (!s) s = gcl_context_synchronize(ctx);
  cr_assert_eq(s, GCL_OK, "seed %llu %s: launch: %s", (unsigned long long)seed, c->g.name, gcl_last_error());
  cr_assert_eq(gcl_mem_download(ctx, got, out, c->total + GUARD), GCL_OK, "%s", gcl_last_error());
  launches++;
  at = 0;
  for (size_t i = 0; i < c->g.nleaves; i++) {
    const fg_leaf *lf = &c->g.leaves[i];
    leaves_checked++;
    for (size_t b = 0; b < lf->bytes; b++)
      if (got[at + b] != want[at + b]) {
        fail(seed, c, "leaf '%s' (%s subscripts), byte %zu of %zu: got 0x%02x, set 0x%02x", lf->path,
             i % 2 ? "run-time" : "constant", b, lf->bytes, got[at + b], want[at + b]);
        break;
      }
    at += lf->bytes;
  }
  for (size_t b = c->total; b < c->total + GUARD; b++)
    if (got[b] != POISON) {
      fail(seed, c, "the kernel wrote past its %zu echo bytes (byte %zu)", c->total, b);
      break;
    }
  gcl_args_destroy(a);
}

static void run_batch(uint64_t seed, ecase *cases, size_t n, uint64_t ix, uint64_t out,
                      unsigned char *want, unsigned char *got) {
  dg_buf src = {0};
  dg_buf_printf(&src, "%s%s", fg_prelude(1), echo_fn);
  for (size_t i = 0; i < n; i++) dg_buf_printf(&src, "%s", cases[i].code.p);
  gcl_module *m = NULL;
  gcl_status s = gcl_module_compile(ctx, src.p, "fields_echo.cu", NULL, 0, &m);
  dg_buf_free(&src);
  if (s) return fail(seed, &cases[0], "the batch does not compile: %.2000s", gcl_last_error());
  for (size_t i = 0; i < n; i++) {
    gcl_kernel *k = NULL;
    if (gcl_module_find_kernel(m, cases[i].g.name, cases[i].fullsig.p, &k) != GCL_OK) {
      fail(seed, &cases[i], "gcl_module_find_kernel with the signature: %s", gcl_last_error());
      continue;
    }
    run_case(seed, &cases[i], k, ix, out, want, got);
  }
  gcl_module_destroy(m);
}

static void run_seed(uint64_t seed) {
  ecase *cases = calloc(PER_SEED, sizeof *cases);
  unsigned char *want = malloc(MAX_OUT + GUARD), *got = malloc(MAX_OUT + GUARD);
  cr_assert(cases && want && got, "out of host memory");
  uint64_t rng = seed, ix = 0, out = 0;
  for (size_t i = 0; i < PER_SEED; i++) {
    char name[24];
    snprintf(name, sizeof name, "fecho%zu", i);
    do { /* the echo must fit the out buffer */
      fg_case_free(&cases[i].g);
      dg_buf_free(&cases[i].code);
      dg_buf_free(&cases[i].fullsig);
      cases[i].nix = 0;
      fg_case_make(&rng, name, &cases[i].g);
      make_kernel(&cases[i]);
    } while (cases[i].total > MAX_OUT);
  }
  cr_assert_eq(gcl_mem_alloc(ctx, MAX_IX * sizeof(int), &ix), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_alloc(ctx, MAX_OUT + GUARD, &out), GCL_OK, "%s", gcl_last_error());
  for (size_t b = 0; b < PER_SEED; b += BATCH) run_batch(seed, cases + b, BATCH, ix, out, want, got);
  for (size_t i = 0; i < PER_SEED; i++) {
    fg_case_free(&cases[i].g);
    dg_buf_free(&cases[i].code);
    dg_buf_free(&cases[i].fullsig);
  }
  gcl_mem_free(ctx, ix);
  gcl_mem_free(ctx, out);
  free(cases);
  free(want);
  free(got);
}

Test(fields_echo, every_leaf_reaches_the_kernel, .timeout = 540) {
  uint64_t fresh = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
  const char *env = getenv("GCL_FIELDS_ECHO_SEED");
  if (env) fresh = strtoull(env, NULL, 10);
  cr_log_info("fields echo seeds: %llu (fixed) and %llu (fresh; GCL_FIELDS_ECHO_SEED=%llu replays)",
              FIXED_SEED, (unsigned long long)fresh, (unsigned long long)fresh);
  run_seed(FIXED_SEED);
  run_seed(fresh);
  cr_log_info("sm_%d: %zu launches, %zu leaves compared (%zu run-time subscripts), %zu failures",
              gcl_context_sm(ctx), launches, leaves_checked, runtime_subscripts, failures);
  cr_expect_eq(launches, 2 * PER_SEED, "every kernel launched");
  cr_expect_eq(failures, 0, "%zu failures (the first %d are logged above)", failures, MAX_REPORTED);
}
