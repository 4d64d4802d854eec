/* CUDA graphs that replay re-pointed tensor maps, written from the public header and
 * docs/graphs.md only. For each placement of the maps -- a top-level grid-constant
 * `tensormap[16]` (kernels/tma_gather.cu), a `tensormap[16]` field of a grid-constant struct
 * (kernels/graph_maps.cu) and a gcl_tensormap_table of 300 maps (kernels/tmap_table.cu) -- one
 * launch is captured, then, many times over, every map is re-pointed between two copies of the
 * tensors (same shapes and pitches, other values) through gclaunch, the graph is updated the
 * documented way (gcl_graph_set_args; gcl_graph_set_table for the table), replayed, and every
 * element the kernel gathered (boxes inside and across the tensors' edges) is checked against a
 * host reference of the copy the maps point at. Then replays are queued back to back without
 * waiting, each with other maps and its own output, and all are checked after one wait: a replay
 * keeps the maps it was launched with. Last, a PDL pair (kernels/pdl.cu: the dependent launched
 * with programmatic_dependent_launch) captured and replayed over alternating buffers. Seed
 * printed; GCL_TEST_SEED=N repeats it. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"
#include "../common/test_rng.h"

#define BOX 16
#define WORK 1024
#define ROUNDS 24   /* replays, each checked, the maps alternating between the two copies */
#define QUEUED 8    /* replays queued back to back, each with its own output */
#define MAX_MAPS 300
#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())

typedef enum placement { TOP_LEVEL, STRUCT_FIELD, TABLE } placement;
static const char *const placement_names[] = {"top-level tensormap[16]",
                                              "struct field tensormap[16]", "table of 300 maps"};

typedef struct world {
  placement pl;
  size_t n;                          /* maps: 16, or 300 for the table */
  gcl_context *ctx;
  gcl_stream *s;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
  gcl_field maps0, work_f, out_f;    /* the first map, the work pointer, the output pointer */
  gcl_tensormap_table *table;
  gcl_graph *g;
  int64_t shape[MAX_MAPS][2], strides[MAX_MAPS][2];
  size_t at[MAX_MAPS];               /* element offset of tensor i in each copy */
  size_t total;                      /* elements of one copy */
  float *host[2];                    /* the two copies' values */
  uint64_t buf[2], work, out[QUEUED];
  int32_t w[3 * WORK];
  float *got;
} world;

static gcl_module *load(gcl_context *ctx, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", GCL_KERNEL_DIR, file);
  gcl_module *m;
  CHECK(gcl_module_load_file(ctx, path, &m));
  return m;
}

static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(rng() % (uint64_t)(hi - lo + 1)); }

/* n tensors of random shapes and pitches, laid out alike in two copies of other values. */
static void make_tensors(world *w) {
  w->total = 0;
  for (size_t i = 0; i < w->n; i++) {
    int64_t rows = pick(1, 40), cols = 4 * pick(1, 12), pitch = cols + 4 * pick(0, 2);
    w->shape[i][0] = rows, w->shape[i][1] = cols, w->strides[i][0] = pitch, w->strides[i][1] = 1;
    w->at[i] = w->total;
    w->total += (size_t)(rows * pitch) + 4 * (size_t)pick(0, 3);
  }
  for (int c = 0; c < 2; c++) {
    w->host[c] = malloc(w->total * 4);
    for (size_t e = 0; e < w->total; e++)
      w->host[c][e] = c ? -(float)(rng() % 999983) / 5.0f : (float)(rng() % 1000003) / 3.0f;
    CHECK(gcl_mem_alloc(w->ctx, w->total * 4, &w->buf[c]));
    CHECK(gcl_mem_upload(w->ctx, w->buf[c], w->host[c], w->total * 4));
  }
}

/* Tensor i of copy c as DLPack (data and byte_offset split at random). */
static DLTensor tensor(world *w, size_t i, int c) {
  uint64_t off = 4 * (uint64_t)w->at[i], data = off - 16 * (uint64_t)pick(0, (int64_t)(off / 16));
  return (DLTensor){.data = (void *)(uintptr_t)(w->buf[c] + data), .device = {kDLCUDA, 0},
                    .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = w->shape[i],
                    .strides = w->strides[i], .byte_offset = off - data};
}

