/* Two NVSHMEM PEs, one process each (tests/gpu/test_nvshmem.sh runs it after the one-PE suite,
 * with the kernel it built; tests/common/pe_spawn.c forks them and carries PE 0's unique id).
 * Each PE attaches the module and puts its values into the next PE's symmetric buffer, then
 * gathers tiles of the OTHER PE's buffer through peer tensor maps picked by run-time index
 * (kernels/tma_gather.cu), every byte checked on every PE.
 *   Two GPUs or more: PE r on GPU r; the puts run in put_ring under a cooperative launch with
 *   NVSHMEM's device-side barrier (both kernels resident at once).
 *   One GPU: both PEs on GPU 0, two processes time-sliced on it (NVSHMEM's "limited MPG", no
 *   MPS); the puts run in put_to, ordered by the host-side gcl_pe_barrier, because a device-side
 *   barrier across the PEs needs both kernels resident at once, which time-slicing does not
 *   promise (docs/multigpu.md). GCL_NVSHMEM_DEVICE_BARRIER=1 tries put_ring there anyway, each
 *   PE killed after 60 s: a probe of that mode, not a test of gclaunch.
 * No GPU: skipped (77) saying why; under GCL_REQUIRE_GPU=1 a failure.
 *   gpu_nvshmem_2pe_run   (GCL_NVSHMEM_CUBIN, GCL_KERNEL_DIR as for the other GPU tests) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gclaunch/gclaunch.h"
#include "common/pe_spawn.h"

#define TRY(call)                                                                                 \
  do {                                                                                            \
    gcl_status s_ = (call);                                                                       \
    if (s_ != GCL_OK) {                                                                           \
      fprintf(stderr, "PE %d: %s: %s: %s\n", my_rank, #call, gcl_status_name(s_), gcl_last_error()); \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)

static int my_rank = -1;
enum { ROWS = 64, COLS = 64 };

/* device_barrier: put_ring, cooperative, with NVSHMEM's device-side barrier; else put_to. */
static int launch_puts(gcl_context *ctx, gcl_module *mod, uint64_t dst, bool device_barrier) {
  enum { GRID = 4, BLOCK = 128 };
  gcl_kernel *k = NULL;
  gcl_args *a = NULL;
  uint64_t info = 0;
  if (device_barrier) {
    TRY(gcl_module_find_kernel(mod, "put_ring", "i32* dst, i32* info, i32 shift", &k));
    TRY(gcl_mem_alloc(ctx, 2 * sizeof(int), &info));
  } else {
    TRY(gcl_module_find_kernel(mod, "put_to", "i32* dst, i32 shift", &k));
  }
  TRY(gcl_args_create(gcl_kernel_layout(k), &a));
  TRY(gcl_args_set_ptr(a, 0, dst));
  if (device_barrier) TRY(gcl_args_set_ptr(a, 1, info));
  TRY(gcl_args_set_i32(a, device_barrier ? 2 : 1, 1));
  gcl_launch_config c = {.grid = {GRID}, .block = {BLOCK}, .cooperative = device_barrier};
  TRY(gcl_launch(k, &c, a)); /* every PE, the same grid: put_ring's barrier needs them all */
  TRY(gcl_context_synchronize(ctx));
  gcl_args_destroy(a);
  if (info) TRY(gcl_mem_free(ctx, info));
  return 0;
}

static int ring_put(gcl_context *ctx, gcl_module *mod, bool device_barrier) {
  enum { N = 4 * 128 };
  uint64_t dst = 0;
  TRY(gcl_symmetric_alloc(N * sizeof(int), &dst));
  TRY(gcl_pe_barrier(NULL)); /* every buffer exists before any put */
  TRY(gcl_context_synchronize(ctx));
  if (launch_puts(ctx, mod, dst, device_barrier)) return 1;
  TRY(gcl_pe_barrier(NULL)); /* every PE's puts are complete */
  TRY(gcl_context_synchronize(ctx));
  int got[N], from = (my_rank + 1) % 2;
  TRY(gcl_mem_download(ctx, got, dst, sizeof got));
  for (int i = 0; i < N; i++)
    if (got[i] != 3 * i + 1 + from) {
      fprintf(stderr, "PE %d: ring put: element %d is %d, expected %d (from PE %d)\n", my_rank, i,
              got[i], 3 * i + 1 + from, from);
      return 1;
    }
  TRY(gcl_symmetric_free(dst));
  return 0;
}

static int check_tiles(const float *got, const int *w, int blocks, int peer) {
  for (int b = 0; b < blocks; b++)
    for (int y = 0; y < 16; y++)
      for (int x = 0; x < 16; x++) {
        float want = (float)(peer * 100000 + (w[3 * b + 2] + y) * COLS + w[3 * b + 1] + x);
        if (got[256 * b + 16 * y + x] != want) {
          fprintf(stderr, "PE %d: block %d tile (%d, %d) is %g, expected %g (PE %d's copy)\n",
                  my_rank, b, y, x, got[256 * b + 16 * y + x], want, peer);
          return 1;
        }
      }
  return 0;
}

