// NCCL's device API for real (issue 54, item 5), on one GPU: a one-rank communicator of the NCCL
// library tests/gpu/test_nccl_devcomm.sh found (the pip wheel nvidia-nccl-cu13 by import, else the
// loader's libnccl.so.2), a symmetric window, ncclDevCommCreate's communicator checked with
// gcl_nccl_devcomm_check against the headers this program and kernels/nccl_lsa.cu were built with,
// then passed BY VALUE as bytes(sizeof(ncclDevComm)) to lsa_put, which writes through the LSA
// pointer to its own window; every word is verified. A runtime NCCL other than the headers' is
// refused by name instead (DeepEP#687's silent mismatch) and nothing is launched.
//   gpu_nccl_devcomm_run   (GCL_KERNEL_DIR; GCL_NCCL_LIB: the libnccl.so.2 to open)
// Exit 77 without a GPU or an NCCL library (1 under GCL_REQUIRE_GPU=1 without a GPU).
#include <dlfcn.h>
#include <stdint.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <nccl.h>
#include <nccl_device.h>

#include "gclaunch/gclaunch.h"

#define TRY(call)                                                                                 \
  do {                                                                                            \
    gcl_status s_ = (call);                                                                       \
    if (s_ != GCL_OK) {                                                                           \
      std::fprintf(stderr, "FAIL: %s: %s: %s\n", #call, gcl_status_name(s_), gcl_last_error());  \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)
#define NCCL_TRY(call)                                                                            \
  do {                                                                                            \
    ncclResult_t r_ = (call);                                                                     \
    if (r_ != ncclSuccess) {                                                                      \
      std::fprintf(stderr, "FAIL: %s: ncclResult %d (%s)\n", #call, (int)r_, api.errorString(r_)); \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)

struct Nccl {
  decltype(&ncclGetVersion) getVersion;
  decltype(&ncclGetErrorString) errorString;
  decltype(&ncclGetUniqueId) getUniqueId;
  decltype(&ncclCommInitRank) commInitRank;
  decltype(&ncclCommDestroy) commDestroy;
  decltype(&ncclMemAlloc) memAlloc;
  decltype(&ncclMemFree) memFree;
  decltype(&ncclCommWindowRegister) windowRegister;
  decltype(&ncclCommWindowDeregister) windowDeregister;
  decltype(&ncclDevCommCreate) devCommCreate;
  decltype(&ncclDevCommDestroy) devCommDestroy;
};
static Nccl api;

// Opens the library and its entry points; false (saying why) when it cannot.
static bool open_nccl(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return std::printf("SKIP: no NCCL library: dlopen(%s): %s\n", path, dlerror()), false;
#define SYM(field, name)                                                                          \
  if (!(*(void **)&api.field = dlsym(lib, #name)))                                               \
    return std::printf("SKIP: %s lacks %s (NCCL's device API needs 2.28)\n", path, #name), false;
  SYM(getVersion, ncclGetVersion) SYM(errorString, ncclGetErrorString)
  SYM(getUniqueId, ncclGetUniqueId) SYM(commInitRank, ncclCommInitRank)
  SYM(commDestroy, ncclCommDestroy) SYM(memAlloc, ncclMemAlloc) SYM(memFree, ncclMemFree)
  SYM(windowRegister, ncclCommWindowRegister) SYM(windowDeregister, ncclCommWindowDeregister)
  SYM(devCommCreate, ncclDevCommCreate) SYM(devCommDestroy, ncclDevCommDestroy)
#undef SYM
  return true;
}

// lsa_put with the communicator by value; every word of the window and (lsaRank, lsaSize) checked.
static int launch_and_verify(gcl_context *ctx, const ncclDevComm &dc, ncclWindow_t win, void *buf) {
  char sig[160], path[1024];
  std::snprintf(sig, sizeof sig, "bytes(%zu) align(%zu) comm, ptr win, u64 offset, i32* out",
                sizeof(ncclDevComm), alignof(ncclDevComm));
  std::snprintf(path, sizeof path, "%s/nccl_lsa.sm_90.cubin", std::getenv("GCL_KERNEL_DIR"));
  gcl_module *mod = nullptr;
  gcl_kernel *k = nullptr;
  gcl_args *a = nullptr;
  uint64_t out = 0;
  TRY(gcl_module_load_file(ctx, path, &mod));
  TRY(gcl_module_find_kernel(mod, "lsa_put", sig, &k));
  TRY(gcl_args_create(gcl_kernel_layout(k), &a));
  if (gcl_args_set(a, 0, &dc, sizeof dc - 8) == GCL_OK)
    return std::fprintf(stderr, "FAIL: a communicator 8 bytes short was accepted\n"), 1;
  TRY(gcl_args_set(a, 0, &dc, sizeof dc));
  TRY(gcl_args_set_ptr(a, 1, (uint64_t)(uintptr_t)win));
  TRY(gcl_args_set_u64(a, 2, 0));
  TRY(gcl_mem_alloc(ctx, 8, &out));
  TRY(gcl_args_set_ptr(a, 3, out));
  TRY(gcl_mem_fill_u8(ctx, (uint64_t)(uintptr_t)buf, 0xff, 64 * sizeof(int)));
  gcl_launch_config c = {};
  c.grid[0] = 1, c.block[0] = 64;
  TRY(gcl_launch(k, &c, a));
  TRY(gcl_context_synchronize(ctx));
  int got[64], info[2];
  TRY(gcl_mem_download(ctx, got, (uint64_t)(uintptr_t)buf, sizeof got));
  TRY(gcl_mem_download(ctx, info, out, sizeof info));
  int bad = info[0] != 0 || info[1] != 1;
  for (int i = 0; i < 64; i++) bad |= got[i] != i;
  std::printf("lsa_put through the communicator by value: (lsaRank, lsaSize) = (%d, %d), window "
              "words %s\n", info[0], info[1], bad ? "WRONG" : "0 ... 63 as written");
  gcl_args_destroy(a);
  gcl_module_destroy(mod);
  TRY(gcl_mem_free(ctx, out));
  return bad;
}

// The communicator, its window and the check; then the launch when the check passes.
static int run(gcl_context *ctx, int runtime) {
  ncclUniqueId id;
  ncclComm_t comm = nullptr;
  void *buf = nullptr;
  ncclWindow_t win = nullptr;
  ncclDevComm dc;
  ncclDevCommRequirements reqs;
  std::memset(&dc, 0, sizeof dc);
  std::memset(&reqs, 0, sizeof reqs);
  NCCL_TRY(api.getUniqueId(&id));
  NCCL_TRY(api.commInitRank(&comm, 1, id, 0));
  NCCL_TRY(api.memAlloc(&buf, 1 << 16));
  NCCL_TRY(api.windowRegister(comm, buf, 1 << 16, &win, NCCL_WIN_COLL_SYMMETRIC));
  NCCL_TRY(api.devCommCreate(comm, &reqs, &dc));
  gcl_status s = gcl_nccl_devcomm_check(&dc, sizeof dc, NCCL_VERSION_CODE, runtime);
  int bad = 0;
  if (runtime != NCCL_VERSION_CODE) {
    std::printf("the runtime is not the headers' NCCL: %s: %s\n", gcl_status_name(s), gcl_last_error());
    bad = s != GCL_ERROR_TYPE_MISMATCH; // refused by name, nothing launched
  } else {
    bad = s != GCL_OK || gcl_nccl_devcomm_check(&dc, sizeof dc, NCCL_VERSION_CODE, runtime + 1) !=
                             GCL_ERROR_TYPE_MISMATCH;
    if (bad) std::fprintf(stderr, "FAIL: gcl_nccl_devcomm_check: %s\n", gcl_last_error());
    if (!bad) bad = launch_and_verify(ctx, dc, win, buf);
  }
  NCCL_TRY(api.devCommDestroy(comm, &dc));
  NCCL_TRY(api.windowDeregister(comm, win));
  NCCL_TRY(api.memFree(buf));
  NCCL_TRY(api.commDestroy(comm));
  return bad;
}

int main() {
  const char *req = std::getenv("GCL_REQUIRE_GPU"), *lib = std::getenv("GCL_NCCL_LIB");
  int n = 0;
  if (gcl_device_count(&n) != GCL_OK || n == 0) {
    bool must = req && std::strcmp(req, "1") == 0;
    std::printf("%s: no usable GPU\n", must ? "FAIL (GCL_REQUIRE_GPU=1)" : "SKIP");
    return must ? 1 : 77;
  }
  if (!std::getenv("GCL_KERNEL_DIR")) return std::fprintf(stderr, "FAIL: GCL_KERNEL_DIR is not set\n"), 1;
  if (!open_nccl(lib && *lib ? lib : "libnccl.so.2")) return 77;
  int runtime = 0;
  NCCL_TRY(api.getVersion(&runtime));
  std::printf("NCCL runtime %d (%s), headers %d; sizeof(ncclDevComm) %zu\n", runtime,
              lib && *lib ? lib : "libnccl.so.2", NCCL_VERSION_CODE, sizeof(ncclDevComm));
  gcl_context *ctx = nullptr;
  TRY(gcl_context_create(0, &ctx));
  TRY(gcl_context_bind(ctx)); // NCCL's CUDA runtime uses device 0's primary context: this one
  int bad = run(ctx, runtime);
  gcl_context_destroy(ctx);
  std::printf("%s: NCCL device communicator by value, checked against the kernel's headers\n",
              bad ? "FAIL" : "PASS");
  return bad;
}
