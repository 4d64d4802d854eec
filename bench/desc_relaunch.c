/* bench_descriptors: the whole relaunch, host and device (issue 27, part 3).
 *
 * "Same shapes, new buffers every step": each step re-points all K+1 maps at the other of two
 * tensor sets and launches the copy. What the host does per step, by placement (runner_repoint):
 *   P  gcl_args_repoint_tensormaps (K+1 maps in one call), then the ~K*128-byte launch;
 *   S  gcl_args_repoint_tensormaps per parameter (K+1 calls), then the launch;
 *   G  cuTensorMapReplaceAddress on each map of its host table, an upload of the table on the
 *      stream (128 bytes a map), the launch;
 *   H  a full re-encode of the table (gcl_tensormap_encode per map), the upload, the launch;
 *   D  an upload of the K+1 new addresses (8 bytes each), the launch: the device makes the maps;
 *   T  gcl_tensormap_table_repoint (K+1 maps in one call), gcl_tensormap_table_upload (the maps
 *      that moved), the launch; in a graph: the re-point, gcl_graph_set_table (a snapshot into
 *      the graph's pinned copy) and the replay, whose first node copies the table (docs/graphs.md).
 * Two ways to launch: direct (gcl_launch) and through a CUDA graph captured once, whose kernel
 * node gets the new arguments every step (gcl_graph_set_args, ~30 KB of grid-constant
 * parameters for P and S at K = 240) before gcl_graph_launch (the graph also holds a 4-byte
 * fill ahead of the kernel: see capture()).
 * Reported per step, medians: host_us (re-point + launch calls, the host's clock), of it
 * repoint_us; step_us (wall time of STEPS steps back to back, divided by STEPS: host and device
 * overlapped as in a real loop); kernel_us (the kernel alone, device events). The last step's
 * copy is verified (sampled rows on the host, every byte on the device).
 * The tensor set: bf16, 128x64 tiles (16 KiB), 128 columns, 64 MiB of sources per set (one
 * step reads 64 MiB and writes 64 MiB), work tensor by tensor. */
#include <string.h>

#include "bench_util.h"
#include "desc.h"

#define STEPS 64
#define WARMUP 4
#define KERNEL_REPS 15

typedef struct step_times { double repoint_us, host_us, step_us, kernel_us; } step_times;

/* One step onto set i % 2: re-point (and H's re-encode and upload), then launch; the host
 * seconds of the first part in *repoint. */
static void step(runner *r, gcl_graph *g, const uint64_t *src, const uint64_t *dst, int i,
                 double *repoint) {
  double t0 = desc_now_s();
  runner_repoint(r, src[i % 2], dst[i % 2]);
  if (!(g && r->pl == PL_T)) runner_prepare(r); /* a graphed T: the replay copies the table */
  *repoint = desc_now_s() - t0;
  if (g && r->pl == PL_T) { /* the args do not change; the table's copy in the graph does */
    CHECK(gcl_graph_set_table(g, r->tab));
    CHECK(gcl_graph_launch(g, r->b->stream));
  } else if (g) {
    CHECK(gcl_graph_set_args(g, 0, r->kern, r->args));
    CHECK(gcl_graph_launch(g, r->b->stream));
  } else {
    CHECK(gcl_launch(r->kern, &r->lc, r->args));
  }
}

/* A graph of one launch of r's kernel (after a direct launch: the kernel's one-time settings,
 * such as its dynamic shared memory limit, are made outside the capture). A 4-byte fill node
 * goes first: gcl_graph_capture_end fails on a graph without edges (on driver 580,
 * cuGraphGetEdges answers CUDA_ERROR_INVALID_VALUE when asked for 0 edges into arrays). */
static gcl_graph *capture(runner *r) {
  gcl_graph *g;
  runner_launch(r);
  CHECK(gcl_stream_synchronize(r->b->stream));
  CHECK(gcl_graph_capture_begin(r->b->stream));
  CHECK(gcl_mem_fill_u32_async(r->b->ctx, r->b->bad, 0, 1, r->b->stream));
  if (r->pl == PL_T) CHECK(gcl_graph_capture_table(r->b->stream, r->tab));
  CHECK(gcl_launch(r->kern, &r->lc, r->args));
  if (gcl_graph_capture_end(r->b->stream, &g) == GCL_OK) return g;
  printf("K=%-4u %-10s graph: not measured: gcl_graph_capture_end: %s\n", r->c.k,
         placement_names[r->pl], gcl_last_error());
  return NULL;
}

