/* Example: several GPUs, one process (one NVSHMEM PE) per GPU. Every PE fills its copy of one
 * symmetric buffer with its own pattern, encodes tensormap[16] over the PEs' copies (map p = PE
 * p's copy, from ONE tensor and a PE list), and launches a TMA gather whose blocks pick the peer
 * by run-time index (kernels/tma_gather.cu: block b loads a 16 x 16 box from maps[work[3b]]).
 * Every tile of every peer is checked on the host. The kernel calls no NVSHMEM function, so it
 * needs no device-linking and no attach: the maps carry the peers' addresses.
 *   example_nvshmem_gather [tma_gather.sm_90.cubin] [PES]   (PES: default the GPUs, at most 16)
 * One GPU gives one PE gathering from itself. Needs NVSHMEM's host library (gclaunch info). The
 * parent forks the PEs before any CUDA call; PE 0 sends the unique id through a pipe. */
#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
static int run_pe(const char *cubin, int rank, int pes, int fd) {
  rank_ = rank;
  gcl_pe_unique_id id;
  gcl_context *ctx = NULL;
  if (check(gcl_context_create(rank, &ctx), "context")) return 1;
  if (rank == 0 && check(gcl_pe_unique_id_create(&id), "unique id")) return 1;
  for (int i = 1; rank == 0 && i < pes; i++) /* one copy per other PE (atomic pipe writes) */
    if (write(fd, id.bytes, sizeof id.bytes) != (ssize_t)sizeof id.bytes) return 1;
  if (rank != 0 && read(fd, id.bytes, sizeof id.bytes) != (ssize_t)sizeof id.bytes) return 1;
  if (check(gcl_pe_start(ctx, &id, rank, pes), "start")) return 1;
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
  if (!bad) printf("PE %d of %d: %d tiles gathered from %d PE(s) through peer tensor maps, all exact\n", rank, pes, 4 * pes, pes);
  return bad;
}

static int gpus(void) { /* counted in a child: the parent starts no CUDA before forking */
  pid_t pid = fork();
  if (pid == 0) {
    int n = 0;
    _exit(gcl_device_count(&n) == GCL_OK ? (n > MAPS ? MAPS : n) : 0);
  }
  int st = 0;
  return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 0;
}

int main(int argc, char **argv) {
  const char *cubin = argc > 1 ? argv[1] : "build/kernels/tma_gather.sm_90.cubin";
  int n = gpus(), pes = argc > 2 ? atoi(argv[2]) : n;
  if (pes < 1 || pes > n) {
    fprintf(stderr, "example_nvshmem_gather: %d PE(s) asked, %d GPU(s) usable\n", pes, n);
    return 1;
  }
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);          /* NVLink multicast off */
  setenv("NVSHMEM_REMOTE_TRANSPORT", "none", 0);   /* one host: peers over NVLink/PCIe P2P */
  int fds[2];
  if (pipe(fds) != 0) return 1;
  pid_t kids[MAPS];
  for (int r = 0; r < pes; r++) {
    if ((kids[r] = fork()) != 0) continue;
    close(fds[r == 0 ? 0 : 1]); /* PE 0 writes the id, the others read it: EOF if PE 0 dies */
    _exit(run_pe(cubin, r, pes, fds[r == 0 ? 1 : 0]));
  }
  close(fds[0]);
  close(fds[1]);
  int failed = 0;
  for (int r = 0; r < pes; r++) {
    int st = 0;
    failed |= waitpid(kids[r], &st, 0) != kids[r] || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
  }
  printf("%s\n", failed ? "FAILED" : "all PEs verified");
  return failed;
}
