/* The launch edge on a GPU (kernels/persistent.cu): persistent kernels sized by occupancy on a
 * gclaunch stream, pinned memory with asynchronous copies, timed with events, captured into a
 * graph of four launches, two nodes' arguments replaced (one an 8 KiB grid-constant aggregate),
 * replayed twice, every element checked against the host. Random data (seed printed). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"
#include "kernel_image.h"
#include "../common/test_rng.h"

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())
#define N (1u << 20)
#define WEIGHTS 2048
#define AXPY_SIG "f32 a, const f32* x, f32* y, u64 n"
#define TABLE_SIG "grid_constant bytes(8208) align(16) t, const f32* x, f32* out, u64 n"

typedef struct table { float w[WEIGHTS]; float bias; float pad[3]; } table;

typedef struct rig {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *axpy, *tab;
  gcl_stream *s;
  gcl_launch_config cfg;
  uint64_t x, y, out;
  float *hx, *hy, *hout; /* pinned */
} rig;

static float frand(void) { return (float)(rng() % 2001) / 1000.0f - 1.0f; }

static void rig_open(rig *r) {
  seed_rng_for("test_persistent");
  memset(r, 0, sizeof *r);
  CHECK(gcl_context_create(0, &r->ctx));
  size_t size = 0;
  void *image = kernel_image("persistent", gcl_context_sm(r->ctx), &size);
  CHECK(gcl_module_load_data(r->ctx, image, size, &r->mod));
  free(image);
  CHECK(gcl_module_find_kernel(r->mod, "persistent_axpy", AXPY_SIG, &r->axpy));
  CHECK(gcl_module_find_kernel(r->mod, "persistent_table", TABLE_SIG, &r->tab));
  CHECK(gcl_stream_create(r->ctx, 0, &r->s));
  CHECK(gcl_kernel_persistent_config(r->axpy, 256, 0, &r->cfg));
  r->cfg.stream = gcl_stream_handle(r->s);
  CHECK(gcl_mem_alloc(r->ctx, N * 4, &r->x));
  CHECK(gcl_mem_alloc(r->ctx, N * 4, &r->y));
  CHECK(gcl_mem_alloc(r->ctx, N * 4, &r->out));
  CHECK(gcl_host_alloc(r->ctx, N * 4, (void **)&r->hx));
  CHECK(gcl_host_alloc(r->ctx, N * 4, (void **)&r->hy));
  CHECK(gcl_host_alloc(r->ctx, N * 4, (void **)&r->hout));
  for (size_t i = 0; i < N; i++) r->hx[i] = frand(), r->hy[i] = frand();
}

static void rig_close(rig *r) {
  gcl_host_free(r->ctx, r->hx);
  gcl_host_free(r->ctx, r->hy);
  gcl_host_free(r->ctx, r->hout);
  gcl_mem_free(r->ctx, r->x);
  gcl_mem_free(r->ctx, r->y);
  gcl_mem_free(r->ctx, r->out);
  gcl_stream_destroy(r->s);
  gcl_module_destroy(r->mod);
  gcl_context_destroy(r->ctx);
}

static gcl_args *axpy_args(rig *r, float a) {
  gcl_args *args;
  CHECK(gcl_args_create(gcl_kernel_layout(r->axpy), &args));
  CHECK(gcl_args_set_f32(args, 0, a));
  CHECK(gcl_args_set_ptr(args, 1, r->x));
  CHECK(gcl_args_set_ptr(args, 2, r->y));
  CHECK(gcl_args_set_u64(args, 3, N));
  return args;
}

static gcl_args *table_args(rig *r, table *t) {
  gcl_args *args;
  for (int i = 0; i < WEIGHTS; i++) t->w[i] = frand();
  t->bias = frand();
  memset(t->pad, 0, sizeof t->pad);
  CHECK(gcl_args_create(gcl_kernel_layout(r->tab), &args));
  CHECK(gcl_args_set(args, 0, t, sizeof *t));
  CHECK(gcl_args_set_ptr(args, 1, r->x));
  CHECK(gcl_args_set_ptr(args, 2, r->out));
  CHECK(gcl_args_set_u64(args, 3, N));
  return args;
}