/* Item b: a random map, an aligned column and a row around the tensor (edges included). */
static void make_work(world *w) {
  for (int b = 0; b < WORK; b++) {
    size_t m = (size_t)(rng() % w->n);
    w->w[3 * b] = (int32_t)m;
    w->w[3 * b + 1] = (int32_t)(4 * pick(-BOX / 4, (w->shape[m][1] + 3) / 4));
    w->w[3 * b + 2] = (int32_t)pick(-BOX / 2, w->shape[m][0]);
  }
  CHECK(gcl_mem_alloc(w->ctx, sizeof w->w, &w->work));
  CHECK(gcl_mem_upload(w->ctx, w->work, w->w, sizeof w->w));
  for (int q = 0; q < QUEUED; q++) CHECK(gcl_mem_alloc(w->ctx, 4 * 256 * WORK, &w->out[q]));
  w->got = malloc(4 * 256 * WORK);
}

static float at(const world *w, int c, size_t m, int64_t r, int64_t col) {
  if (r < 0 || col < 0 || r >= w->shape[m][0] || col >= w->shape[m][1]) return 0.0f; /* OOB fill */
  return w->host[c][w->at[m] + (size_t)(r * w->strides[m][0] + col)];
}

/* Output q holds every box of the work list gathered from copy c. */
static void verify(world *w, int q, int c, const char *what, int round) {
  CHECK(gcl_mem_download(w->ctx, w->got, w->out[q], 4 * 256 * WORK));
  size_t bad = 0;
  for (int b = 0; b < WORK; b++)
    for (int y = 0; y < BOX; y++)
      for (int x = 0; x < BOX; x++) {
        size_t m = (size_t)w->w[3 * b];
        float want = at(w, c, m, w->w[3 * b + 2] + y, w->w[3 * b + 1] + x);
        float got = w->got[256 * b + 16 * y + x];
        if (got != want && bad++ < 5)
          fprintf(stderr, "%s, %s %d: item %d (map %zu) [%d][%d]: %g, expected %g (copy %d)\n",
                  placement_names[w->pl], what, round, b, m, y, x, (double)got, (double)want, c);
      }
  cr_assert_eq(bad, 0, "%s, %s %d: %zu of %d elements differ from the host reference of copy %d",
               placement_names[w->pl], what, round, bad, WORK * 256, c);
}

static void field_at(world *w, const char *path, gcl_field *f) {
  CHECK(gcl_layout_field(gcl_kernel_layout(w->k), path, f));
}

/* The kernel of the placement, its args complete, the maps encoded over copy 0. */
static void open_placement(world *w) {
  static const char *const files[] = {"tma_gather.fatbin", "graph_maps.fatbin", "tmap_table.sm_90a.cubin"};
  static const char *const kernels[] = {"tma_gather", "graph_gather_struct", "tmap_table_gather"};
  static const char *const sigs[] = {
      "grid_constant tensormap[16] maps, const i32* work, f32* out",
      "grid_constant struct{tensormap[16] maps, const i32* work, f32* out} g",
      "const void* table, const i32* work, f32* out"};
  w->mod = load(w->ctx, files[w->pl]);
  CHECK(gcl_module_find_kernel(w->mod, kernels[w->pl], sigs[w->pl], &w->k));
  CHECK(gcl_args_create(gcl_kernel_layout(w->k), &w->args));
  static const char *const paths[][3] = {{"maps[0]", "work", "out"},
                                         {"g.maps[0]", "g.work", "g.out"},
                                         {"table", "work", "out"}};
  field_at(w, paths[w->pl][1], &w->work_f);
  field_at(w, paths[w->pl][2], &w->out_f);
  CHECK(gcl_args_set_field_ptr(w->args, &w->work_f, w->work));
  CHECK(gcl_args_set_field_ptr(w->args, &w->out_f, w->out[0]));
  DLTensor t[MAX_MAPS];
  const DLTensor *tp[MAX_MAPS];
  for (size_t i = 0; i < w->n; i++) t[i] = tensor(w, i, 0), tp[i] = &t[i];
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = BOX, o.box[1] = BOX;
  if (w->pl == TABLE) {
    CHECK(gcl_tensormap_table_create(w->ctx, w->n, &w->table));
    CHECK(gcl_tensormap_table_set(w->table, 0, w->n, tp, &o, 1, 0));
    field_at(w, "table", &w->maps0);
    CHECK(gcl_args_set_field_ptr(w->args, &w->maps0, gcl_tensormap_table_address(w->table)));
  } else {
    field_at(w, paths[w->pl][0], &w->maps0);
    CHECK(gcl_args_set_tensormaps(w->args, w->ctx, &w->maps0, w->n, tp, &o, 1, 0));
  }
}

