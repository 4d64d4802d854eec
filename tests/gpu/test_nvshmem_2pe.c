/* Two NVSHMEM PEs, one process per GPU (tests/gpu/test_nvshmem.sh runs it after the one-PE
 * suite, with the kernel it built): the parent forks before any CUDA call; child 0 makes the
 * unique id and sends its 128 bytes through a pipe to child 1; each starts PE = its device,
 * attaches the module, puts its values into the next PE's buffer under a cooperative launch
 * (ring), then gathers tiles of the OTHER PE's symmetric buffer through peer tensor maps picked
 * by run-time index (kernels/tma_gather.cu), every byte checked. Skipped (77), saying why, with
 * fewer than two devices -- also under GCL_REQUIRE_GPU=1, which fails only a missing device.
 *   gpu_nvshmem_2pe   (GCL_NVSHMEM_CUBIN, GCL_KERNEL_DIR as for the other GPU tests) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gclaunch/gclaunch.h"

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

static int ring_put(gcl_context *ctx, gcl_module *mod) {
  gcl_kernel *k = NULL;
  TRY(gcl_module_find_kernel(mod, "put_ring", "i32* dst, i32* info, i32 shift", &k));
  enum { GRID = 4, BLOCK = 128, N = GRID * BLOCK };
  uint64_t dst = 0, info = 0;
  TRY(gcl_symmetric_alloc(N * sizeof(int), &dst));
  TRY(gcl_mem_alloc(ctx, 2 * sizeof(int), &info));
  gcl_args *a = NULL;
  TRY(gcl_args_create(gcl_kernel_layout(k), &a));
  TRY(gcl_args_set_ptr(a, 0, dst));
  TRY(gcl_args_set_ptr(a, 1, info));
  TRY(gcl_args_set_i32(a, 2, 1));
  gcl_launch_config c = {.grid = {GRID}, .block = {BLOCK}, .cooperative = true};
  TRY(gcl_launch(k, &c, a)); /* every PE, the same grid: the kernel's barrier needs them all */
  TRY(gcl_context_synchronize(ctx));
  TRY(gcl_pe_barrier(NULL));
  TRY(gcl_context_synchronize(ctx));
  int got[N], from = (my_rank + 1) % 2;
  TRY(gcl_mem_download(ctx, got, dst, sizeof got));
  for (int i = 0; i < N; i++)
    if (got[i] != 3 * i + 1 + from) {
      fprintf(stderr, "PE %d: ring put: element %d is %d, expected %d (from PE %d)\n", my_rank, i,
              got[i], 3 * i + 1 + from, from);
      return 1;
    }
  gcl_args_destroy(a);
  TRY(gcl_mem_free(ctx, info));
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
static int peer_gather(gcl_context *ctx) {
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
  DLTensor t = {.data = (void *)(uintptr_t)buf, .device = {kDLCUDA, my_rank}, .ndim = 2,
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

static int run_pe(int rank, int fd) {
  my_rank = rank;
  gcl_context *ctx = NULL;
  gcl_pe_unique_id id;
  TRY(gcl_context_create(rank, &ctx));
  if (rank == 0) {
    TRY(gcl_pe_unique_id_create(&id));
    if (write(fd, id.bytes, sizeof id.bytes) != (ssize_t)sizeof id.bytes) return 1;
  } else if (read(fd, id.bytes, sizeof id.bytes) != (ssize_t)sizeof id.bytes) {
    fprintf(stderr, "PE 1: no unique id from PE 0\n");
    return 1;
  }
  close(fd);
  TRY(gcl_pe_start(ctx, &id, rank, 2));
  gcl_module *mod = NULL;
  TRY(gcl_module_load_file(ctx, getenv("GCL_NVSHMEM_CUBIN"), &mod));
  TRY(gcl_module_attach(mod));
  int bad = ring_put(ctx, mod) || peer_gather(ctx);
  gcl_module_destroy(mod);
  TRY(gcl_pe_stop());
  gcl_context_destroy(ctx);
  if (!bad) printf("PE %d of 2: ring put and peer-map gather verified\n", rank);
  return bad;
}

/* Devices, counted in a child: the parent never initialises the driver before forking. */
static int device_count(void) {
  pid_t pid = fork();
  if (pid == 0) {
    int n = 0;
    _exit(gcl_device_count(&n) == GCL_OK ? (n > 100 ? 100 : n) : 0);
  }
  int st = 0;
  return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 0;
}

int main(void) {
  if (!getenv("GCL_NVSHMEM_CUBIN") || !getenv("GCL_KERNEL_DIR")) {
    fprintf(stderr, "gpu_nvshmem_2pe: GCL_NVSHMEM_CUBIN and GCL_KERNEL_DIR must be set (tests/gpu/test_nvshmem.sh)\n");
    return 1;
  }
  int n = device_count();
  const char *req = getenv("GCL_REQUIRE_GPU");
  if (n == 0 && req && strcmp(req, "1") == 0) {
    printf("FAIL (GCL_REQUIRE_GPU=1): no usable device\n");
    return 1;
  }
  if (n < 2) {
    printf("SKIP: the 2-PE test needs 2 GPUs, %d visible\n", n);
    return 77;
  }
  int fds[2];
  if (pipe(fds) != 0) return 1;
  pid_t kids[2];
  for (int r = 0; r < 2; r++) {
    kids[r] = fork();
    if (kids[r] == 0) {
      close(fds[r == 0 ? 0 : 1]); /* PE 0 writes the id, PE 1 reads it: EOF if PE 0 dies */
      _exit(run_pe(r, fds[r == 0 ? 1 : 0]));
    }
  }
  close(fds[0]);
  close(fds[1]);
  int failed = 0;
  for (int r = 0; r < 2; r++) {
    int st = 0;
    if (kids[r] < 0 || waitpid(kids[r], &st, 0) != kids[r] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "gpu_nvshmem_2pe: PE %d failed\n", r);
      failed = 1;
    }
  }
  printf("%s: 2 PEs on 2 GPUs\n", failed ? "FAIL" : "PASS");
  return failed;
}