/* y (from hy0) after axpy with a[0..count-1] in turn, and out from t, against the device's. */
static void verify(rig *r, const float *hy0, const float *a, int count, const table *t) {
  size_t bad = 0;
  for (size_t i = 0; i < N && bad < 5; i++) {
    float y = hy0[i];
    for (int k = 0; k < count; k++) y = a[k] * r->hx[i] + y;
    float o = r->hx[i] * t->w[i % WEIGHTS] + t->bias;
    if (fabsf(r->hy[i] - y) > 1e-4f * (1 + fabsf(y)) || fabsf(r->hout[i] - o) > 1e-5f * (1 + fabsf(o))) {
      bad++;
      fprintf(stderr, "element %zu: y %g (want %g), out %g (want %g)\n", i, r->hy[i], y, r->hout[i], o);
    }
  }
  cr_assert_eq(bad, 0, "results differ from the host");
}

Test(persistent, occupancy_sized_grid_async_copies_events) {
  rig r;
  rig_open(&r);
  gcl_device_info info;
  int per_sm = 0;
  CHECK(gcl_device_query(0, &info));
  CHECK(gcl_kernel_occupancy(r.axpy, 256, 0, &per_sm));
  cr_assert_gt(per_sm, 0);
  cr_assert_eq(r.cfg.grid[0], (unsigned)(per_sm * info.multiprocessors));
  unsigned coop = 0;
  CHECK(gcl_kernel_max_cooperative_grid(r.axpy, 256, 0, &coop));
  cr_assert_eq(coop, r.cfg.grid[0]);
  fprintf(stderr, "persistent grid: %d SMs x %d blocks of 256 = %u\n", info.multiprocessors, per_sm, coop);
  float *hy0 = malloc(N * 4);
  memcpy(hy0, r.hy, N * 4);
  table t;
  gcl_args *aa = axpy_args(&r, 1.5f), *ta = table_args(&r, &t);
  gcl_event *e0, *e1;
  CHECK(gcl_event_create(r.ctx, &e0));
  CHECK(gcl_event_create(r.ctx, &e1));
  CHECK(gcl_mem_upload_async(r.ctx, r.x, r.hx, N * 4, r.s));
  CHECK(gcl_mem_upload_async(r.ctx, r.y, r.hy, N * 4, r.s));
  CHECK(gcl_mem_fill_u32_async(r.ctx, r.out, 0x7fc00000u /* NaN */, N, r.s));
  CHECK(gcl_event_record(e0, r.s));
  CHECK(gcl_launch(r.axpy, &r.cfg, aa));
  gcl_launch_config tcfg;
  memcpy(&tcfg, &r.cfg, sizeof tcfg);
  CHECK(gcl_kernel_persistent_config(r.tab, 128, 0, &tcfg));
  CHECK(gcl_launch(r.tab, &tcfg, ta));
  CHECK(gcl_event_record(e1, r.s));
  CHECK(gcl_mem_download_async(r.ctx, r.hy, r.y, N * 4, r.s));
  CHECK(gcl_mem_download_async(r.ctx, r.hout, r.out, N * 4, r.s));
  CHECK(gcl_stream_synchronize(r.s));
  bool done = false;
  CHECK(gcl_event_query(e1, &done));
  cr_assert(done);
  double us = 0;
  CHECK(gcl_event_elapsed_us(e0, e1, &us));
  cr_assert(us > 0 && us < 1e6, "two kernels over 4 MiB took %.1f us", us);
  fprintf(stderr, "axpy + table over %u floats: %.1f us (events)\n", N, us);
  float a = 1.5f;
  verify(&r, hy0, &a, 1, &t);
  gcl_args_destroy(aa);
  gcl_args_destroy(ta);
  gcl_event_destroy(e0);
  gcl_event_destroy(e1);
  free(hy0);
  rig_close(&r);
}

