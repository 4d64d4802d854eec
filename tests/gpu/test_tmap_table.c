/* gcl_tensormap_table end to end, written from the public header and
 * include/gclaunch/tmap_table.cuh only: K = 4096 f32 tensors of random shapes, pitches and
 * byte_offsets, their maps in a device table (more than the parameter's 240), a kernel
 * (kernels/tmap_table.cu) that picks each block's map by run-time index, fences it and TMA-loads a
 * 16 x 16 box; every element checked against a host reference (boxes inside and across the
 * edges, zeros outside). Then half the maps re-pointed to a second copy of the data with other
 * values, only those uploaded, checked again. And the device-built route (sm_90a cubin:
 * tensormap.replace of a template in shared memory into a per-block slot) over 4096 tensors of
 * one shape. Seed printed; GCL_TEST_SEED=N repeats it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"
#include "../common/test_rng.h"

#define K 4096
#define BOX 16
#define WORK 16384
#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())

typedef struct view {
  int64_t shape[2], strides[2];
  DLTensor t;
  size_t at; /* element offset in the allocation of data + byte_offset */
} view;

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = malloc((size_t)n);
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) free(p), p = NULL;
  fclose(f);
  *size = (size_t)n;
  return p;
}

static gcl_module *load(gcl_context *ctx, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", GCL_KERNEL_DIR, file);
  size_t size;
  void *image = read_file(path, &size);
  cr_assert_not_null(image, "cannot read %s", path);
  gcl_module *m;
  CHECK(gcl_module_load_data(ctx, image, size, &m));
  free(image);
  return m;
}

static void set_ptr(gcl_args *a, size_t index, uint64_t address) {
  gcl_field f;
  CHECK(gcl_layout_param_field(gcl_args_layout(a), index, &f));
  CHECK(gcl_args_set_field_ptr(a, &f, address));
}

static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(rng() % (uint64_t)(hi - lo + 1)); }

static float at(const float *host, const view *v, int64_t r, int64_t c) {
  if (r < 0 || c < 0 || r >= v->shape[0] || c >= v->shape[1]) return 0.0f; /* OOB fill */
  return host[v->at + (size_t)(r * v->strides[0] + c)];
}

/* Item b: a random map, an aligned column (multiple of 4 floats) and a row around the tensor. */
static void pick_work(const view *v, int32_t *w) {
  for (int b = 0; b < WORK; b++) {
    int m = (int)(rng() % K);
    int64_t cols = v[m].shape[1], rows = v[m].shape[0];
    w[3 * b] = m;
    w[3 * b + 1] = (int32_t)(4 * pick(-BOX / 4, (cols + 3) / 4));
    w[3 * b + 2] = (int32_t)pick(-BOX / 2, rows);
  }
}

static void verify(const float *out, const int32_t *w, const view *v, const float *host,
                   const char *what) {
  size_t bad = 0;
  for (int b = 0; b < WORK; b++)
    for (int y = 0; y < BOX; y++)
      for (int x = 0; x < BOX; x++) {
        const view *t = &v[w[3 * b]];
        float want = at(host, t, w[3 * b + 2] + y, w[3 * b + 1] + x);
        if (out[256 * b + 16 * y + x] != want && bad++ < 5)
          fprintf(stderr, "%s: item %d (map %d, col %d, row %d) [%d][%d]: %g, expected %g\n",
                  what, b, w[3 * b], w[3 * b + 1], w[3 * b + 2], y, x,
                  (double)out[256 * b + 16 * y + x], (double)want);
      }
  cr_assert_eq(bad, 0, "%s: %zu of %d elements differ from the host reference", what, bad,
               WORK * 256);
}

/* The test's data and device state: K views over one allocation (and its second copy), their
 * host references, the work and output buffers, the stream and the launch configuration. */
typedef struct rig {
  gcl_context *ctx;
  gcl_stream *s;
  gcl_module *mod;
  size_t total;             /* floats per copy */
  float *host, *host2, *got;
  int32_t *w;
  uint64_t buf, buf2, work, out;
  gcl_launch_config cfg;
} rig;

/* K views of one allocation, each rows x cols with its own pitch and 16-byte aligned start;
 * both copies of the data, on the host and on the device. */