static world *open_world(placement pl, size_t n) {
  world *w = calloc(1, sizeof *w);
  w->pl = pl, w->n = n;
  CHECK(gcl_context_create(0, &w->ctx));
  if (gcl_context_sm(w->ctx) < 90) {
    gcl_context_destroy(w->ctx);
    free(w);
    cr_skip_test("tensor maps need sm_90");
  }
  seed_rng_for("test_graph_repoint");
  CHECK(gcl_stream_create(w->ctx, 0, &w->s));
  make_tensors(w);
  make_work(w);
  open_placement(w);
  return w;
}

static void close_world(world *w) {
  CHECK(gcl_stream_synchronize(w->s));
  gcl_graph_destroy(w->g);
  gcl_tensormap_table_destroy(w->table);
  gcl_args_destroy(w->args);
  gcl_module_destroy(w->mod);
  gcl_stream_destroy(w->s);
  for (int c = 0; c < 2; c++) gcl_mem_free(w->ctx, w->buf[c]), free(w->host[c]);
  for (int q = 0; q < QUEUED; q++) gcl_mem_free(w->ctx, w->out[q]);
  gcl_mem_free(w->ctx, w->work);
  gcl_context_destroy(w->ctx);
  free(w->got);
  free(w);
}

/* The documented capture: the table noted first (table placement), then the launch. */
static void capture(world *w) {
  gcl_launch_config cfg = {.grid = {WORK}, .block = {128}, .stream = gcl_stream_handle(w->s)};
  CHECK(gcl_graph_capture_begin(w->s));
  if (w->pl == TABLE) CHECK(gcl_graph_capture_table(w->s, w->table));
  CHECK(gcl_launch(w->k, &cfg, w->args));
  CHECK(gcl_graph_capture_end(w->s, &w->g));
}

/* The documented update: every map re-pointed at copy c through gclaunch, the output set to
 * out[q], then the graph told (set_table for the table's maps, set_args for the parameters). */
static void repoint(world *w, int c, int q) {
  uint64_t a[MAX_MAPS];
  for (size_t i = 0; i < w->n; i++) a[i] = w->buf[c] + 4 * (uint64_t)w->at[i];
  if (w->pl == TABLE) {
    CHECK(gcl_tensormap_table_repoint(w->table, 0, w->n, a));
    CHECK(gcl_graph_set_table(w->g, w->table));
  } else {
    CHECK(gcl_args_repoint_tensormaps(w->args, w->ctx, &w->maps0, w->n, a));
  }
  CHECK(gcl_args_set_field_ptr(w->args, &w->out_f, w->out[q]));
  CHECK(gcl_graph_set_args(w->g, 0, w->k, w->args));
}

/* Poisons out[q] on the stream, then replays. */
static void replay(world *w, int q) {
  CHECK(gcl_mem_fill_u8_async(w->ctx, w->out[q], 0xff, 4 * 256 * WORK, w->s));
  CHECK(gcl_graph_launch(w->g, w->s));
}

static void run_placement(placement pl, size_t n) {
  world *w = open_world(pl, n);
  capture(w);
  replay(w, 0); /* as captured: copy 0 */
  CHECK(gcl_stream_synchronize(w->s));
  verify(w, 0, 0, "replay as captured", 0);
  for (int r = 1; r <= ROUNDS; r++) { /* re-point, update, replay, check: one at a time */
    repoint(w, r % 2, r % QUEUED);
    replay(w, r % QUEUED);
    CHECK(gcl_stream_synchronize(w->s));
    verify(w, r % QUEUED, r % 2, "round", r);
  }
  for (int q = 0; q < QUEUED; q++) { /* queued back to back: copy (q + 1) % 2 into out[q] */
    repoint(w, (q + 1) % 2, q);
    replay(w, q);
  }
  CHECK(gcl_stream_synchronize(w->s));
  for (int q = 0; q < QUEUED; q++) verify(w, q, (q + 1) % 2, "queued replay", q);
  close_world(w);
}

