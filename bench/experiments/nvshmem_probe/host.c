/* NVSHMEM probe through the host library alone (dlopen, no device library on the host side):
 * nvshmemx_hostlib_init_attr with a unique id, nvshmem_malloc, nvshmem_ptr, a device-linked cubin
 * loaded with cuLibraryLoadData, its version global read, nvshmemx_culibrary_init, a cooperative
 * launch of a put-to-self with nvshmem_barrier_all, finalize. Prints every return code. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

typedef struct { char b[128]; } uid_t128;
typedef struct { int version; int myrank; int nranks; uid_t128 *id; } uid_args; /* 24 bytes */
typedef struct { int version; uid_args uid_args; int cuda_device_id; char content[92]; } init_args_v2;
typedef struct { int version; void *mpi_comm; init_args_v2 args; } init_attr; /* guess */

#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorString(r_, &s); printf("FAIL %s = %d (%s)\n", #x, r_, s); } else printf("ok %s\n", #x); } while (0)

int main(int argc, char **argv) {
  const char *lib = argv[1], *cubin = argv[2];
  printf("sizeof uid_args %zu init_args_v2 %zu init_attr %zu\n", sizeof(uid_args), sizeof(init_args_v2), sizeof(init_attr));
  CK(cuInit(0));
  CUdevice dev; CUcontext ctx; CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
  printf("dlopen %s: %s\n", lib, h ? "ok" : dlerror());
  if (!h) return 1;
  const char *names[] = {"nvshmemx_hostlib_init_attr", "nvshmemx_get_uniqueid", "nvshmemx_set_attr_uniqueid_args",
    "nvshmemx_culibrary_init", "nvshmemx_culibrary_finalize", "nvshmemx_cumodule_init", "nvshmem_malloc",
    "nvshmem_free", "nvshmem_ptr", "nvshmem_my_pe", "nvshmem_n_pes", "nvshmemx_hostlib_finalize",
    "nvshmem_finalize", "nvshmem_info_get_version", "nvshmemx_vendor_get_version_info", "nvshmem_barrier_all",
    "nvshmemx_barrier_all_on_stream", "nvshmemx_init_status", "nvshmemx_get_uniqueid_v2", 0};
  for (int i = 0; names[i]; i++) printf("sym %-36s %s\n", names[i], dlsym(h, names[i]) ? "present" : "absent");
  void (*vinfo)(int *, int *, int *) = (void (*)(int *, int *, int *))dlsym(h, "nvshmemx_vendor_get_version_info");
  if (vinfo) { int a = -1, b = -1, c = -1; vinfo(&a, &b, &c); printf("vendor version %d.%d.%d\n", a, b, c); }
  void (*iv)(int *, int *) = (void (*)(int *, int *))dlsym(h, "nvshmem_info_get_version");
  if (iv) { int a = -1, b = -1; iv(&a, &b); printf("spec version %d.%d\n", a, b); }
  int (*getuid)(uid_t128 *) = dlsym(h, "nvshmemx_get_uniqueid");
  int (*setargs)(int, int, uid_t128 *, init_attr *) = dlsym(h, "nvshmemx_set_attr_uniqueid_args");
  int (*hinit)(unsigned, init_attr *) = dlsym(h, "nvshmemx_hostlib_init_attr");
  static uid_t128 id; static init_attr attr;
  if (getuid) printf("get_uniqueid -> %d\n", getuid(&id));
  unsigned char *ub = (unsigned char *)&id; printf("uid head: "); for (int i = 0; i < 16; i++) printf("%02x", ub[i]); printf("\n");
  /* Fill attr by hand as the header's inline helpers would (version words per the notes). */
  memset(&attr, 0, sizeof attr);
  attr.version = (2 << 16) + (int)sizeof(init_attr);
  attr.args.version = (2 << 16) + (int)sizeof(init_args_v2);
  attr.args.uid_args.version = (1 << 16) + (int)sizeof(uid_args);
  attr.args.uid_args.myrank = 0; attr.args.uid_args.nranks = 1; attr.args.uid_args.id = &id;
  attr.args.cuda_device_id = 0;
  if (setargs) printf("set_attr_uniqueid_args(exported) -> %d\n", setargs(0, 1, &id, &attr));
  printf("attr words: version %#x args.version %#x uid.version %#x\n", attr.version, attr.args.version, attr.args.uid_args.version);
  unsigned flag = argc > 3 ? (unsigned)strtoul(argv[3], 0, 0) : 1u;
  int rc = hinit ? hinit(flag, &attr) : -99;
  printf("hostlib_init_attr(flag %u) -> %d\n", flag, rc);
  if (rc) return 2;
  int (*mype)(void) = dlsym(h, "nvshmem_my_pe"), (*npes)(void) = dlsym(h, "nvshmem_n_pes");
  printf("pe %d of %d\n", mype(), npes());
  void *(*smalloc)(size_t) = dlsym(h, "nvshmem_malloc");
  void *(*sptr)(const void *, int) = dlsym(h, "nvshmem_ptr");
  int *sym = smalloc(4096);
  printf("nvshmem_malloc -> %p, nvshmem_ptr(sym,0) -> %p, nvshmem_ptr(sym,1) -> %p\n", (void *)sym, sptr(sym, 0), sptr(sym, 1));
  FILE *f = fopen(cubin, "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
  void *img = malloc(n); fread(img, 1, n, f); fclose(f);
  CUlibrary L; CK(cuLibraryLoadData(&L, img, 0, 0, 0, 0, 0, 0));
  CUdeviceptr g; size_t gs;
  CK(cuLibraryGetGlobal(&g, &gs, L, "nvshmemi_device_lib_version_d"));
  int ver[3] = {0}; if (gs <= sizeof ver) CK(cuMemcpyDtoH(ver, g, gs));
  printf("module version global size %zu: %d %d %d\n", gs, ver[0], ver[1], ver[2]);
  CK(cuLibraryGetGlobal(&g, &gs, L, "nvshmemi_device_state_d")); printf("state size %zu\n", gs);
  CUkernel k; CK(cuLibraryGetKernel(&k, L, "put_self"));
  int (*linit)(CUlibrary) = dlsym(h, "nvshmemx_culibrary_init");
  printf("culibrary_init -> %d\n", linit(L));
  CUfunction fn; CK(cuKernelGetFunction(&fn, k));
  int value = 41; void *args[] = {&sym, &value};
  CUlaunchAttribute at = {.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE, .value.cooperative = 1};
  CUlaunchConfig cfg = {.gridDimX = 4, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64, .blockDimY = 1, .blockDimZ = 1, .attrs = &at, .numAttrs = 1};
  CK(cuLaunchKernelEx(&cfg, fn, args, 0));
  CK(cuCtxSynchronize());
  int back = 0; CK(cuMemcpyDtoH(&back, (CUdeviceptr)sym, 4)); printf("put_self result %d (want 41)\n", back);
  int (*lfin)(CUlibrary) = dlsym(h, "nvshmemx_culibrary_finalize");
  if (lfin) printf("culibrary_finalize -> %d\n", lfin(L));
  CK(cuLibraryUnload(L));
  void (*sfree)(void *) = dlsym(h, "nvshmem_free"); sfree(sym);
  void (*fin)(void) = dlsym(h, "nvshmemx_hostlib_finalize");
  if (fin) { fin(); printf("hostlib_finalize done\n"); }
  return 0;
}