/* maps[p] over PE p's copy for p < 2 (maps[2..15] this PE's own); each block reads the other PE's. */
static int peer_gather(gcl_context *ctx, int device) {
  static float host[ROWS * COLS];
  uint64_t buf = 0, work = 0, out = 0;
  TRY(gcl_symmetric_alloc(sizeof host, &buf));
  for (int i = 0; i < ROWS * COLS; i++) host[i] = (float)(my_rank * 100000 + i);
  TRY(gcl_mem_upload(ctx, buf, host, sizeof host));
  TRY(gcl_pe_barrier(NULL)); /* both copies written before either reads */
  TRY(gcl_context_synchronize(ctx));
  gcl_module *g = NULL;
  gcl_kernel *k = NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/tma_gather.sm_90.cubin", getenv("GCL_KERNEL_DIR"));
  TRY(gcl_module_load_file(ctx, path, &g));
  TRY(gcl_module_find_kernel(g, "tma_gather", "grid_constant tensormap[16] maps, const i32* work, f32* out", &k));
  gcl_args *a = NULL;
  TRY(gcl_args_create(gcl_kernel_layout(k), &a));
  int64_t shape[2] = {ROWS, COLS};
  DLTensor t = {.data = (void *)(uintptr_t)buf, .device = {kDLCUDA, device}, .ndim = 2,
                .dtype = {kDLFloat, 32, 1}, .shape = shape};
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  o.box[0] = 16, o.box[1] = 16;
  int pes[16] = {0, 1};
  for (int i = 2; i < 16; i++) pes[i] = my_rank;
  gcl_field first;
  TRY(gcl_layout_field(gcl_kernel_layout(k), "maps[0]", &first));
  TRY(gcl_args_set_peer_tensormaps(a, &first, &t, pes, 16, &o, 0));
  int peer = 1 - my_rank, w[12] = {peer, 16, 8, peer, 0, 0, peer, 48, 48, peer, 32, 16};
  TRY(gcl_mem_alloc(ctx, sizeof w, &work));
  TRY(gcl_mem_alloc(ctx, 4 * 256 * sizeof(float), &out));
  TRY(gcl_mem_upload(ctx, work, w, sizeof w));
  TRY(gcl_args_set_ptr(a, 1, work));
  TRY(gcl_args_set_ptr(a, 2, out));
  gcl_launch_config c = {.grid = {4}, .block = {128}};
  TRY(gcl_launch(k, &c, a));
  TRY(gcl_context_synchronize(ctx));
  float got[4 * 256];
  TRY(gcl_mem_download(ctx, got, out, sizeof got));
  int bad = check_tiles(got, w, 4, peer);
  TRY(gcl_pe_barrier(NULL)); /* neither frees its copy while the other may read it */
  TRY(gcl_context_synchronize(ctx));
  gcl_args_destroy(a);
  gcl_module_destroy(g);
  TRY(gcl_mem_free(ctx, work));
  TRY(gcl_mem_free(ctx, out));
  TRY(gcl_symmetric_free(buf));
  return bad;
}

typedef struct run {
  bool shared;         /* both PEs on one GPU */
  bool device_barrier; /* put_ring (cooperative, device-side barrier) rather than put_to */
} run;

static int run_pe(int rank, int pes, int device, const gcl_pe_unique_id *id, void *user) {
  const run *how = user;
  my_rank = rank;
  if (how->shared && how->device_barrier) alarm(60); /* a probe: a hang ends the process */
  gcl_context *ctx = NULL;
  TRY(gcl_context_create(device, &ctx));
  TRY(gcl_pe_start(ctx, id, rank, pes));
  gcl_module *mod = NULL;
  TRY(gcl_module_load_file(ctx, getenv("GCL_NVSHMEM_CUBIN"), &mod));
  TRY(gcl_module_attach(mod));
  int bad = ring_put(ctx, mod, how->device_barrier) || peer_gather(ctx, device);
  gcl_module_destroy(mod);
  TRY(gcl_pe_stop());
  gcl_context_destroy(ctx);
  if (!bad)
    printf("PE %d of 2 (GPU %d): ring put (%s) and peer-map gather verified\n", rank, device,
           how->device_barrier ? "put_ring: cooperative launch, device-side barrier"
                               : "put_to: host-side barrier");
  return bad;
}

int main(void) {
  if (!getenv("GCL_NVSHMEM_CUBIN") || !getenv("GCL_KERNEL_DIR")) {
    fprintf(stderr, "gpu_nvshmem_2pe: GCL_NVSHMEM_CUBIN and GCL_KERNEL_DIR must be set (tests/gpu/test_nvshmem.sh)\n");
    return 1;
  }
  int n = pe_spawn_gpus(2);
  const char *req = getenv("GCL_REQUIRE_GPU"), *probe = getenv("GCL_NVSHMEM_DEVICE_BARRIER");
  if (n == 0) {
    printf("%s: no usable device\n", req && strcmp(req, "1") == 0 ? "FAIL (GCL_REQUIRE_GPU=1)" : "SKIP");
    return req && strcmp(req, "1") == 0 ? 1 : 77;
  }
  run how = {.shared = n < 2, .device_barrier = n >= 2 || (probe && strcmp(probe, "1") == 0)};
  char mode[128];
  printf("gpu_nvshmem_2pe: %s%s\n", pe_spawn_describe(2, n, mode, sizeof mode),
         how.shared ? (how.device_barrier ? "; probing the device-side barrier (GCL_NVSHMEM_DEVICE_BARRIER=1)"
                                          : "; device-side barriers not exercised (docs/multigpu.md)")
                    : "");
  int failed = pe_spawn_run(2, n, 200, run_pe, &how);
  if (failed && how.shared && how.device_barrier)
    printf("gpu_nvshmem_2pe: the probe failed: put_ring's device-side barrier across 2 PEs "
           "time-sliced on one GPU did not complete (a PE ended by signal 14 hung for 60 s)\n");
  printf("%s: 2 PEs, every PE's result verified: %s\n", failed ? "FAIL" : "PASS", mode);
  return failed;
}