static void rig_data(rig *r, view *v) {
  r->total = 0;
  for (int i = 0; i < K; i++) {
    int64_t rows = pick(1, 40), cols = 4 * pick(1, 12), pitch = cols + 4 * pick(0, 2);
    v[i].shape[0] = rows, v[i].shape[1] = cols, v[i].strides[0] = pitch, v[i].strides[1] = 1;
    v[i].at = r->total;
    r->total += (size_t)(rows * pitch) + 4 * (size_t)pick(0, 3);
  }
  r->host = malloc(r->total * 4), r->host2 = malloc(r->total * 4);
  for (size_t i = 0; i < r->total; i++)
    r->host[i] = (float)(rng() % 1000003) / 3.0f, r->host2[i] = -(float)(rng() % 999983) / 5.0f;
  CHECK(gcl_mem_alloc(r->ctx, r->total * 4, &r->buf));
  CHECK(gcl_mem_alloc(r->ctx, r->total * 4, &r->buf2));
  CHECK(gcl_mem_upload(r->ctx, r->buf, r->host, r->total * 4));
  CHECK(gcl_mem_upload(r->ctx, r->buf2, r->host2, r->total * 4));
  for (int i = 0; i < K; i++) {
    uint64_t off = 4 * (uint64_t)v[i].at; /* split into data and byte_offset at random */
    uint64_t data_part = off - 16 * (uint64_t)pick(0, (int64_t)(off / 16));
    v[i].t = (DLTensor){.data = (void *)(uintptr_t)(r->buf + data_part), .device = {kDLCUDA, 0},
                        .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = v[i].shape,
                        .strides = v[i].strides, .byte_offset = off - data_part};
  }
}

/* The stream, the module, the work and output buffers, one block per work item. */
static void rig_open(rig *r, view *v) {
  rig_data(r, v);
  CHECK(gcl_stream_create(r->ctx, 0, &r->s));
  r->mod = load(r->ctx, "tmap_table.sm_90a.cubin");
  r->w = malloc(sizeof(int32_t) * 3 * WORK);
  r->got = malloc(sizeof(float) * 256 * WORK);
  CHECK(gcl_mem_alloc(r->ctx, sizeof(int32_t) * 3 * WORK, &r->work));
  CHECK(gcl_mem_alloc(r->ctx, sizeof(float) * 256 * WORK, &r->out));
  memset(&r->cfg, 0, sizeof r->cfg);
  r->cfg.grid[0] = WORK, r->cfg.block[0] = 128, r->cfg.stream = gcl_stream_handle(r->s);
}

static void rig_close(rig *r) {
  gcl_module_destroy(r->mod);
  gcl_stream_destroy(r->s);
  gcl_mem_free(r->ctx, r->work);
  gcl_mem_free(r->ctx, r->out);
  gcl_mem_free(r->ctx, r->buf);
  gcl_mem_free(r->ctx, r->buf2);
  free(r->host), free(r->host2), free(r->w), free(r->got);
}

/* New work over v, one launch of k, its output into r->got. */
static void gather(rig *r, gcl_kernel *k, gcl_args *args, const view *v) {
  pick_work(v, r->w);
  CHECK(gcl_mem_upload(r->ctx, r->work, r->w, sizeof(int32_t) * 3 * WORK));
  CHECK(gcl_launch(k, &r->cfg, args));
  CHECK(gcl_stream_synchronize(r->s));
  CHECK(gcl_mem_download(r->ctx, r->got, r->out, sizeof(float) * 256 * WORK));
}

/* After the re-point: odd maps read the second copy. */
static void verify_repointed(const rig *r, const view *v) {
  size_t bad = 0;
  for (int b = 0; b < WORK; b++) {
    const view *t = &v[r->w[3 * b]];
    const float *h = r->w[3 * b] % 2 ? r->host2 : r->host;
    for (int y = 0; y < BOX; y++)
      for (int x = 0; x < BOX; x++)
        bad += r->got[256 * b + 16 * y + x] != at(h, t, r->w[3 * b + 2] + y, r->w[3 * b + 1] + x);
  }
  cr_assert_eq(bad, 0, "after the re-point: %zu elements differ", bad);
}

/* The table route: K maps in a device table, picked by run-time index; then every odd map
 * re-pointed to the same place in the second copy: only those are uploaded. */