/* The kernel alone (H's upload not included), device events, median. */
static double kernel_us(runner *r, gcl_graph *g) {
  gcl_event *start, *stop;
  double us[KERNEL_REPS];
  CHECK(gcl_event_create(r->b->ctx, &start));
  CHECK(gcl_event_create(r->b->ctx, &stop));
  for (int i = 0; i < KERNEL_REPS; i++) {
    CHECK(gcl_event_record(start, r->b->stream));
    if (g) CHECK(gcl_graph_launch(g, r->b->stream));
    else CHECK(gcl_launch(r->kern, &r->lc, r->args));
    CHECK(gcl_event_record(stop, r->b->stream));
    CHECK(gcl_event_elapsed_us(start, stop, &us[i]));
  }
  gcl_event_destroy(start);
  gcl_event_destroy(stop);
  return bench_median(us, KERNEL_REPS);
}

/* STEPS steps after WARMUP, then the check of the last one. */
static int steps(runner *r, gcl_graph *g, const uint64_t *src, const uint64_t *dst,
                 step_times *t) {
  double host[STEPS], rep[STEPS], unused;
  for (int i = 0; i < WARMUP; i++) step(r, g, src, dst, i, &unused);
  CHECK(gcl_stream_synchronize(r->b->stream));
  for (int s = 0; s < 2; s++) CHECK(gcl_mem_fill_u8(r->b->ctx, dst[s], 0xA5, r->bytes));
  CHECK(gcl_context_synchronize(r->b->ctx));
  double t0 = desc_now_s();
  for (int i = 0; i < STEPS; i++) {
    double h0 = desc_now_s();
    step(r, g, src, dst, i, &rep[i]);
    host[i] = desc_now_s() - h0;
  }
  CHECK(gcl_stream_synchronize(r->b->stream));
  t->step_us = (desc_now_s() - t0) / STEPS * 1e6;
  t->host_us = bench_median(host, STEPS) * 1e6;
  t->repoint_us = bench_median(rep, STEPS) * 1e6;
  return runner_check(r);
}

static int relaunch_one(bench *b, FILE *csv, const config *c, placement pl, int graphed) {
  size_t set = (desc_bytes(c) + ((size_t)1 << 20) - 1) >> 20 << 20;
  uint64_t src[2] = {b->src, b->src + set}, dst[2] = {b->dst, b->dst + set};
  runner r;
  if (2 * set > b->src_bytes || runner_open(&r, b, c, pl, src[0], dst[0])) return 0;
  gcl_graph *g = graphed ? capture(&r) : NULL;
  if (graphed && !g) {
    runner_close(&r);
    return 0;
  }
  step_times t;
  int bad = steps(&r, g, src, dst, &t);
  t.kernel_us = kernel_us(&r, g);
  const char *mode = graphed ? "graph" : "direct";
  printf("K=%-4u %-10s %-6s re-point %9.2f us  host %9.2f us  step %9.2f us  kernel %8.2f us\n",
         c->k, placement_names[pl], mode, t.repoint_us, t.host_us, t.step_us, t.kernel_us);
  if (csv)
    fprintf(csv, "%u,%s,%s,%zu,%.3f,%.3f,%.3f,%.3f\n", c->k, placement_names[pl], mode,
            r.bytes, t.repoint_us, t.host_us, t.step_us, t.kernel_us);
  if (csv) fflush(csv);
  gcl_graph_destroy(g);
  runner_close(&r);
  return bad;
}

int desc_relaunch(bench *b, FILE *csv, const uint32_t *ks, size_t nks, size_t size,
                  uint32_t cols) {
  int bad = 0;
  if (csv) fputs("k,placement,mode,bytes,repoint_us,host_us,step_us,kernel_us\n", csv);
  printf("relaunch: re-point all maps at new buffers and launch, %d steps (medians)\n", STEPS);
  for (size_t i = 0; i < nks; i++)
    for (int graphed = 0; graphed < 2; graphed++)
      for (int pl = 0; pl < PL_COUNT; pl++) {
        if (pl == PL_GP || !(b->placements >> pl & 1)) continue; /* G+prefetch: G's host */
        config c = {"bf16", kDLBfloat, 16, 128, 64, ks[i], {0, 0, 0, 0}, 0, ORDER_TENSOR,
                    cols ? cols : 128, size ? size : (size_t)64 << 20};
        bad |= relaunch_one(b, csv, &c, (placement)pl, graphed);
      }
  return bad;
}
