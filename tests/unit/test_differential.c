/* Differential layout test (issues 3 and 25): random signatures (tests/common/sig_gen.c: alignments
 * up to 4096 on bytes, tensor maps, scalars, structs and their members), the matching CUDA C++
 * kernels compiled by NVRTC for every architecture it lists (nvrtcGetSupportedArchs; CUDA 13.0:
 * sm_75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121), and every offset, size and total in the cubin's
 * EIATTR_KPARAM_INFO(_V2) / CBANK_PARAM_SIZE records compared with gcl_layout_create. Kernels the
 * compiler rejects (over the parameter limit) must be rejected by the engine too, and the other
 * way round -- except that the engine also rejects what the compiler builds but the driver will
 * not load (a device placement past 32764 bytes; see lib/core/layout.c). A fixed seed and a fresh one run each time; failures print the seed and signature.
 * CPU only: NVRTC needs no GPU. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/sig_gen.h"
#include "../common/image_test_util.h"

#define PER_SEED 300 /* two seeds: 600 signatures, each on every architecture NVRTC lists */
#define BATCH 150    /* kernels per NVRTC program: one compile is mostly fixed cost */
#define MAX_REPORTED 12

#define MAX_ARCHS 32
static int archs[MAX_ARCHS];
static size_t narchs; /* filled from NVRTC's list before any case is made */

typedef struct dcase {
  char name[24];
  dg_buf sig, decls, code;
  gcl_signature *parsed;
  gcl_layout *layout[MAX_ARCHS];
  gcl_status verdict[MAX_ARCHS]; /* GCL_OK or GCL_ERROR_LAYOUT_TOO_LARGE */
} dcase;

typedef struct run {
  uint64_t seed;
  dcase *cases;
  size_t count;
  size_t arch;        /* index into archs */
  size_t mismatches, compared, rejected, compiles;
  size_t over128, max_align; /* compared parameters aligned above 128; the largest alignment */
  size_t driver_limit; /* rejected by the engine, compiled by NVRTC to a placement past the limit */
  char report[MAX_REPORTED][1024];
} run;

static void mismatch(run *r, const dcase *c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void mismatch(run *r, const dcase *c, const char *fmt, ...) {
  if (r->mismatches < MAX_REPORTED) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->report[r->mismatches], sizeof r->report[0], "seed %llu sm_%d %s (%s): %s",
             (unsigned long long)r->seed, archs[r->arch], c->name, c->sig.p, what);
  }
  r->mismatches++;
}

/* Compares the cubin's records for kernel c with the engine's layout. */
static void compare(run *r, const dcase *c, const gcl_image *img) {
  size_t k;
  gcl_image_kernel_info info;
  const gcl_layout *l = c->layout[r->arch];
  if (gcl_image_find_kernel(img, c->name, &k) != GCL_OK || gcl_image_kernel(img, k, &info)) {
    mismatch(r, c, "kernel missing from the cubin: %s", gcl_last_error());
    return;
  }
  r->compared++;
  if (info.param_count != gcl_layout_count(l))
    return mismatch(r, c, "cubin has %zu params, engine %zu", info.param_count, gcl_layout_count(l));
  for (size_t p = 0; p < info.param_count; p++) {
    size_t co, cs, lo, ls, la;
    gcl_image_param(img, k, p, &co, &cs, NULL);
    gcl_layout_param(l, p, &lo, &ls, &la);
    r->over128 += la > 128;
    if (la > r->max_align) r->max_align = la;
    if (co != lo || cs != ls)
      return mismatch(r, c, "param %zu: cubin offset %zu size %zu, engine offset %zu size %zu", p,
                      co, cs, lo, ls);
  }
  if (info.param_bytes != gcl_layout_size(l))
    mismatch(r, c, "CBANK_PARAM_SIZE %zu, engine size %zu", info.param_bytes, gcl_layout_size(l));
}

/* NVRTC on kernels idx[0..n): prelude, their structs, their kernels. */
static nvrtcResult compile(run *r, const size_t *idx, size_t n, unsigned char **cubin,
                           size_t *size, char **log) {
  dg_buf src = {0};
  dg_buf_printf(&src, "%s", dg_prelude);
  for (size_t i = 0; i < n; i++)
    dg_buf_printf(&src, "%s%s", r->cases[idx[i]].decls.p ? r->cases[idx[i]].decls.p : "",
                  r->cases[idx[i]].code.p);
  r->compiles++;
  nvrtcResult res = itu_nvrtc_compile(src.p, archs[r->arch], cubin, size, NULL, log);
  dg_buf_free(&src);
  return res;
}

