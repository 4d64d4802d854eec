/* Example: several GPUs, one process (one NVSHMEM PE) per GPU. Every PE fills its copy of one
 * symmetric buffer with its own pattern, encodes tensormap[16] over the PEs' copies (map p = PE
 * p's copy, from ONE tensor and a PE list), and launches a TMA gather whose blocks pick the peer
 * by run-time index (kernels/tma_gather.cu: block b loads a 16 x 16 box from maps[work[3b]]).
 * Every tile of every peer is checked on the host, by every PE. The kernel calls no NVSHMEM
 * function, so it needs no device-linking and no attach: the maps carry the peers' addresses.
 *   example_nvshmem_gather [tma_gather.sm_90.cubin] [PES]   (PES: default the GPUs, at most 16;
 *                                                             2 with one GPU)
 * PE r runs on GPU r % GPUs: with one GPU, two PEs share it (two processes, time-sliced; fine
 * here: the kernel needs no other PE's kernel running at the same time, docs/multigpu.md).
 * Needs NVSHMEM's host library (gclaunch info). tests/common/pe_spawn.c forks the PEs before any
 * CUDA call and carries PE 0's unique id through a pipe. */
#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pe_spawn.h"

#define ROWS 64
#define COLS 64
#define MAPS 16
#define SIGNATURE "grid_constant tensormap[16] maps, const i32* work, f32* out"

static int rank_ = -1;

static int check(gcl_status s, const char *what) {
  if (s != GCL_OK) fprintf(stderr, "PE %d: %s: %s: %s\n", rank_, what, gcl_status_name(s), gcl_last_error());
  return s != GCL_OK;
}

static float value(int pe, int row, int col) { return (float)(pe * 100000 + row * COLS + col); }

/* Block b reads peer b % pes at (column, row) = (16 (b % 4), 16 (b / 4 % 4)). */
static int gather(gcl_context *ctx, gcl_kernel *k, uint64_t buf, int pes) {
  int64_t shape[2] = {ROWS, COLS};
  DLTensor t = {.data = (void *)(uintptr_t)buf, .device = {kDLCUDA, gcl_context_device(ctx)},
                .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = 16, o.box[1] = 16;
  int list[MAPS], blocks = 4 * pes, work[3 * 4 * MAPS], bad = 0;
  for (int i = 0; i < MAPS; i++) list[i] = i < pes ? i : rank_; /* every map must be set */
  for (int b = 0; b < blocks; b++)
    work[3 * b] = b % pes, work[3 * b + 1] = 16 * (b % 4), work[3 * b + 2] = 16 * (b / 4 % 4);
  gcl_args *a = NULL;
  gcl_field first;
  uint64_t dwork = 0, out = 0;
  float *got = malloc(sizeof(float) * 256 * (size_t)blocks);
  gcl_launch_config c = {.grid = {(unsigned)blocks}, .block = {128}};
  if (!got || check(gcl_args_create(gcl_kernel_layout(k), &a), "args") ||
      check(gcl_layout_field(gcl_kernel_layout(k), "maps[0]", &first), "maps[0]") ||
      check(gcl_args_set_peer_tensormaps(a, &first, &t, list, MAPS, &o, 0), "peer maps") ||
      check(gcl_mem_alloc(ctx, sizeof work, &dwork), "work") ||
      check(gcl_mem_alloc(ctx, sizeof(float) * 256 * (size_t)blocks, &out), "out") ||
      check(gcl_mem_upload(ctx, dwork, work, sizeof work), "upload") ||
      check(gcl_args_set_ptr(a, 1, dwork), "work") || check(gcl_args_set_ptr(a, 2, out), "out") ||
      check(gcl_launch(k, &c, a), "launch") || check(gcl_context_synchronize(ctx), "sync") ||
      check(gcl_mem_download(ctx, got, out, sizeof(float) * 256 * (size_t)blocks), "download"))
    bad = 1;
  for (int b = 0; !bad && b < blocks; b++)
    for (int i = 0; i < 256; i++)
      if (got[256 * b + i] != value(work[3 * b], work[3 * b + 2] + i / 16, work[3 * b + 1] + i % 16)) {
        fprintf(stderr, "PE %d: block %d (PE %d's tile) element %d: %g\n", rank_, b, work[3 * b], i, got[256 * b + i]);
        bad = 1;
        break;
      }
  if (out) gcl_mem_free(ctx, out);
  if (dwork) gcl_mem_free(ctx, dwork);
  gcl_args_destroy(a);
  free(got);
  return bad;
}

/* One PE: start from the id, fill this PE's copy, barrier, gather, barrier, stop. */
static int run_pe(int rank, int pes, int device, const gcl_pe_unique_id *id, void *user) {
  const char *cubin = user;
  rank_ = rank;
  gcl_context *ctx = NULL;
  if (check(gcl_context_create(device, &ctx), "context")) return 1;
  if (check(gcl_pe_start(ctx, id, rank, pes), "start")) return 1;
  static float host[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++) host[i] = value(rank, i / COLS, i % COLS);
  gcl_module *m = NULL;
  gcl_kernel *k = NULL;
  uint64_t buf = 0;
  int bad = check(gcl_symmetric_alloc(sizeof host, &buf), "symmetric alloc") ||
            check(gcl_mem_upload(ctx, buf, host, sizeof host), "fill") ||
            check(gcl_module_load_file(ctx, cubin, &m), "module") ||
            check(gcl_module_find_kernel(m, "tma_gather", SIGNATURE, &k), "kernel") ||
            check(gcl_pe_barrier(NULL), "barrier") || /* every copy written before any read */
            gather(ctx, k, buf, pes);
  check(gcl_pe_barrier(NULL), "barrier");     /* nobody frees a copy another may still read */
  check(gcl_context_synchronize(ctx), "sync");
  gcl_module_destroy(m);
  if (buf) check(gcl_symmetric_free(buf), "free");
  bad |= check(gcl_pe_stop(), "stop");
  gcl_context_destroy(ctx);
  if (!bad) printf("PE %d of %d (GPU %d): %d tiles gathered from %d PE(s) through peer tensor maps, all exact\n", rank, pes, device, 4 * pes, pes);
  return bad;
}

int main(int argc, char **argv) {
  const char *cubin = argc > 1 ? argv[1] : "build/kernels/tma_gather.sm_90.cubin";
  int n = pe_spawn_gpus(MAPS), pes = argc > 2 ? atoi(argv[2]) : n == 1 ? 2 : n;
  if (n < 1 || pes < 1 || pes > MAPS) {
    fprintf(stderr, "example_nvshmem_gather: %d PE(s) asked (1 ... %d), %d GPU(s) usable\n", pes,
            MAPS, n);
    return 1;
  }
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);          /* NVLink multicast off */
  setenv("NVSHMEM_REMOTE_TRANSPORT", "none", 0);   /* one host: peers over NVLink/PCIe P2P */
  char mode[128];
  printf("example_nvshmem_gather: %s\n", pe_spawn_describe(pes, n, mode, sizeof mode));
  int failed = pe_spawn_run(pes, n, 0, run_pe, (void *)cubin);
  printf("%s: %s\n", failed ? "FAILED" : "all PEs verified", mode);
  return failed;
}
