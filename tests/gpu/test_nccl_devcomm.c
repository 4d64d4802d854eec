/* NCCL's device API for real (one GPU, one rank): a communicator made by the NCCL library the
 * runner has (GCL_NCCL_LIB, opened here at run time as gclaunch opens libcuda), a symmetric window
 * on it, ncclDevCommCreate's communicator passed BY VALUE to kernels/nccl_lsa.cu's lsa_put (built
 * with the toolkit's NCCL headers) through gcl_args_set_nccl_devcomm; the kernel writes through
 * ncclGetLsaPointer into the window and its rank and LSA size into out, both checked on the host.
 * Then the refusal: a library of another layout generation (GCL_NCCL_OTHER_LIB, e.g. the
 * system's libnccl beside the wheel's) is refused by name before any launch. tests/gpu/test_nccl.sh
 * finds the libraries and skips (77) saying why when there is none. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"
#include "nccl_devcomm_size.h"
#include "../common/test_rng.h"

#define N GCL_TEST_NCCL_DEVCOMM_BYTES
#define STR_(x) #x
#define STR(x) STR_(x)
#define SIG "bytes(" STR(N) ") align(" STR(GCL_TEST_NCCL_DEVCOMM_ALIGN) ") comm, ptr win, u64 offset, i32* out"
#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())

/* The NCCL calls this test makes, as nccl.h declares them (ncclComm_t and ncclWindow_t are
 * pointers; the requirements struct travels as the headers' bytes). */
typedef struct nccl_api {
  void *lib;
  int (*get_version)(int *);
  int (*init_all)(void **comms, int ndev, const int *devlist);
  int (*mem_alloc)(void **ptr, size_t size);
  int (*mem_free)(void *ptr);
  int (*window_register)(void *comm, void *buf, size_t size, void **win, int flags);
  int (*window_deregister)(void *comm, void *win);
  int (*devcomm_create)(void *comm, const void *reqs, void *out);
  int (*devcomm_destroy)(void *comm, const void *devcomm);
  int (*comm_destroy)(void *comm);
  const char *(*error_string)(int);
} nccl_api;

#define SYM(a, field, name) (*(void **)&(a)->field = dlsym((a)->lib, (name)))

static void nccl_open(nccl_api *a, const char *path) {
  memset(a, 0, sizeof *a);
  cr_assert(path && *path, "no NCCL library named (tests/gpu/test_nccl.sh sets GCL_NCCL_LIB)");
  a->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  cr_assert(a->lib, "dlopen(%s): %s", path, dlerror());
  cr_assert(SYM(a, get_version, "ncclGetVersion") && SYM(a, init_all, "ncclCommInitAll") &&
                SYM(a, mem_alloc, "ncclMemAlloc") && SYM(a, mem_free, "ncclMemFree") &&
                SYM(a, window_register, "ncclCommWindowRegister") &&
                SYM(a, window_deregister, "ncclCommWindowDeregister") &&
                SYM(a, devcomm_create, "ncclDevCommCreate") &&
                SYM(a, devcomm_destroy, "ncclDevCommDestroy") &&
                SYM(a, comm_destroy, "ncclCommDestroy") &&
                SYM(a, error_string, "ncclGetErrorString"),
            "%s lacks a device-API symbol (NCCL 2.28+ has them all)", path);
}

