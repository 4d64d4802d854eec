/* bench_nvshmem_bw: bandwidth of a PE reading its peers' symmetric memory, four ways on the same
 * bytes, every result verified byte for byte; and the launch cost of an attached NVSHMEM kernel.
 *
 * One process per PE (tests/common/pe_spawn.c: the parent counts the GPUs in a child, forks the
 * PEs before any CUDA call, and PE 0's unique id reaches the others through a pipe), PE r on GPU
 * r % GPUs. One GPU: 2 PEs by default, two processes time-sliced on it (said in the output: their
 * "peer" reads are copies within one GPU's memory between processes, and the two PEs' samples
 * contend for the GPU). Every PE holds one symmetric source buffer of
 * --bytes bytes filled with its own pattern; its "peers" are every other PE, or itself when it is
 * the only PE (then every number is LOCAL bandwidth, and says so). Per peer, the same bytes move:
 *   tma   bw_tma (bench/nvshmem_bw.cu): the example megakernel's gather scaled up -- TMA loads
 *         through ONE tensormap[16] over the peers' copies (gcl_args_set_peer_tensormaps), the map
 *         picked by run-time index, into a local buffer;
 *   get   bw_get: nvshmemx_getmem_block from each peer's copy into the same local buffer;
 *   put   bw_put: nvshmemx_putmem_block of this PE's source into its slot of each peer's symmetric
 *         receive buffer (then nvshmem_quiet);
 *   copy  the copy engine: cuMemcpyDtoDAsync from each peer's mapped symmetric address
 *         (gcl_symmetric_peer_address) -- the cuMemcpyPeer path; across processes there is no
 *         second context to name, and with one PE it is a plain device-to-device copy.
 * Per sample: gcl_pe_barrier on the stream (the PEs start together), event, the method --iters
 * times back to back (so that one submission's host latency is not the device's time), event.
 * Reported per PE: median (and min) microseconds per run over --reps samples after --warmup,
 * GB/s (1e9 bytes/s, peers x bytes over the median) and the bandwidth over copy's. Before each method its destination is
 * zeroed; after it, every byte is compared with the source PE's pattern.
 *
 * Launch cost (PE 0, --launch-reps > 0): launch_probe of the attached module, gcl_launch (with
 * gcl_args_set_i32 of idx) against cuLaunchKernelEx of the same CUfunction (idx stored), same
 * stream; per sample --launches submissions timed on the host; the two paths alternate which goes
 * first; the first sample is a warm-up. Reported: medians in us per launch, their ratio and the
 * paired ratio (median over samples of gcl / raw of the same sample). Target: within 1.02x.
 *
 * --signatures prints every kernel's name and signature (tests/unit/test_nvshmem_bw_args.sh checks
 * them against a cubin of bench/nvshmem_bw.cu built with stand-in NVSHMEM headers).
 *
 * Usage: bench/nvshmem_bw.sh [options] (builds the cubin from the NVSHMEM wheel, sets the
 * environment, runs this); bench_nvshmem_bw --help. No GPU: says so, exits 0 (1 under
 * GCL_REQUIRE_GPU=1). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "driver.h" /* the resolved driver table, exported to the benchmarks (gclaunch_driver_dep) */
#include "nvshmem_bw.h"
#include "pe_spawn.h"

enum { M_TMA, M_GET, M_PUT, M_COPY, M_COUNT };
_Static_assert(M_COUNT == BW_METHODS, "the methods of bw_options.methods");
static const char *method_names[M_COUNT] = {
    "tma gather, peer tensor maps by run-time index", "nvshmemx_getmem_block in a kernel",
    "nvshmemx_putmem_block in a kernel", "copy engine (cuMemcpyDtoDAsync of the peer's address)"};

typedef struct pe_state {
  bw_options o;
  int me, pes, npeers, peers[BW_MAX_PES];
  unsigned blocks;         /* the kernels' grid */
  bool shared;             /* several PEs on one GPU */
  gcl_context *ctx;
  gcl_stream *s;
  gcl_module *mod;
  gcl_kernel *k[M_COUNT]; /* M_COPY: launch_probe */
  gcl_args *a[M_COUNT];
  uint64_t src, recv, dst, dpeers, peer_src[BW_MAX_PES];
  uint32_t *host;          /* peers x bytes, for downloads */
  char report[8192];
  size_t used;
} pe_state;

