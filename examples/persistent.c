/* A persistent-megakernel host program with nothing but <gclaunch/gclaunch.h>: no cuda.h, no
 * libcuda link (gclaunch opens the driver at run time). It loads kernels/persistent.cu's module,
 * sizes a persistent grid by occupancy, uploads from pinned memory on its own stream, times the
 * kernels with events, captures a graph of three launches, swaps the 8 KiB grid-constant table
 * of one node, replays the graph and checks every element against the host.
 *
 *   build/examples/example_persistent build/kernels/persistent.sm_90.cubin
 *
 * Prints "persistent: OK ..." and exits 0; 1 when a result differs; 2 on any gclaunch error
 * (the message says which call and why; without a GPU that is the driver's absence). */
#include <gclaunch/gclaunch.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1u << 22)
#define WEIGHTS 2048

typedef struct table { float w[WEIGHTS]; float bias; float pad[3]; } table; /* bytes(8208) align(16) */

static int failed(const char *what) {
  fprintf(stderr, "persistent: %s: %s\n", what, gcl_last_error());
  return 2;
}
#define TRY(call)                                                                                 \
  do {                                                                                            \
    if ((call) != GCL_OK) return failed(#call);                                                   \
  } while (0)

typedef struct app {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *axpy, *tab;
  gcl_args *axpy_args, *tab_args;
  gcl_stream *s;
  gcl_event *start, *stop;
  gcl_graph *graph;
  uint64_t x, y, out;
  float *hx, *hy, *hout; /* pinned: the copies are truly asynchronous */
  table t;
} app;

static void make_table(table *t, float scale) {
  for (int i = 0; i < WEIGHTS; i++) t->w[i] = scale * (float)(i % 17) - 3.0f;
  t->bias = scale;
  memset(t->pad, 0, sizeof t->pad);
}

static int setup(app *a, const char *path) {
  TRY(gcl_context_create(0, &a->ctx));
  TRY(gcl_module_load_file(a->ctx, path, &a->mod));
  TRY(gcl_module_find_kernel(a->mod, "persistent_axpy", "f32 a, const f32* x, f32* y, u64 n", &a->axpy));
  TRY(gcl_module_find_kernel(a->mod, "persistent_table",
                     "grid_constant bytes(8208) align(16) t, const f32* x, f32* out, u64 n", &a->tab));
  TRY(gcl_stream_create(a->ctx, 0, &a->s));
  TRY(gcl_event_create(a->ctx, &a->start));
  TRY(gcl_event_create(a->ctx, &a->stop));
  TRY(gcl_mem_alloc(a->ctx, N * 4, &a->x));
  TRY(gcl_mem_alloc(a->ctx, N * 4, &a->y));
  TRY(gcl_mem_alloc(a->ctx, N * 4, &a->out));
  TRY(gcl_host_alloc(a->ctx, N * 4, (void **)&a->hx));
  TRY(gcl_host_alloc(a->ctx, N * 4, (void **)&a->hy));
  TRY(gcl_host_alloc(a->ctx, N * 4, (void **)&a->hout));
  for (size_t i = 0; i < N; i++) a->hx[i] = (float)(i % 1000) / 250.0f, a->hy[i] = 1.0f;
  TRY(gcl_args_create(gcl_kernel_layout(a->axpy), &a->axpy_args));
  TRY(gcl_args_set_f32(a->axpy_args, 0, 2.0f));
  TRY(gcl_args_set_ptr(a->axpy_args, 1, a->x));
  TRY(gcl_args_set_ptr(a->axpy_args, 2, a->y));
  TRY(gcl_args_set_u64(a->axpy_args, 3, N));
  make_table(&a->t, 1.0f);
  TRY(gcl_args_create(gcl_kernel_layout(a->tab), &a->tab_args));
  TRY(gcl_args_set(a->tab_args, 0, &a->t, sizeof a->t));
  TRY(gcl_args_set_ptr(a->tab_args, 1, a->x));
  TRY(gcl_args_set_ptr(a->tab_args, 2, a->out));
  TRY(gcl_args_set_u64(a->tab_args, 3, N));
  return 0;
}

/* Captures axpy, table, axpy on the stream into a graph; swaps the table of node 1. */
static int capture(app *a, const gcl_launch_config *ca, const gcl_launch_config *ct) {
  TRY(gcl_graph_capture_begin(a->s));
  TRY(gcl_launch(a->axpy, ca, a->axpy_args));
  TRY(gcl_launch(a->tab, ct, a->tab_args));
  TRY(gcl_launch(a->axpy, ca, a->axpy_args));
  TRY(gcl_graph_capture_end(a->s, &a->graph));
  make_table(&a->t, 0.5f);                       /* the args may change: launches copied them */
  TRY(gcl_args_set(a->tab_args, 0, &a->t, sizeof a->t));
  TRY(gcl_graph_set_args(a->graph, 1, a->tab, a->tab_args));
  return 0;
}

static int run(app *a, double *us, unsigned *grid) {
  gcl_launch_config ca = {.stream = gcl_stream_handle(a->s)}, ct;
  TRY(gcl_kernel_persistent_config(a->axpy, 256, 0, &ca)); /* SMs x resident blocks per SM */
  ct = ca;
  TRY(gcl_kernel_persistent_config(a->tab, 128, 0, &ct));
  *grid = ca.grid[0];
  int rc = capture(a, &ca, &ct);
  if (rc) return rc;
  TRY(gcl_mem_upload_async(a->ctx, a->x, a->hx, N * 4, a->s));
  TRY(gcl_mem_upload_async(a->ctx, a->y, a->hy, N * 4, a->s));
  TRY(gcl_mem_fill_u32_async(a->ctx, a->out, 0x7fc00000u, N, a->s)); /* NaN: unwritten shows */
  TRY(gcl_event_record(a->start, a->s));
  TRY(gcl_graph_launch(a->graph, a->s));
  TRY(gcl_event_record(a->stop, a->s));
  TRY(gcl_mem_download_async(a->ctx, a->hy, a->y, N * 4, a->s));
  TRY(gcl_mem_download_async(a->ctx, a->hout, a->out, N * 4, a->s));
  TRY(gcl_stream_synchronize(a->s));
  TRY(gcl_event_elapsed_us(a->start, a->stop, us));
  return 0;
}

static size_t verify(const app *a) {
  size_t bad = 0;
  for (size_t i = 0; i < N; i++) {
    float y = 2.0f * a->hx[i] + (2.0f * a->hx[i] + 1.0f); /* two axpy nodes from y = 1 */
    float o = a->hx[i] * a->t.w[i % WEIGHTS] + a->t.bias;  /* the swapped table */
    if (fabsf(a->hy[i] - y) > 1e-5f * (1 + fabsf(y)) || fabsf(a->hout[i] - o) > 1e-5f * (1 + fabsf(o))) {
      if (bad++ < 3) fprintf(stderr, "element %zu: y %g want %g, out %g want %g\n", i, a->hy[i], y, a->hout[i], o);
    }
  }
  return bad;
}

static void teardown(app *a) {
  gcl_graph_destroy(a->graph);
  gcl_args_destroy(a->axpy_args);
  gcl_args_destroy(a->tab_args);
  if (a->ctx) {
    gcl_host_free(a->ctx, a->hx);
    gcl_host_free(a->ctx, a->hy);
    gcl_host_free(a->ctx, a->hout);
    if (a->x) gcl_mem_free(a->ctx, a->x);
    if (a->y) gcl_mem_free(a->ctx, a->y);
    if (a->out) gcl_mem_free(a->ctx, a->out);
  }
  gcl_event_destroy(a->start);
  gcl_event_destroy(a->stop);
  gcl_stream_destroy(a->s);
  gcl_module_destroy(a->mod);
  gcl_context_destroy(a->ctx);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s build/kernels/persistent.sm_90.cubin\n", argv[0]);
    return 2;
  }
  app a;
  memset(&a, 0, sizeof a);
  double us = 0;
  unsigned grid = 0;
  int rc = setup(&a, argv[1]);
  if (rc == 0) rc = run(&a, &us, &grid);
  if (rc == 0) {
    size_t bad = verify(&a);
    if (bad) fprintf(stderr, "persistent: %zu of %u elements differ\n", bad, 2 * N);
    else printf("persistent: OK (grid %u, graph of 3 kernels over %u floats in %.1f us)\n", grid, N, us);
    rc = bad ? 1 : 0;
  }
  teardown(&a);
  return rc;
}