Test(graph_repoint, top_level_maps) { run_placement(TOP_LEVEL, 16); }
Test(graph_repoint, struct_field_maps) { run_placement(STRUCT_FIELD, 16); }
Test(graph_repoint, table_maps) { run_placement(TABLE, MAX_MAPS); }

/* --- PDL ---------------------------------------------------------------------------------------- */

#define PDL_N (1 << 20)

#define PDL_MAPS 4

/* A table of PDL_MAPS maps over x (as 1024 x 1024 i32), map i starting at row 16 i. */
static void pdl_table_point(gcl_tensormap_table *t, uint64_t x, bool set) {
  int64_t shape[2] = {1024, 1024};
  DLTensor tx[PDL_MAPS];
  const DLTensor *tp[PDL_MAPS];
  uint64_t at[PDL_MAPS];
  for (int i = 0; i < PDL_MAPS; i++) {
    at[i] = x + (uint64_t)i * 16 * 1024 * 4;
    tx[i] = (DLTensor){.data = (void *)(uintptr_t)at[i], .device = {kDLCUDA, 0}, .ndim = 2,
                       .dtype = {kDLInt, 32, 1}, .shape = shape};
    tp[i] = &tx[i];
  }
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = 16, o.box[1] = 16;
  if (set) CHECK(gcl_tensormap_table_set(t, 0, PDL_MAPS, tp, &o, 1, 0));
  else CHECK(gcl_tensormap_table_repoint(t, 0, PDL_MAPS, at));
}

/* The table's device copy is the host maps as last set (the replay's copy node ran first). */
static void pdl_table_check(gcl_context *ctx, gcl_tensormap_table *t, int r) {
  unsigned char dev[PDL_MAPS * 128];
  CHECK(gcl_mem_download(ctx, dev, gcl_tensormap_table_address(t), sizeof dev));
  cr_assert(!memcmp(dev, gcl_tensormap_table_map(t, 0), sizeof dev),
            "PDL replay %d: the table's device copy is not the maps set for it", r);
}

/* pdl_producer writes x[i] = i + 1 into x; pdl_waits (launched with PDL: it may start before the
 * producer finished, and waits through griddepcontrol.wait) copies x into y. Captured once with
 * a tensor-map table (its copy node goes before the producer; the programmatic edge between the
 * pair stays as captured: issue 55, cuGraphGetEdges refused such a graph with LOSSY_QUERY);
 * replayed over two (x, y) pairs in turn, both poisoned before each replay, the args updated
 * with gcl_graph_set_args and the table re-pointed to x and updated with gcl_graph_set_table. */