#define TRY(call) do { gcl_status s_ = (call); if (s_ != GCL_OK) { \
  fprintf(stderr, "PE %d: %s: %s: %s\n", st->me, #call, gcl_status_name(s_), gcl_last_error()); \
  return 1; } } while (0)

/* Appends to this PE's report (printed in PE order at the end). */
static void say(pe_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(pe_state *st, const char *fmt, ...) {
  size_t room = sizeof st->report - st->used;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(st->report + st->used, room, fmt, ap);
  va_end(ap);
  if (n > 0) st->used += (size_t)n < room ? (size_t)n : room - 1;
}

/* Word w of PE p's source: distinct for every PE and word. */
static uint32_t pattern(int p, size_t w) {
  return (uint32_t)(w * 2654435761u) ^ ((uint32_t)p + 1u) * 0x9E3779B9u;
}

static const char *names[M_COUNT] = {"bw_tma", "bw_get", "bw_put", "launch_probe"};
static const char *sigs[M_COUNT] = {
    "grid_constant tensormap[16] maps, u8* dst, i32 npeers, i32 tiles_per_peer",
    "u8* dst, const u8* src, u64 n, const i32* peers, i32 npeers, u64 chunk",
    "u8* dst, const u8* src, u64 n, const i32* peers, i32 npeers, i32 me, u64 chunk",
    "i32* out, i32 idx"};

static int find_kernels(pe_state *st) {
  for (int m = 0; m < M_COUNT; m++) {
    TRY(gcl_module_find_kernel(st->mod, names[m], sigs[m], &st->k[m]));
    TRY(gcl_args_create(gcl_kernel_layout(st->k[m]), &st->a[m]));
  }
  return 0;
}

/* Buffers, the source pattern, the peers' addresses, and every kernel's arguments. */
static int setup(pe_state *st) {
  size_t b = st->o.bytes, words = b / 4;
  gcl_device_info info;
  TRY(gcl_device_query(gcl_context_device(st->ctx), &info));
  st->blocks = st->o.blocks ? (unsigned)st->o.blocks : 2u * (unsigned)info.multiprocessors;
  TRY(gcl_symmetric_alloc(b, &st->src));
  TRY(gcl_symmetric_alloc(b * (size_t)st->pes, &st->recv));
  TRY(gcl_mem_alloc(st->ctx, b * (size_t)st->npeers, &st->dst));
  TRY(gcl_mem_alloc(st->ctx, sizeof st->peers, &st->dpeers));
  TRY(gcl_mem_upload(st->ctx, st->dpeers, st->peers, sizeof st->peers));
  if (!(st->host = malloc(b * (size_t)st->npeers))) return fprintf(stderr, "PE %d: out of memory\n", st->me), 1;
  for (size_t w = 0; w < words; w++) st->host[w] = pattern(st->me, w);
  TRY(gcl_mem_upload(st->ctx, st->src, st->host, b));
  for (int i = 0; i < st->npeers; i++)
    TRY(gcl_symmetric_peer_address(st->src, st->peers[i], &st->peer_src[i]));
  int64_t shape[2] = {(int64_t)(b / 1024), 256};
  DLTensor t = {.data = (void *)(uintptr_t)st->src, .device = {kDLCUDA, gcl_context_device(st->ctx)},
                .ndim = 2, .dtype = {kDLUInt, 32, 1}, .shape = shape};
  gcl_tensormap_options mo;
  memset(&mo, 0, sizeof mo);
  mo.box[0] = 256, mo.box[1] = BW_TILE_BYTES / 1024;
  int list[BW_MAX_PES];
  for (int i = 0; i < BW_MAX_PES; i++) list[i] = st->peers[i < st->npeers ? i : 0]; /* all set */
  gcl_field first;
  TRY(gcl_layout_field(gcl_kernel_layout(st->k[M_TMA]), "maps[0]", &first));
  TRY(gcl_args_set_peer_tensormaps(st->a[M_TMA], &first, &t, list, BW_MAX_PES, &mo, 0));
  TRY(gcl_args_set_ptr(st->a[M_TMA], 1, st->dst));
  TRY(gcl_args_set_i32(st->a[M_TMA], 2, st->npeers));
  TRY(gcl_args_set_i32(st->a[M_TMA], 3, (int32_t)(b / BW_TILE_BYTES)));
  for (int m = M_GET; m <= M_PUT; m++) {
    gcl_args *a = st->a[m];
    TRY(gcl_args_set_ptr(a, 0, m == M_GET ? st->dst : st->recv));
    TRY(gcl_args_set_ptr(a, 1, st->src));
    TRY(gcl_args_set_u64(a, 2, b));
    TRY(gcl_args_set_ptr(a, 3, st->dpeers));
    TRY(gcl_args_set_i32(a, 4, st->npeers));
    if (m == M_PUT) TRY(gcl_args_set_i32(a, 5, st->me));
    TRY(gcl_args_set_u64(a, m == M_PUT ? 6 : 5, st->o.chunk));
  }
  return 0;
}

/* One repetition of method m, queued on the stream. */
static int run_once(pe_state *st, int m) {
  gcl_launch_config c = {.grid = {st->blocks, 1, 1}, .block = {m == M_TMA ? 32u : 256u, 1, 1},
                         .stream = gcl_stream_handle(st->s)};
  if (m != M_COPY) {
    TRY(gcl_launch(st->k[m], &c, st->a[m]));
    return 0;
  }
  for (int i = 0; i < st->npeers; i++)
    TRY(gcl_mem_copy_async(st->ctx, st->dst + (uint64_t)i * st->o.bytes, st->peer_src[i],
                           st->o.bytes, st->s));
  return 0;
}

/* Every byte of what method m moved: region i = peer i's pattern (put: slot peer of recv). */
static int verify(pe_state *st, int m) {
  size_t b = st->o.bytes, words = b / 4;
  for (int i = 0; i < st->npeers; i++) {
    int p = st->peers[i];
    uint64_t from = m == M_PUT ? st->recv + (uint64_t)p * b : st->dst + (uint64_t)i * b;
    TRY(gcl_mem_download(st->ctx, st->host, from, b));
    for (size_t w = 0; w < words; w++)
      if (st->host[w] != pattern(p, w)) {
        fprintf(stderr, "PE %d: %s: PE %d's bytes, word %zu of %zu: 0x%08x, expected 0x%08x\n",
                st->me, method_names[m], p, w, words, st->host[w], pattern(p, w));
        return 1;
      }
  }
  return 0;
}

/* Zero the destination (every PE: put writes into peers), warm up, time, verify. */
static int measure(pe_state *st, int m, double *median_us, double *min_us) {
  uint64_t d = m == M_PUT ? st->recv : st->dst;
  size_t n = m == M_PUT ? (size_t)st->pes : (size_t)st->npeers;
  TRY(gcl_mem_fill_u8_async(st->ctx, d, 0, st->o.bytes * n, st->s));
  TRY(gcl_pe_barrier(st->s));
  gcl_event *e0 = NULL, *e1 = NULL;
  TRY(gcl_event_create(st->ctx, &e0));
  TRY(gcl_event_create(st->ctx, &e1));
  double *t = calloc((size_t)st->o.reps, sizeof *t);
  if (!t) return 1;
  int bad = 0;
  for (int r = -st->o.warmup; !bad && r < st->o.reps; r++) {
    bad = gcl_pe_barrier(st->s) != GCL_OK || gcl_event_record(e0, st->s) != GCL_OK;
    for (int i = 0; !bad && i < st->o.iters; i++) bad = run_once(st, m);
    bad = bad || gcl_event_record(e1, st->s) != GCL_OK || gcl_event_synchronize(e1) != GCL_OK ||
          (r >= 0 && gcl_event_elapsed_us(e0, e1, &t[r]) != GCL_OK);
    if (r >= 0) t[r] /= st->o.iters;
  }
  if (bad) fprintf(stderr, "PE %d: %s: %s\n", st->me, method_names[m], gcl_last_error());
  *min_us = t[0];
  for (int r = 1; r < st->o.reps; r++) *min_us = t[r] < *min_us ? t[r] : *min_us;
  *median_us = bench_median(t, st->o.reps);
  free(t);
  gcl_event_destroy(e0);
  gcl_event_destroy(e1);
  if (bad) return 1;
  TRY(gcl_stream_synchronize(st->s));
  TRY(gcl_pe_barrier(st->s)); /* every peer's puts are complete */
  TRY(gcl_stream_synchronize(st->s));
  return verify(st, m);
}

static int bandwidth(pe_state *st) {
  double med[M_COUNT] = {0}, lo[M_COUNT] = {0};
  for (int m = 0; m < M_COUNT; m++)
    if (st->o.methods & (1u << m) && measure(st, m, &med[m], &lo[m])) return 1;
  double moved = (double)st->o.bytes * st->npeers;
  say(st, "PE %d of %d: %s, %zu bytes per peer x %d peer(s); per method the median (min) of %d "
          "samples of %d back-to-back runs after %d warm-up sample(s), grid %u\n", st->me, st->pes,
      st->pes == 1 ? "LOCAL bandwidth (one PE: the peer is itself)"
                   : st->shared ? "peer bandwidth, PEs sharing one GPU (time-sliced processes)"
                                : "peer bandwidth",
      st->o.bytes, st->npeers, st->o.reps, st->o.iters, st->o.warmup, st->blocks);
  for (int m = 0; m < M_COUNT; m++) {
    if (!(st->o.methods & (1u << m))) continue;
    say(st, "  %-54s %10.1f us (%10.1f)  %8.1f GB/s", method_names[m], med[m], lo[m],
        moved / (med[m] * 1e3));
    if (st->o.methods & (1u << M_COPY)) say(st, "  %.3f x copy's", med[M_COPY] / med[m]);
    say(st, "  verified\n");
  }
  return 0;
}

/* n submissions of launch_probe on path raw (cuLaunchKernelEx) or gcl_launch: us per launch. */
static double submit(pe_state *st, int raw, int n, int32_t *idx, void **params) {
  gcl_kernel *k = st->k[M_COPY];
  CUstream stream = (CUstream)gcl_stream_handle(st->s);
  CUlaunchConfig ex = {1, 1, 1, 32, 1, 1, 0, stream, NULL, 0};
  gcl_launch_config c = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .stream = stream};
  if (gcl__cu.cuStreamSynchronize(stream) != CUDA_SUCCESS) return -1;
  double t0 = bench_now_ns();
  for (int32_t i = 0; i < n; i++) {
    if (raw) {
      *idx = i;
      if (gcl__cu.cuLaunchKernelEx(&ex, gcl_kernel_cu_function(k), params, NULL) != CUDA_SUCCESS) return -1;
    } else if (gcl_args_set_i32(st->a[M_COPY], 1, i) != GCL_OK ||
               gcl_launch(k, &c, st->a[M_COPY]) != GCL_OK)
      return -1;
  }
  double us = (bench_now_ns() - t0) / 1e3 / n;
  return gcl__cu.cuStreamSynchronize(stream) == CUDA_SUCCESS ? us : -1;
}