Test(persistent, graph_of_four_launches_with_replaced_args) {
  rig r;
  rig_open(&r);
  float *hy0 = malloc(N * 4);
  memcpy(hy0, r.hy, N * 4);
  table t0, t1;
  gcl_args *a1 = axpy_args(&r, 1.0f), *a2 = axpy_args(&r, 2.0f), *tab0 = table_args(&r, &t0);
  gcl_launch_config tcfg;
  memcpy(&tcfg, &r.cfg, sizeof tcfg);
  CHECK(gcl_kernel_persistent_config(r.tab, 128, 0, &tcfg));
  CHECK(gcl_mem_upload(r.ctx, r.x, r.hx, N * 4));
  CHECK(gcl_graph_capture_begin(r.s));
  CHECK(gcl_launch(r.axpy, &r.cfg, a1));   /* node 0 */
  CHECK(gcl_launch(r.tab, &tcfg, tab0));   /* node 1: the 8 KiB aggregate */
  CHECK(gcl_launch(r.axpy, &r.cfg, a2));   /* node 2 */
  CHECK(gcl_launch(r.axpy, &r.cfg, a1));   /* node 3 */
  gcl_graph *g;
  CHECK(gcl_graph_capture_end(r.s, &g));
  size_t n = 0;
  CHECK(gcl_graph_kernel_count(g, &n));
  cr_assert_eq(n, 4);
  /* Replace node 1's table and node 2's a; the args may go away after the update. */
  gcl_args *tab1 = table_args(&r, &t1), *a5 = axpy_args(&r, 5.0f);
  CHECK(gcl_graph_set_args(g, 1, r.tab, tab1));
  CHECK(gcl_graph_set_args(g, 2, r.axpy, a5));
  gcl_args_destroy(tab1);
  gcl_args_destroy(a5);
  cr_assert_eq(gcl_graph_set_args(g, 0, r.tab, tab0), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "kernel_node 0: it runs another kernel"), "%s", gcl_last_error());
  cr_assert_eq(gcl_graph_set_args(g, 4, r.axpy, a1), GCL_ERROR_INVALID_ARGUMENT);
  gcl_event *e0, *e1;
  CHECK(gcl_event_create(r.ctx, &e0));
  CHECK(gcl_event_create(r.ctx, &e1));
  for (int rep = 0; rep < 2; rep++) {
    CHECK(gcl_mem_upload_async(r.ctx, r.y, hy0, N * 4, r.s));
    CHECK(gcl_event_record(e0, r.s));
    CHECK(gcl_graph_launch(g, r.s));
    CHECK(gcl_event_record(e1, r.s));
    CHECK(gcl_mem_download_async(r.ctx, r.hy, r.y, N * 4, r.s));
    CHECK(gcl_mem_download_async(r.ctx, r.hout, r.out, N * 4, r.s));
    CHECK(gcl_stream_synchronize(r.s));
    double us = 0;
    CHECK(gcl_event_elapsed_us(e0, e1, &us));
    fprintf(stderr, "graph replay %d: 4 kernels in %.1f us (events)\n", rep, us);
    const float a[3] = {1.0f, 5.0f, 1.0f};
    verify(&r, hy0, a, 3, &t1);
  }
  gcl_graph_destroy(g);
  gcl_args_destroy(a1);
  gcl_args_destroy(a2);
  gcl_args_destroy(tab0);
  gcl_event_destroy(e0);
  gcl_event_destroy(e1);
  free(hy0);
  rig_close(&r);
}

Test(persistent, stream_priorities_and_attributes) {
  rig r;
  rig_open(&r);
  gcl_stream *hi;
  CHECK(gcl_stream_create(r.ctx, -1, &hi));
  cr_assert_eq(gcl_stream_create(r.ctx, 1, &hi), GCL_ERROR_INVALID_ARGUMENT);
  fprintf(stderr, "priority refusal: %s\n", gcl_last_error());
  CHECK(gcl_kernel_set_attribute(r.tab, GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, 100 * 1024));
  CHECK(gcl_kernel_set_attribute(r.tab, GCL_KERNEL_PREFERRED_CARVEOUT, 100));
  int v = 0;
  CHECK(gcl_kernel_attribute(r.tab, GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, &v));
  cr_assert_eq(v, 100 * 1024);
  int per_sm = 0;
  CHECK(gcl_kernel_occupancy(r.tab, 128, 100 * 1024, &per_sm));
  cr_assert(per_sm >= 1 && per_sm <= 2, "100 KiB blocks per SM: %d", per_sm);
  cr_assert_not_null(gcl_kernel_cu_function(r.tab));
  cr_assert_not_null(gcl_module_cu_library(r.mod));
  cr_assert_not_null(gcl_context_cu_context(r.ctx));
  gcl_stream_destroy(hi);
  rig_close(&r);
}