/* A batch the engine accepts: compiled together; on failure halved until the culprits are found. */
static void run_batch(run *r, const size_t *idx, size_t n) {
  unsigned char *cubin = NULL;
  size_t size = 0;
  char *log = NULL;
  if (compile(r, idx, n, &cubin, &size, &log) != NVRTC_SUCCESS) {
    free(log);
    if (n == 1) {
      const gcl_layout *l = r->cases[idx[0]].layout[r->arch];
      return mismatch(r, &r->cases[idx[0]], "engine accepts (%zu bytes) but NVRTC rejects it",
                      gcl_layout_size(l));
    }
    run_batch(r, idx, n / 2); /* bisect to the kernels NVRTC rejects */
    run_batch(r, idx + n / 2, n - n / 2);
    return;
  }
  gcl_image *img = NULL;
  if (gcl_image_parse(cubin, size, 0, &img) != GCL_OK)
    mismatch(r, &r->cases[idx[0]], "cubin unreadable: %s", gcl_last_error());
  for (size_t i = 0; img && i < n; i++) compare(r, &r->cases[idx[i]], img);
  gcl_image_destroy(img);
  free(cubin);
}

/* A kernel the engine rejects must not compile either, or compile to a placement the driver
 * refuses (past the limit). */
static void run_rejected(run *r, size_t i) {
  unsigned char *cubin = NULL;
  size_t size = 0;
  char *log = NULL;
  r->rejected++;
  if (compile(r, &i, 1, &cubin, &size, &log) != NVRTC_SUCCESS) {
    free(log);
    return;
  }
  gcl_image *img = NULL;
  size_t bytes = 0;
  if (gcl_image_parse(cubin, size, 0, &img) == GCL_OK && gcl_image_kernel_count(img) == 1) {
    gcl_image_kernel_info info;
    gcl_image_kernel(img, 0, &info);
    bytes = info.param_bytes;
  }
  /* The engine also refuses what ptxas accepts but the driver will not load: a device placement
   * past the limit (lib/core/layout.c). Anything else NVRTC compiles must have a layout. */
  if (bytes <= GCL_PARAM_LIMIT)
    mismatch(r, &r->cases[i], "engine rejects it (too large) but NVRTC compiles it (cubin area "
             "%zu)", bytes);
  else
    r->driver_limit++;
  gcl_image_destroy(img);
  free(cubin);
}

static void run_arch(run *r) {
  size_t *batch = malloc(r->count * sizeof *batch), n = 0;
  for (size_t i = 0; i < r->count; i++) {
    if (r->cases[i].verdict[r->arch] != GCL_OK) run_rejected(r, i);
    else batch[n++] = i;
  }
  for (size_t b = 0; b < n; b += BATCH) run_batch(r, batch + b, n - b < BATCH ? n - b : BATCH);
  free(batch);
}

static void make_cases(uint64_t seed, dcase *cases, size_t count) {
  uint64_t rng = seed;
  for (size_t i = 0; i < count; i++) {
    dcase *c = &cases[i];
    snprintf(c->name, sizeof c->name, "k%zu", i);
    dg_kernel(&rng, dg_pick_mode(&rng), c->name, &c->sig, &c->decls, &c->code);
    gcl_status s = gcl_signature_parse(c->sig.p, &c->parsed);
    cr_assert_eq(s, GCL_OK, "seed %llu %s: generated signature does not parse: %s\n%s",
                 (unsigned long long)seed, c->name, gcl_last_error(), c->sig.p);
    for (size_t a = 0; a < narchs; a++) {
      s = c->verdict[a] = gcl_layout_create(c->parsed, archs[a], &c->layout[a]);
      cr_assert(s == GCL_OK || s == GCL_ERROR_LAYOUT_TOO_LARGE, "seed %llu %s sm_%d: %s: %s",
                (unsigned long long)seed, c->name, archs[a], gcl_status_name(s), gcl_last_error());
    }
  }
}

static void free_cases(dcase *cases, size_t count) {
  for (size_t i = 0; i < count; i++) {
    for (size_t a = 0; a < narchs; a++) gcl_layout_destroy(cases[i].layout[a]);
    gcl_signature_destroy(cases[i].parsed);
    dg_buf_free(&cases[i].sig);
    dg_buf_free(&cases[i].decls);
    dg_buf_free(&cases[i].code);
  }
  free(cases);
}