static int launch_cost(pe_state *st) {
  int reps = st->o.launch_reps, n = st->o.launches;
  uint64_t out = 0;
  TRY(gcl_context_bind(st->ctx)); /* cuLaunchKernelEx launches in the current context */
  TRY(gcl_mem_alloc(st->ctx, 64, &out));
  TRY(gcl_args_set_ptr(st->a[M_COPY], 0, out));
  int32_t idx = 0;
  void *params[2] = {&out, &idx};
  double *t = calloc(3 * (size_t)reps, sizeof *t);
  if (!t) return 1;
  int bad = 0;
  for (int r = -1; !bad && r < reps; r++) /* r = -1: warm-up */
    for (int j = 0; !bad && j < 2; j++) {
      int raw = (j + r + 1) % 2; /* alternate which path goes first */
      double us = submit(st, raw, n, &idx, params);
      bad = us < 0;
      if (r >= 0) t[(size_t)raw * reps + r] = us;
    }
  if (bad) fprintf(stderr, "PE %d: launch cost: a launch failed: %s\n", st->me, gcl_last_error());
  for (int r = 0; !bad && r < reps; r++) t[2 * (size_t)reps + r] = t[r] / t[reps + r];
  if (!bad) {
    double g = bench_median(t, reps), raw = bench_median(t + reps, reps);
    double paired = bench_median(t + 2 * reps, reps);
    say(st, "PE %d: launch of an attached NVSHMEM kernel (launch_probe), %d x %d launches:\n"
            "  gcl_launch %.3f us, cuLaunchKernelEx %.3f us per launch (medians): ratio %.3f, "
            "paired %.3f (target <= 1.02: %s)\n", st->me, reps, n, g, raw, g / raw, paired,
        paired <= 1.02 ? "met" : "NOT met");
  }
  free(t);
  TRY(gcl_mem_free(st->ctx, out));
  return bad;
}