static void table_route(rig *r, view *v, const gcl_tensormap_options *o) {
  static const DLTensor *tp[K];
  for (int i = 0; i < K; i++) tp[i] = &v[i].t;
  gcl_tensormap_table *table;
  CHECK(gcl_tensormap_table_create(r->ctx, K, &table));
  CHECK(gcl_tensormap_table_set(table, 0, K, tp, o, 1, 0));
  cr_assert_eq(gcl_tensormap_table_dirty(table), K);
  CHECK(gcl_tensormap_table_upload(table, r->s));
  cr_assert_eq(gcl_tensormap_table_dirty(table), 0);
  gcl_kernel *k;
  CHECK(gcl_module_find_kernel(r->mod, "tmap_table_gather", "const void* table, const i32* work, f32* out", &k));
  gcl_args *args;
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  set_ptr(args, 0, gcl_tensormap_table_address(table));
  set_ptr(args, 1, r->work);
  set_ptr(args, 2, r->out);
  gather(r, k, args, v);
  verify(r->got, r->w, v, r->host, "table, first upload");
  static uint64_t addr[K];
  for (int i = 0; i < K; i++) addr[i] = (i % 2 ? r->buf2 : r->buf) + 4 * (uint64_t)v[i].at;
  CHECK(gcl_tensormap_table_repoint(table, 0, K, addr));
  cr_assert_eq(gcl_tensormap_table_dirty(table), K / 2);
  CHECK(gcl_tensormap_table_upload(table, r->s));
  gather(r, k, args, v);
  verify_repointed(r, v);
  gcl_args_destroy(args);
  gcl_tensormap_table_destroy(table);
}

/* The device-built route: K tensors of one shape (32 x 32, pitch 36) at K places, one template
 * (any map of that shape), the addresses in global memory, a slot per block. */
static void device_route(rig *r, const gcl_tensormap_options *o) {
  gcl_kernel *kd;
  CHECK(gcl_module_find_kernel(r->mod, "tmap_device_gather",
                       "grid_constant tensormap tmpl, const u64* addrs, void* slots, const i32* work, f32* out",
                       &kd));
  static view u[K];
  static uint64_t uaddr[K];
  for (int i = 0; i < K; i++) {
    u[i].shape[0] = 32, u[i].shape[1] = 32, u[i].strides[0] = 36, u[i].strides[1] = 1;
    u[i].at = (size_t)4 * (size_t)pick(0, (int64_t)((r->total - 32 * 36) / 4));
    uaddr[i] = r->buf + 4 * (uint64_t)u[i].at;
  }
  u[0].t = (DLTensor){.data = (void *)(uintptr_t)uaddr[0], .device = {kDLCUDA, 0}, .ndim = 2,
                      .dtype = {kDLFloat, 32, 1}, .shape = u[0].shape, .strides = u[0].strides};
  uint64_t daddrs, slots;
  CHECK(gcl_mem_alloc(r->ctx, sizeof uaddr, &daddrs));
  CHECK(gcl_mem_upload(r->ctx, daddrs, uaddr, sizeof uaddr));
  CHECK(gcl_mem_alloc(r->ctx, 128 * (size_t)WORK, &slots));
  gcl_args *dargs;
  CHECK(gcl_args_create(gcl_kernel_layout(kd), &dargs));
  gcl_field tf;
  CHECK(gcl_layout_param_field(gcl_args_layout(dargs), 0, &tf));
  const DLTensor *t0 = &u[0].t;
  CHECK(gcl_args_set_tensormaps(dargs, r->ctx, &tf, 1, &t0, o, 1, 0));
  set_ptr(dargs, 1, daddrs);
  set_ptr(dargs, 2, slots);
  set_ptr(dargs, 3, r->work);
  set_ptr(dargs, 4, r->out);
  gather(r, kd, dargs, u);
  verify(r->got, r->w, u, r->host, "device-built");
  gcl_args_destroy(dargs);
  gcl_mem_free(r->ctx, daddrs);
  gcl_mem_free(r->ctx, slots);
}

Test(tmap_table, k4096_maps_by_runtime_index_exact) {
  seed_rng_for("test_tmap_table");
  rig r = {0};
  CHECK(gcl_context_create(0, &r.ctx));
  if (gcl_context_sm(r.ctx) < 90) {
    gcl_context_destroy(r.ctx);
    cr_skip_test("tensor maps need sm_90 (the device is sm_%d)", gcl_context_sm(r.ctx));
  }
  static view v[K];
  rig_open(&r, v);
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = BOX, o.box[1] = BOX;
  table_route(&r, v, &o);
  device_route(&r, &o);
  rig_close(&r);
  gcl_context_destroy(r.ctx);
}