Test(graph_repoint, pdl_pair_captured_and_replayed) {
  gcl_context *ctx;
  CHECK(gcl_context_create(0, &ctx));
  if (gcl_context_sm(ctx) < 90) {
    gcl_context_destroy(ctx);
    cr_skip_test("PDL needs sm_90");
  }
  gcl_stream *s;
  CHECK(gcl_stream_create(ctx, 0, &s));
  gcl_module *m = load(ctx, "pdl.fatbin");
  gcl_kernel *producer, *waits;
  CHECK(gcl_module_find_kernel(m, "pdl_producer", NULL, &producer));
  CHECK(gcl_module_find_kernel(m, "pdl_waits", NULL, &waits));
  uint64_t x[2], y[2];
  for (int c = 0; c < 2; c++) {
    CHECK(gcl_mem_alloc(ctx, 4 * PDL_N, &x[c]));
    CHECK(gcl_mem_alloc(ctx, 4 * PDL_N, &y[c]));
  }
  gcl_args *pa, *wa;
  CHECK(gcl_args_create(gcl_kernel_layout(producer), &pa));
  CHECK(gcl_args_create(gcl_kernel_layout(waits), &wa));
  int32_t n = PDL_N;
  CHECK(gcl_args_set_ptr(pa, 0, x[0]));
  CHECK(gcl_args_set_i32(pa, 1, n));
  CHECK(gcl_args_set_ptr(wa, 0, x[0]));
  CHECK(gcl_args_set_ptr(wa, 1, y[0]));
  CHECK(gcl_args_set_i32(wa, 2, n));
  gcl_launch_config prod = {.grid = {PDL_N / 256}, .block = {256}, .stream = gcl_stream_handle(s)};
  gcl_launch_config dep = prod;
  dep.programmatic_dependent_launch = true;
  gcl_tensormap_table *t;
  CHECK(gcl_tensormap_table_create(ctx, PDL_MAPS, &t));
  pdl_table_point(t, x[0], true);
  gcl_graph *g;
  CHECK(gcl_graph_capture_begin(s));
  CHECK(gcl_graph_capture_table(s, t));
  CHECK(gcl_launch(producer, &prod, pa));
  CHECK(gcl_launch(waits, &dep, wa));
  CHECK(gcl_graph_capture_end(s, &g));
  size_t count = 0;
  CHECK(gcl_graph_kernel_count(g, &count));
  cr_assert_eq(count, 2);
  int32_t *got = malloc(4 * PDL_N);
  for (int r = 0; r < ROUNDS; r++) {
    int c = r % 2;
    CHECK(gcl_args_set_ptr(pa, 0, x[c]));
    CHECK(gcl_args_set_ptr(wa, 0, x[c]));
    CHECK(gcl_args_set_ptr(wa, 1, y[c]));
    CHECK(gcl_graph_set_args(g, 0, producer, pa));
    CHECK(gcl_graph_set_args(g, 1, waits, wa));
    pdl_table_point(t, x[c], false);
    CHECK(gcl_graph_set_table(g, t));
    CHECK(gcl_mem_fill_u8_async(ctx, x[c], 0xff, 4 * PDL_N, s));
    CHECK(gcl_mem_fill_u8_async(ctx, y[c], 0xff, 4 * PDL_N, s));
    CHECK(gcl_graph_launch(g, s));
    CHECK(gcl_stream_synchronize(s));
    CHECK(gcl_mem_download(ctx, got, y[c], 4 * PDL_N));
    pdl_table_check(ctx, t, r);
    size_t bad = 0;
    for (int i = 0; i < PDL_N; i++)
      if (got[i] != i + 1 && bad++ < 5)
        fprintf(stderr, "PDL replay %d: y[%d] = %d, expected %d\n", r, i, got[i], i + 1);
    cr_assert_eq(bad, 0, "PDL replay %d: %zu of %d elements not the producer's", r, bad, PDL_N);
  }
  free(got);
  gcl_graph_destroy(g);
  gcl_tensormap_table_destroy(t);
  gcl_args_destroy(pa);
  gcl_args_destroy(wa);
  for (int c = 0; c < 2; c++) gcl_mem_free(ctx, x[c]), gcl_mem_free(ctx, y[c]);
  gcl_module_destroy(m);
  gcl_stream_destroy(s);
  gcl_context_destroy(ctx);
}

/* Free device memory through the driver itself (cuMemGetInfo_v2 of the current context). */
static size_t device_free_bytes(void) {
  void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  cr_assert(cu, "libcuda.so.1: %s", dlerror());
  int (*info)(size_t *, size_t *) = (int (*)(size_t *, size_t *))dlsym(cu, "cuMemGetInfo_v2");
  cr_assert(info);
  size_t free_b = 0, total = 0;
  cr_assert_eq(info(&free_b, &total), 0);
  dlclose(cu);
  return free_b;
}

/* A buffer freed and a module unloaded while this thread captures (a Python Buffer dropped
 * inside `with stream.capture()`): the driver refuses a capturing thread's cuMemFree and the
 * refusal invalidates the capture; gclaunch keeps both releases until the capture ends. The
 * capture must end and replay, and the memory must be back afterwards. */