/* Every PE prints its report in PE order (a barrier between turns). */
static void print_in_order(pe_state *st) {
  for (int r = 0; r < st->pes; r++) {
    if (r == st->me) fwrite(st->report, 1, st->used, stdout), fflush(stdout);
    if (gcl_pe_barrier(st->s) != GCL_OK || gcl_stream_synchronize(st->s) != GCL_OK) return;
  }
}

static int measure_all(pe_state *st) {
  if (find_kernels(st) || setup(st)) return 1;
  TRY(gcl_pe_barrier(st->s)); /* every source filled before any read */
  TRY(gcl_stream_synchronize(st->s));
  if (bandwidth(st)) return 1;
  if (st->me == 0 && st->o.launch_reps > 0 && launch_cost(st)) return 1;
  print_in_order(st);
  return 0;
}

static void teardown(pe_state *st) {
  if (st->s) {
    gcl_pe_barrier(st->s); /* nobody frees what a peer may still read */
    gcl_stream_synchronize(st->s);
  }
  for (int m = 0; m < M_COUNT; m++) gcl_args_destroy(st->a[m]);
  gcl_module_destroy(st->mod); /* detaches first */
  if (st->dst) gcl_mem_free(st->ctx, st->dst);
  if (st->dpeers) gcl_mem_free(st->ctx, st->dpeers);
  if (st->recv) gcl_symmetric_free(st->recv);
  if (st->src) gcl_symmetric_free(st->src);
  gcl_stream_destroy(st->s);
  free(st->host);
}