/* All architectures of one seed, one after the other. With one thread per architecture this
 * test crashed now and then inside Criterion ("crashed during its setup or teardown", about one
 * run in four), and gained no time (NVRTC runs the compiles one at a time). The same sources
 * compiled by raw NVRTC from four plain threads, with gcl_image_parse on each cubin, did not
 * crash in 10 runs, and unit_module_cpu's nvrtc_compiles_from_several_threads passes: the
 * crash is not pinned on NVRTC. */
static void run_seed(uint64_t seed) {
  dcase *cases = calloc(PER_SEED, sizeof *cases);
  make_cases(seed, cases, PER_SEED);
  run *runs = calloc(narchs, sizeof *runs); /* 12 KB each: not on the stack */
  for (size_t a = 0; a < narchs; a++) {
    runs[a] = (run){.seed = seed, .cases = cases, .count = PER_SEED, .arch = a};
    run_arch(&runs[a]);
  }
  size_t total = 0;
  for (size_t a = 0; a < narchs; a++) {
    /* stdout, not cr_log_info: Criterion crashed ("Unexpected signal") after ~20 log lines */
    printf("seed %llu sm_%d: %zu kernels compared (%zu parameters aligned above 128, up to %zu), "
           "%zu rejected by both or reported (%zu of them compiled past the driver's limit), %zu "
           "NVRTC compiles, %zu mismatches\n", (unsigned long long)seed, archs[a],
           runs[a].compared, runs[a].over128, runs[a].max_align, runs[a].rejected,
           runs[a].driver_limit, runs[a].compiles, runs[a].mismatches);
    fflush(stdout);
    for (size_t m = 0; m < runs[a].mismatches && m < MAX_REPORTED; m++)
      cr_log_error("%s", runs[a].report[m]);
    total += runs[a].mismatches;
    cr_expect_geq(runs[a].compared + runs[a].rejected + runs[a].mismatches, PER_SEED,
                  "seed %llu sm_%d: every case was checked", (unsigned long long)seed, archs[a]);
  }
  free_cases(cases, PER_SEED);
  free(runs);
  cr_expect_eq(total, 0, "seed %llu: %zu layouts differ from the compiler's (see the log above)",
               (unsigned long long)seed, total);
}

/* The engine knows exactly the architectures NVRTC builds: none it would place by guess, none
 * NVRTC builds that it refuses (gclaunch's list is lib/core/layout.c's known_sms). */
static void load_archs(void) {
  narchs = itu_nvrtc_archs(archs, MAX_ARCHS);
  const char *only = getenv("GCL_DIFF_ARCH"); /* replay on one architecture: GCL_DIFF_ARCH=100 */
  gcl_signature *sig = NULL;
  cr_assert_eq(gcl_signature_parse("u8 x", &sig), GCL_OK);
  for (int sm = 0; sm < 256; sm++) {
    gcl_layout *l = NULL;
    bool accepted = gcl_layout_create(sig, sm, &l) == GCL_OK, listed = false;
    for (size_t a = 0; a < narchs; a++) listed |= archs[a] == sm;
    cr_expect_eq(accepted, listed, "sm_%d: the engine %s it, NVRTC %s it", sm,
                 accepted ? "accepts" : "refuses", listed ? "builds" : "does not build");
    gcl_layout_destroy(l);
  }
  gcl_signature_destroy(sig);
  if (only) archs[0] = atoi(only), narchs = 1;
}

/* One seed per test: each Criterion test is a process of its own, and NVRTC 13.0 in one process
 * ended in "LLVM ERROR: out of memory" after about 500 compiles (two seeds on 12 architectures),
 * at 250 MB resident; one seed (about 250 compiles) passes. */
static void run_one(bool fixed) {
  itu_require_nvrtc();
  load_archs();
  uint64_t seed = 20240611;
  if (!fixed) {
    seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
    const char *env = getenv("GCL_DIFF_SEED"); /* replay a failure: GCL_DIFF_SEED=<seed> */
    if (env) seed = strtoull(env, NULL, 10);
  }
  printf("differential seed %llu (%s; GCL_DIFF_SEED=%llu replays), %zu architectures\n",
         (unsigned long long)seed, fixed ? "fixed" : "fresh", (unsigned long long)seed, narchs);
  run_seed(seed);
}

/* About 250 NVRTC compiles per seed: 13 s in a plain build, 130-220 s under ASan (NVRTC's many
 * allocations through ASan's allocator, measured 2026-12-04 on a 2-core machine). */
Test(differential, layout_equals_nvrtc_cubins_fixed_seed, .timeout = 540) { run_one(true); }
Test(differential, layout_equals_nvrtc_cubins_fresh_seed, .timeout = 540) { run_one(false); }