#define NCCL(a, call) do { int r_ = (call); \
    cr_assert_eq(r_, 0, "%s: %s", #call, (a)->error_string(r_)); } while (0)

enum { THREADS = 256, WINDOW = 1 << 20 };

/* What lsa_put wrote: out = {lsaRank, lsaSize}, window ints at offset = thread + lsaRank. */
static void check_results(gcl_context *ctx, uint64_t out, uint64_t buf, size_t offset) {
  int got[2], win[THREADS];
  CHECK(gcl_mem_download(ctx, got, out, sizeof got));
  CHECK(gcl_mem_download(ctx, win, buf + offset, sizeof win));
  cr_assert_eq(got[0], 0, "lsaRank read from the communicator: %d", got[0]);
  cr_assert_eq(got[1], 1, "lsaSize read from the communicator: %d", got[1]);
  for (int i = 0; i < THREADS; i++)
    cr_assert_eq(win[i], i, "window int %d at offset %zu: %d", i, offset, win[i]);
}

Test(nccl_devcomm_gpu, a_one_rank_communicator_by_value_reaches_the_kernel) {
  nccl_api a;
  nccl_open(&a, getenv("GCL_NCCL_LIB"));
  int version = 0;
  NCCL(&a, a.get_version(&version));
  cr_log_info("NCCL %d (library), kernel built with %d\n", version, GCL_TEST_NCCL_VERSION_CODE);
  if (gcl_nccl_layout_generation(version) != gcl_nccl_layout_generation(GCL_TEST_NCCL_VERSION_CODE))
    cr_skip_test("GCL_NCCL_LIB is NCCL %d, the kernel's headers %d: another layout (the refusal "
                 "test covers that)", version, GCL_TEST_NCCL_VERSION_CODE);
  gcl_context *ctx;
  CHECK(gcl_context_create(0, &ctx));
  void *comm = NULL, *buf = NULL, *win = NULL;
  const int dev0 = 0;
  NCCL(&a, a.init_all(&comm, 1, &dev0));
  NCCL(&a, a.mem_alloc(&buf, WINDOW));
  NCCL(&a, a.window_register(comm, buf, WINDOW, &win, 0x01 /* NCCL_WIN_COLL_SYMMETRIC */));
  static const unsigned char reqs[] = GCL_TEST_NCCL_REQS_BYTES;
  _Alignas(16) unsigned char devcomm[N + 512]; /* room past N: a library of another size */
  memset(devcomm, 0, sizeof devcomm);
  NCCL(&a, a.devcomm_create(comm, reqs, devcomm));

  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
  CHECK(gcl_module_load_file(ctx, GCL_KERNEL("nccl_lsa.sm_90.cubin"), &mod));
  CHECK(gcl_module_find_kernel(mod, "lsa_put", SIG, &k));
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  gcl_nccl_devcomm d = {.bytes = devcomm, .size = N, .runtime_version = version,
                        .kernel_version = GCL_TEST_NCCL_VERSION_CODE};
  CHECK(gcl_args_set_nccl_devcomm_param(args, 0, &d));
  uint64_t out;
  seed_rng_for("test_nccl_devcomm");
  size_t offset = 4096 * (size_t)(1 + rnd(64)); /* a fresh place in the window each run */
  CHECK(gcl_mem_alloc(ctx, 8, &out));
  CHECK(gcl_args_set_ptr(args, 1, (uint64_t)(uintptr_t)win));
  CHECK(gcl_args_set_u64(args, 2, offset));
  CHECK(gcl_args_set_ptr(args, 3, out));
  gcl_launch_config cfg = {.grid = {1, 1, 1}, .block = {THREADS, 1, 1}};
  CHECK(gcl_launch(k, &cfg, args));
  CHECK(gcl_context_synchronize(ctx));
  check_results(ctx, out, (uint64_t)(uintptr_t)buf, offset);

  gcl_args_destroy(args);
  gcl_module_destroy(mod);
  CHECK(gcl_mem_free(ctx, out));
  NCCL(&a, a.devcomm_destroy(comm, devcomm));
  NCCL(&a, a.window_deregister(comm, win));
  NCCL(&a, a.mem_free(buf));
  NCCL(&a, a.comm_destroy(comm));
  gcl_context_destroy(ctx);
}

Test(nccl_devcomm_gpu, a_library_of_another_layout_is_refused_before_any_launch) {
  const char *other = getenv("GCL_NCCL_OTHER_LIB");
  if (!other || !*other) cr_skip_test("no second NCCL library (GCL_NCCL_OTHER_LIB) on this machine");
  nccl_api a;
  nccl_open(&a, other);
  int version = 0;
  NCCL(&a, a.get_version(&version));
  if (gcl_nccl_layout_generation(version) == gcl_nccl_layout_generation(GCL_TEST_NCCL_VERSION_CODE))
    cr_skip_test("GCL_NCCL_OTHER_LIB is NCCL %d, the kernel's layout too", version);
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
  CHECK(gcl_context_create(0, &ctx));
  CHECK(gcl_module_load_file(ctx, GCL_KERNEL("nccl_lsa.sm_90.cubin"), &mod));
  CHECK(gcl_module_find_kernel(mod, "lsa_put", SIG, &k));
  CHECK(gcl_args_create(gcl_kernel_layout(k), &args));
  unsigned char devcomm[N];
  memset(devcomm, 0, sizeof devcomm); /* the library's own communicator would have its layout */
  gcl_nccl_devcomm d = {.bytes = devcomm, .size = N, .runtime_version = version,
                        .kernel_version = GCL_TEST_NCCL_VERSION_CODE};
  cr_assert_eq(gcl_args_set_nccl_devcomm_param(args, 0, &d), GCL_ERROR_TYPE_MISMATCH,
               "NCCL %d's communicator for a kernel of %d", version, GCL_TEST_NCCL_VERSION_CODE);
  char want[32];
  snprintf(want, sizeof want, "NCCL %d.%d.%d", version / 10000, version / 100 % 100, version % 100);
  cr_assert(strstr(gcl_last_error(), want) && strstr(gcl_last_error(), "'comm'"), "%s", gcl_last_error());
  cr_log_info("refused: %s\n", gcl_last_error());
  gcl_args_destroy(args);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
}