static int pe_start(pe_state *st, int device, const gcl_pe_unique_id *id) {
  TRY(gcl_context_create(device, &st->ctx));
  TRY(gcl_pe_start(st->ctx, id, st->me, st->pes));
  return 0;
}

typedef struct run_plan {
  bw_options o;
  bool shared; /* several PEs on one GPU */
} run_plan;

static int run_pe(int me, int pes, int device, const gcl_pe_unique_id *id, void *user) {
  const run_plan *plan = user;
  static pe_state state;
  pe_state *st = &state;
  st->o = plan->o, st->me = me, st->pes = pes, st->shared = plan->shared;
  for (int p = 0; p < pes; p++)
    if (p != me || pes == 1) st->peers[st->npeers++] = p;
  if (pe_start(st, device, id)) return 1;
  int bad = gcl_stream_create(st->ctx, 0, &st->s) != GCL_OK ||
            gcl_module_load_file(st->ctx, st->o.cubin, &st->mod) != GCL_OK ||
            gcl_module_attach(st->mod) != GCL_OK;
  if (bad) fprintf(stderr, "PE %d: stream, module or attach (%s): %s\n", me, st->o.cubin, gcl_last_error());
  if (!bad) bad = measure_all(st);
  teardown(st);
  bad |= gcl_pe_stop() != GCL_OK;
  gcl_context_destroy(st->ctx);
  return bad;
}

int main(int argc, char **argv) {
  run_plan plan;
  int rc = bw_parse(argc, argv, &plan.o);
  if (rc >= 0) return rc;
  for (int m = 0; plan.o.signatures && m < M_COUNT; m++) printf("%s|%s\n", names[m], sigs[m]);
  if (plan.o.signatures) return 0;
  int n = pe_spawn_gpus(BW_MAX_PES), pes = plan.o.pes ? plan.o.pes : n == 1 ? 2 : n;
  const char *req = getenv("GCL_REQUIRE_GPU");
  if (n == 0 && req && strcmp(req, "1") == 0) {
    printf("bench_nvshmem_bw: FAIL (GCL_REQUIRE_GPU=1): no usable GPU\n");
    return 1;
  }
  if (n == 0) {
    printf("bench_nvshmem_bw: skipped, no usable GPU\n");
    return 0;
  }
  plan.shared = pes > n;
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);        /* NVLink multicast off */
  setenv("NVSHMEM_REMOTE_TRANSPORT", "none", 0); /* one host */
  char mode[128];
  printf("bench_nvshmem_bw: %s\n", pe_spawn_describe(pes, n, mode, sizeof mode));
  int failed = pe_spawn_run(pes, n, 0, run_pe, &plan);
  printf("bench_nvshmem_bw: %s: %s\n", mode, failed ? "FAILED" : "every PE's result verified");
  return failed;
}
