/* Tensor-map batches are planned, executed and committed all or nothing (lib/core/tmap_plan.h),
 * against libfakecuda.so, whose encodes are a function of every argument and whose
 * cuTensorMapReplaceAddress patches exactly what a fresh encode at another address changes.
 *
 * Random batches -- encodes, refreshes (some maps re-pointed, some skipped, some re-encoded),
 * re-points, now and then an invalid tensor or address -- with a driver failure injected at a
 * random call of a random tensor-map entry point in half of them: a failed batch leaves the args
 * (buffer, cache, set-tracking) byte-identical; a batch that succeeds leaves exactly what the same
 * maps set one by one leave in a second args, and every map equals the driver's own fresh encode.
 * The same for gcl_tensormap_table, with its dirty tracking and uploads. The seed is printed;
 * GCL_TEST_SEED=N repeats a run. */
#include "fakecuda_test.h"

#include <stdio.h>
#include <time.h>

#include "args_internal.h"
#include "../common/test_rng.h"
#include "../common/tmap_field.h"
#include "../common/tmap_rig.h"
#include "../common/tmap_gen.h"

#define N_MAPS 16
#define SIG "grid_constant tensormap[16] maps, u32 n, grid_constant tensormap one"


static tmap_gen gen;
static uint64_t seed_once(const char *suite) {
  const char *env = getenv("GCL_TEST_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + 1;
  fprintf(stderr, "%s: seed %llu (GCL_TEST_SEED=%llu repeats it)\n", suite,
          (unsigned long long)seed, (unsigned long long)seed);
  rng_state = seed | 1;
  tmap_gen_seed(&gen, seed);
  return seed;
}

/* --- random descriptions that every rule accepts: the shared generator (tmap_gen.h) ---------- */

typedef tmap_case desc;

static void random_desc(desc *d, uint64_t mem) { tmap_gen_valid(&gen, d, mem, rnd(4) == 0); }

static void copy_desc(desc *to, const desc *from) { tmap_case_copy(to, from); }

/* The address alignment d's map needs. */
static uint64_t align_of(const desc *d) {
  return d->o.interleave == GCL_TENSORMAP_INTERLEAVE_32B ? 32u : 16u;
}

static uint64_t address_of(const desc *d) { return (uint64_t)(uintptr_t)d->t.data + d->t.byte_offset; }

static void fresh(gcl_context *ctx, const desc *d, unsigned char out[128]) {
  _Alignas(64) unsigned char m[128];
  cr_assert_eq(gcl_tensormap_encode(ctx, &d->t, &d->o, m), GCL_OK, "%s", gcl_last_error());
  memcpy(out, m, 128);
}

static const char *const entries[] = {"cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col",
                                      "cuTensorMapReplaceAddress"};

/* --- one random batch, for args or a table ----------------------------------------------------- */

typedef struct batch {
  int kind;     /* 0: set, 1: set with GCL_TENSORMAP_REFRESH, 2: re-point */
  size_t first, n;
  desc d[N_MAPS * 4];
  const DLTensor *t[N_MAPS * 4];
  gcl_tensormap_options o[N_MAPS * 4];
  uint64_t a[N_MAPS * 4];
  bool invalid; /* one map the checks refuse */
} batch;

/* model[i]: the description map i was last set from (valid: has). */
static void make_batch(batch *b, size_t maps, const desc *model, const bool *has, uint64_t mem) {
  b->kind = (int)rnd(3);
  b->first = rnd((uint32_t)maps);
  b->n = 1 + rnd((uint32_t)(maps - b->first < N_MAPS * 4 ? maps - b->first : N_MAPS * 4));
  b->invalid = rnd(10) == 0;
  size_t bad = rnd((uint32_t)b->n);
  for (size_t i = 0; i < b->n; i++) {
    size_t m = b->first + i;
    uint64_t where = mem + 4096 * rnd(256);
    if (has[m] && rnd(4) != 0) { /* the same description: moved (re-point) or not (skip) */
      copy_desc(&b->d[i], &model[m]);
      if (rnd(3) != 0)
        b->d[i].t.data = (void *)(uintptr_t)where, b->d[i].t.byte_offset = align_of(&b->d[i]) * rnd(64);
    } else {
      random_desc(&b->d[i], where);
    }
    if (b->invalid && i == bad) b->d[i].t.byte_offset += 8; /* misaligned: refused */
    b->t[i] = &b->d[i].t;
    b->o[i] = b->d[i].o;
    b->a[i] = address_of(&b->d[i]);
  }
}

/* A driver failure after `after` successful calls of a random tensor-map entry point, or none. */
static const char *inject(size_t n) {
  if (rnd(2)) return NULL;
  const char *e = entries[rnd(3)];
  fakecuda_fail(e, 1 /* CUDA_ERROR_INVALID_VALUE */, (int)rnd((uint32_t)n + 1));
  return e;
}

/* --- args -------------------------------------------------------------------------------------- */

typedef tmap_rig rig;
static void open_rig(rig *r) { tmap_rig_open(r, SIG, 1 << 21, true); }
static void close_rig(rig *r) { tmap_rig_close(r); }

typedef struct state {
  unsigned char data[4096], bits[512];
  gcl__tmap_entry tmaps[N_MAPS + 1];
} state;

static void take(const gcl_args *a, state *s) {
  memset(s, 0, sizeof *s);
  memcpy(s->data, gcl__args_data(a), a->size);
  memcpy(s->bits, a->bits, a->bit_bytes);
  memcpy(s->tmaps, a->tmaps, sizeof s->tmaps);
}

static bool same(const state *x, const state *y) { return memcmp(x, y, sizeof *x) == 0; }

static gcl_status run_args(gcl_args *a, gcl_context *ctx, const batch *b, size_t from, size_t n) {
  const gcl_field *f = TMAP_FIELD(a, 0, b->first + from);
  if (b->kind == 2) return gcl_args_repoint_tensormaps(a, ctx, f, n, b->a + from);
  return gcl_args_set_tensormaps(a, ctx, f, n, b->t + from, b->o + from, n,
                                 b->kind == 1 ? GCL_TENSORMAP_REFRESH : 0);
}

/* driver_path: every re-point calls the driver (GCL_TMAP_PATCH=0); else those of the proven
 * modes are gclaunch's patches, and fewer injected driver failures land. */
static void random_batches(bool driver_path) {
  seed_once(driver_path ? "tmap_plan/args (GCL_TMAP_PATCH=0)" : "tmap_plan/args");
  rig r;
  if (driver_path) tmap_rig_driver_path();
  open_rig(&r);
  cr_assert_eq(r.path.patched, driver_path ? 0u : 7u, "%s", r.path.reason);
  desc model[N_MAPS];
  bool has[N_MAPS] = {0};
  int ok = 0, refused = 0, driver = 0;
  for (int round = 0; round < 3000; round++) {
    batch *b = malloc(sizeof *b);
    cr_assert(b);
    make_batch(b, N_MAPS, model, has, r.mem);
    if (b->n > N_MAPS - b->first) b->n = N_MAPS - b->first;
    state before, after;
    take(r.args, &before);
    const char *e = inject(b->n);
    gcl_status s = run_args(r.args, r.ctx, b, 0, b->n);
    if (e) fakecuda_fail(e, 0, 0);
    take(r.args, &after);
    if (s != GCL_OK) {
      cr_assert(same(&before, &after), "round %d (kind %d, maps %zu+%zu, %s): the failed batch "
                "changed the args: %s", round, b->kind, b->first, b->n, e ? e : "no injection",
                gcl_last_error());
      cr_assert(gcl_last_error()[0], "round %d: a failure without a message", round);
      if (s == GCL_ERROR_DRIVER) driver++; else refused++;
      cr_assert(s == GCL_ERROR_DRIVER || b->invalid || b->kind == 2,
                "round %d: a valid batch refused: %s", round, gcl_last_error());
      free(b);
      continue;
    }
    ok++;
    for (size_t i = 0; i < b->n; i++)
      cr_assert_eq(run_args(r.ref, r.ctx, b, i, 1), GCL_OK, "round %d, map %zu one by one: %s",
                   round, b->first + i, gcl_last_error());
    state ref;
    take(r.ref, &ref);
    cr_assert(same(&after, &ref), "round %d (kind %d, maps %zu+%zu): the batch left other bytes "
              "or cache entries than the same maps set one by one", round, b->kind, b->first,
              b->n);
    for (size_t i = 0; i < b->n; i++) {
      size_t m = b->first + i;
      if (b->kind != 2) copy_desc(&model[m], &b->d[i]), has[m] = true;
      else model[m].t.data = (void *)(uintptr_t)b->a[i], model[m].t.byte_offset = 0;
      unsigned char want[128];
      fresh(r.ctx, &model[m], want);
      cr_assert(memcmp((const unsigned char *)gcl__args_data(r.args) + r.maps_at + 128 * m, want, 128) == 0,
                "round %d: map %zu differs from the driver's fresh encode", round, m);
    }
    free(b);
  }
  fprintf(stderr, "tmap_plan/args: %d batches committed, %d refused by checks, %d failed in the "
          "driver (injected), each failure left the args byte-identical\n", ok, refused, driver);
  cr_assert(ok > 300 && driver > (driver_path ? 100 : 20) && refused > 50,
            "too few of each outcome: %d %d %d", ok, driver, refused);
  close_rig(&r);
}

Test(tmap_plan, random_batches_are_all_or_nothing_and_equal_one_by_one) { random_batches(false); }

Test(tmap_plan, random_batches_on_the_driver_path) { random_batches(true); }

/* --- tables ------------------------------------------------------------------------------------ */

#define K_TABLE 300 /* more than the parameter's 240 */

static size_t dirty_expected(const bool *dirty) {
  size_t c = 0;
  for (size_t i = 0; i < K_TABLE; i++) c += dirty[i];
  return c;
}

static void assert_device_equals_host(const gcl_tensormap_table *t, const bool *dirty) {
  const unsigned char *dev = (const unsigned char *)(uintptr_t)gcl_tensormap_table_address(t);
  for (size_t i = 0; i < K_TABLE; i++)
    if (!dirty[i])
      cr_assert(memcmp(dev + 128 * i, gcl_tensormap_table_map(t, i), 128) == 0,
                "entry %zu: device bytes differ from the host copy although it is not dirty", i);
}

/* A committed batch b of round: each entry written one by one into ref as well, the model
 * updated, every entry equal to the driver's fresh encode of the model; the entries whose
 * bytes changed (host: the table before) marked dirty. */
static void check_committed(gcl_context *ctx, gcl_tensormap_table *t, gcl_tensormap_table *ref,
                            const batch *b, int round, const unsigned char *host, desc *model,
                            bool *has, bool *dirty) {
  for (size_t i = 0; i < b->n; i++) {
    size_t m = b->first + i;
    gcl_status one = b->kind == 2 ? gcl_tensormap_table_repoint(ref, m, 1, &b->a[i])
                                  : gcl_tensormap_table_set(ref, m, 1, &b->t[i], &b->o[i], 1,
                                                            b->kind == 1 ? GCL_TENSORMAP_REFRESH : 0);
    cr_assert_eq(one, GCL_OK, "round %d entry %zu one by one: %s", round, m, gcl_last_error());
    bool changed = memcmp(host + 128 * m, gcl_tensormap_table_map(t, m), 128) != 0;
    if (b->kind != 2) copy_desc(&model[m], &b->d[i]), has[m] = true;
    else model[m].t.data = (void *)(uintptr_t)b->a[i], model[m].t.byte_offset = 0;
    unsigned char want[128];
    fresh(ctx, &model[m], want);
    cr_assert(memcmp(gcl_tensormap_table_map(t, m), want, 128) == 0,
              "round %d: entry %zu differs from the driver's fresh encode", round, m);
    dirty[m] = dirty[m] || changed;
  }
}

Test(tmap_plan, table_random_batches_bytes_dirty_and_uploads) {
  seed_once("tmap_plan/table");
  fake_use();
  gcl_context *ctx;
  uint64_t mem;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_alloc(ctx, 1 << 21, &mem), GCL_OK);
  gcl_tensormap_table *t, *ref;
  cr_assert_eq(gcl_tensormap_table_create(ctx, K_TABLE, &t), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_tensormap_table_create(ctx, K_TABLE, &ref), GCL_OK);
  cr_assert_eq(gcl_tensormap_table_count(t), K_TABLE);
  cr_assert_eq(gcl_tensormap_table_address(t) % 128, 0, "device table not 128-byte aligned");
  cr_assert_eq((uintptr_t)gcl_tensormap_table_map(t, 0) % 128, 0, "host copy not aligned");
  cr_assert_null(gcl_tensormap_table_map(t, K_TABLE));
  static desc model[K_TABLE];
  static bool has[K_TABLE], dirty[K_TABLE];
  static unsigned char host[K_TABLE * 128];
  int ok = 0, failed = 0, uploads = 0;
  for (int round = 0; round < 1500; round++) {
    batch *b = malloc(sizeof *b);
    cr_assert(b);
    make_batch(b, K_TABLE, model, has, mem);
    memcpy(host, gcl_tensormap_table_map(t, 0), sizeof host);
    size_t dirty_before = gcl_tensormap_table_dirty(t);
    const char *e = inject(b->n);
    gcl_status s = b->kind == 2 ? gcl_tensormap_table_repoint(t, b->first, b->n, b->a)
                                : gcl_tensormap_table_set(t, b->first, b->n, b->t, b->o, b->n,
                                                          b->kind == 1 ? GCL_TENSORMAP_REFRESH : 0);
    if (e) fakecuda_fail(e, 0, 0);
    if (s != GCL_OK) {
      failed++;
      cr_assert(memcmp(host, gcl_tensormap_table_map(t, 0), sizeof host) == 0,
                "round %d: a failed batch changed the table: %s", round, gcl_last_error());
      cr_assert_eq(gcl_tensormap_table_dirty(t), dirty_before, "round %d: dirty changed", round);
      free(b);
      continue;
    }
    ok++;
    check_committed(ctx, t, ref, b, round, host, model, has, dirty);
    cr_assert(memcmp(gcl_tensormap_table_map(t, 0), gcl_tensormap_table_map(ref, 0),
                     K_TABLE * 128) == 0, "round %d: the batch and one by one differ", round);
    /* Maps whose bytes changed are dirty; a map rewritten with the same bytes may be too (an
     * encode is not compared), but never one that was not written. */
    cr_assert_geq(gcl_tensormap_table_dirty(t), dirty_expected(dirty), "round %d", round);
    if (rnd(8) == 0) {
      cr_assert_eq(gcl_tensormap_table_upload(t, NULL), GCL_OK, "%s", gcl_last_error());
      cr_assert_eq(gcl_tensormap_table_upload(ref, NULL), GCL_OK);
      memset(dirty, 0, sizeof dirty);
      cr_assert_eq(gcl_tensormap_table_dirty(t), 0);
      assert_device_equals_host(t, dirty);
      uploads++;
    }
    free(b);
  }
  /* Only dirty maps are copied: an upload with nothing dirty copies nothing. */
  cr_assert_eq(gcl_tensormap_table_upload(t, NULL), GCL_OK);
  long copies = fakecuda_calls("cuMemcpyHtoDAsync");
  cr_assert_eq(gcl_tensormap_table_upload(t, NULL), GCL_OK);
  cr_assert_eq(fakecuda_calls("cuMemcpyHtoDAsync"), copies, "an upload with nothing dirty copied");
  fprintf(stderr, "tmap_plan/table: %d batches committed, %d failed (checks or injected driver "
          "failures; none changed the table), %d uploads\n", ok, failed, uploads);
  cr_assert(ok > 200 && failed > 100 && uploads > 10);
  gcl_tensormap_table_destroy(t);
  gcl_tensormap_table_destroy(ref);
  gcl_mem_free(ctx, mem);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(tmap_plan, table_uploads_only_dirty_runs) {
  fake_use();
  gcl_context *ctx;
  uint64_t mem;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  cr_assert_eq(gcl_mem_alloc(ctx, 1 << 20, &mem), GCL_OK);
  gcl_tensormap_table *t;
  cr_assert_eq(gcl_tensormap_table_create(ctx, 4096, &t), GCL_OK, "%s", gcl_last_error());
  fake_tensor x;
  fake_tensor_init(&x, mem, 64, 64);
  gcl_tensormap_options o = {.box = {16, 16}};
  const DLTensor *one[1] = {&x.t};
  /* entries 5, 6, 7 (one run), 64 and 4095 */
  size_t set[] = {5, 6, 7, 64, 4095};
  for (size_t i = 0; i < 5; i++)
    cr_assert_eq(gcl_tensormap_table_set(t, set[i], 1, one, &o, 1, 0), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_tensormap_table_dirty(t), 5);
  long copies = fakecuda_calls("cuMemcpyHtoDAsync");
  cr_assert_eq(gcl_tensormap_table_upload(t, NULL), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_calls("cuMemcpyHtoDAsync") - copies, 3, "three runs, three copies");
  const unsigned char *dev = (const unsigned char *)(uintptr_t)gcl_tensormap_table_address(t);
  for (size_t i = 0; i < 5; i++)
    cr_assert(memcmp(dev + 128 * set[i], gcl_tensormap_table_map(t, set[i]), 128) == 0);
  static const unsigned char zero[128];
  cr_assert(memcmp(dev + 128 * 8, zero, 128) == 0, "an unset entry is zeros on the device");
  /* The same tensor again: refresh skips it, nothing becomes dirty. */
  cr_assert_eq(gcl_tensormap_table_set(t, 5, 1, one, &o, 1, GCL_TENSORMAP_REFRESH), GCL_OK);
  cr_assert_eq(gcl_tensormap_table_dirty(t), 0);
  /* A failing copy: the runs before it are clean, the rest stay dirty. */
  uint64_t a = mem + 4096;
  for (size_t i = 0; i < 5; i++) cr_assert_eq(gcl_tensormap_table_repoint(t, set[i], 1, &a), GCL_OK);
  cr_assert_eq(gcl_tensormap_table_dirty(t), 5);
  fakecuda_fail("cuMemcpyHtoDAsync", 1, 1);
  cr_assert_eq(gcl_tensormap_table_upload(t, NULL), GCL_ERROR_DRIVER);
  fakecuda_fail("cuMemcpyHtoDAsync", 0, 0);
  cr_assert_eq(gcl_tensormap_table_dirty(t), 2, "the run 5-7 was copied, 64 and 4095 were not");
  cr_assert_eq(gcl_tensormap_table_upload(t, NULL), GCL_OK);
  cr_assert_eq(gcl_tensormap_table_dirty(t), 0);
  for (size_t i = 0; i < 5; i++)
    cr_assert(memcmp(dev + 128 * set[i], gcl_tensormap_table_map(t, set[i]), 128) == 0);
  gcl_tensormap_table_destroy(t);
  gcl_mem_free(ctx, mem);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(tmap_plan, table_bad_input_is_named) {
  fake_use();
  gcl_context *ctx;
  uint64_t mem;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  cr_assert_eq(gcl_mem_alloc(ctx, 1 << 20, &mem), GCL_OK);
  gcl_tensormap_table *t = (gcl_tensormap_table *)1;
  cr_assert_eq(gcl_tensormap_table_create(ctx, 0, &t), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_tensormap_table_create: k = 0: expected 1 ...");
  cr_assert_null(t);
  cr_assert_eq(gcl_tensormap_table_create(NULL, 4, &t), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("ctx");
  /* More maps than the device holds: refused before any host memory is asked for (ASan's
   * allocator aborts on a calloc that large: fuzz_api seed 83977636). */
  cr_assert_eq(gcl_tensormap_table_create(ctx, (size_t)1 << 40, &t), GCL_ERROR_OUT_OF_MEMORY);
  assert_msg_has("gcl_tensormap_table_create: k = 1099511627776 maps");
  assert_msg_has("bytes of memory in all");
  cr_assert_null(t);
  cr_assert_eq(gcl_tensormap_table_create(ctx, 300, &t), GCL_OK);
  fake_tensor x;
  fake_tensor_init(&x, mem, 64, 64);
  gcl_tensormap_options o = {.box = {16, 16}};
  const DLTensor *ts[5] = {&x.t, &x.t, &x.t, &x.t, &x.t};
  cr_assert_eq(gcl_tensormap_table_set(t, 298, 5, ts, &o, 1, 0), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_tensormap_table_set: first = 298, n = 5: the table has 300 maps");
  cr_assert_eq(gcl_tensormap_table_set(NULL, 0, 1, ts, &o, 1, 0), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_tensormap_table_set: table is NULL");
  fake_tensor bad = x;
  bad.t.shape = bad.shape, bad.t.strides = bad.strides;
  bad.t.byte_offset = 8;
  const DLTensor *mixed[3] = {&x.t, &x.t, &bad.t};
  cr_assert_eq(gcl_tensormap_table_set(t, 10, 3, mixed, &o, 1, 0), GCL_ERROR_TENSOR);
  assert_msg_has("gcl_tensormap_table entry 12: data + byte_offset");
  cr_assert_eq(gcl_tensormap_table_dirty(t), 0, "a refused batch made maps dirty");
  cr_assert_eq(gcl_tensormap_table_set(t, 0, 2, ts, &o, 3, 0), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("options_count = 3");
  uint64_t a = mem + 64;
  cr_assert_eq(gcl_tensormap_table_repoint(t, 7, 1, &a), GCL_ERROR_UNSET_ARGUMENT);
  assert_msg_has("gcl_tensormap_table entry 7: no tensor map encoded by gclaunch here");
  cr_assert_eq(gcl_tensormap_table_set(t, 7, 1, ts, &o, 1, 0), GCL_OK);
  a = mem + 8;
  cr_assert_eq(gcl_tensormap_table_repoint(t, 7, 1, &a), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_tensormap_table entry 7: address 0x");
  cr_assert_eq(gcl_tensormap_table_repoint(t, 7, 1, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("addresses: expected 1 addresses, got NULL");
  cr_assert_eq(gcl_tensormap_table_upload(NULL, NULL), GCL_ERROR_INVALID_ARGUMENT);
  /* A driver failure names the entry and the call. */
  fakecuda_fail("cuTensorMapEncodeTiled", 1, 1);
  cr_assert_eq(gcl_tensormap_table_set(t, 20, 3, ts, &o, 1, 0), GCL_ERROR_DRIVER);
  fakecuda_fail("cuTensorMapEncodeTiled", 0, 0);
  assert_msg_has("gcl_tensormap_table entry 21: cuTensorMapEncodeTiled(");
  gcl_tensormap_table_destroy(t);
  gcl_tensormap_table_destroy(NULL);
  gcl_mem_free(ctx, mem);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}