Test(graph_repoint, free_and_unload_during_a_capture) {
  gcl_context *ctx;
  CHECK(gcl_context_create(0, &ctx));
  gcl_stream *s;
  CHECK(gcl_stream_create(ctx, 0, &s));
  gcl_module *m = load(ctx, "pdl.fatbin"), *m2 = load(ctx, "pdl.fatbin");
  gcl_kernel *producer;
  CHECK(gcl_module_find_kernel(m, "pdl_producer", NULL, &producer));
  const size_t big = (size_t)2 << 30; /* far above what a capture and its graph may take */
  uint64_t x, gone;
  CHECK(gcl_mem_alloc(ctx, 4 * PDL_N, &x));
  CHECK(gcl_mem_alloc(ctx, big, &gone));
  CHECK(gcl_mem_fill_u8_async(ctx, gone, 1, big, s));
  CHECK(gcl_stream_synchronize(s));
  size_t before = device_free_bytes();
  gcl_args *pa;
  CHECK(gcl_args_create(gcl_kernel_layout(producer), &pa));
  CHECK(gcl_args_set_ptr(pa, 0, x));
  CHECK(gcl_args_set_i32(pa, 1, PDL_N));
  gcl_launch_config cfg = {.grid = {PDL_N / 256}, .block = {256}, .stream = gcl_stream_handle(s)};
  gcl_graph *g, *old;
  CHECK(gcl_graph_capture_begin(s));
  CHECK(gcl_launch(producer, &cfg, pa));
  CHECK(gcl_graph_capture_end(s, &old));
  CHECK(gcl_graph_capture_begin(s));
  CHECK(gcl_launch(producer, &cfg, pa));
  CHECK(gcl_mem_free(ctx, gone));
  gcl_module_destroy(m2);
  gcl_graph_destroy(old); /* its exec's destroy: deferred too */
  CHECK(gcl_launch(producer, &cfg, pa));
  CHECK(gcl_graph_capture_end(s, &g));
  size_t count = 0;
  CHECK(gcl_graph_kernel_count(g, &count));
  cr_assert_eq(count, 2);
  CHECK(gcl_graph_launch(g, s));
  CHECK(gcl_stream_synchronize(s));
  size_t after = device_free_bytes();
  printf("free during a capture: %zu MiB free before, %zu MiB after the capture ended\n",
         before >> 20, after >> 20);
  /* The capture, its graph and the replay take some memory themselves (151 MiB on an H200):
   * the 2 GiB must be back all the same. */
  cr_assert_geq(after, before + big - ((size_t)512 << 20),
                "2 GiB freed during the capture not back after it ended: %zu -> %zu MiB",
                before >> 20, after >> 20);
  int32_t *got = malloc(4 * PDL_N);
  CHECK(gcl_mem_download(ctx, got, x, 4 * PDL_N));
  for (int i = 0; i < PDL_N; i++) cr_assert_eq(got[i], i + 1, "replay: x[%d] = %d", i, got[i]);
  free(got);
  gcl_graph_destroy(g);
  gcl_args_destroy(pa);
  gcl_mem_free(ctx, x);
  gcl_module_destroy(m);
  gcl_stream_destroy(s);
  gcl_context_destroy(ctx);
}

/* The fact the deferral rests on (docs/graphs.md): the driver refuses a capturing thread's own
 * cuMemFree with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the capture is invalidated. */
Test(graph_repoint, the_driver_refuses_a_free_during_a_capture) {
  gcl_context *ctx;
  CHECK(gcl_context_create(0, &ctx));
  gcl_stream *s;
  CHECK(gcl_stream_create(ctx, 0, &s));
  uint64_t x, raw;
  CHECK(gcl_mem_alloc(ctx, 4096, &x));
  CHECK(gcl_mem_alloc(ctx, 4096, &raw));
  void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  cr_assert(cu, "libcuda.so.1: %s", dlerror());
  int (*mem_free)(uint64_t) = (int (*)(uint64_t))dlsym(cu, "cuMemFree_v2");
  cr_assert(mem_free);
  CHECK(gcl_graph_capture_begin(s));
  CHECK(gcl_mem_fill_u8_async(ctx, x, 7, 4096, s));
  int rc = mem_free(raw);
  gcl_graph *g = NULL;
  gcl_status end = gcl_graph_capture_end(s, &g);
  printf("raw cuMemFree during a capture: %d; the capture's end: %s\n", rc,
         end == GCL_OK ? "ok" : gcl_last_error());
  cr_assert_eq(rc, 900, "cuMemFree during a capture gave %d, not CUDA_ERROR_STREAM_CAPTURE_"
               "UNSUPPORTED (900): docs/graphs.md's table is wrong on this driver", rc);
  cr_assert_neq(end, GCL_OK, "the capture survived a refused cuMemFree");
  if (g) gcl_graph_destroy(g);
  CHECK(gcl_mem_free(ctx, raw));
  CHECK(gcl_mem_free(ctx, x));
  dlclose(cu);
  gcl_stream_destroy(s);
  gcl_context_destroy(ctx);
}
