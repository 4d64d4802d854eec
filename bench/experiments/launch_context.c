/* The same states through gclaunch (bench/results/launch_context_2026-12-03.log). Build against
 * the internal headers and the static library: cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib/core
 * -Ilib/cuda -I/usr/local/cuda/include launch_context.c build/libgclaunch.a -lffi -ldl -lpthread;
 * argument: build/kernels/launchcfg.fatbin. */
#include <dlfcn.h>
#include <stdio.h>
#include "cuda_internal.h"
typedef CUresult (*ctx_create_fn)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);
typedef CUresult (*ctx_one_fn)(CUcontext);
static CUcontext P, O;
static const char *nm(void) { CUcontext c = NULL; gcl__cu.cuCtxGetCurrent(&c); return !c ? "none" : c == P ? "P" : c == O ? "O" : "?"; }
static gcl_kernel *k; static gcl_args *a; static gcl_stream *s;
static void round_(const char *label, CUcontext set) {
  gcl__cu.cuCtxSetCurrent(set);
  CUlaunchConfig cfg = {16, 1, 1, 32, 1, 1, 0, (CUstream)gcl_stream_handle(s), NULL, 0};
  CUresult rc = gcl__cu.cuLaunchKernelEx(&cfg, k->fn, gcl__args_param_pointers(a), NULL);
  printf("%-28s raw Ex own stream: rc %d, current after %s\n", label, rc, nm());
  gcl__cu.cuCtxSetCurrent(set);
  gcl_launch_config c = {.grid = {16}, .block = {32}, .stream = gcl_stream_handle(s)};
  gcl_status st = gcl_launch(k, &c, a);
  printf("%-28s gcl_launch own stream: %d, current after %s %s\n", label, st, nm(), st ? gcl_last_error() : "");
  gcl__cu.cuCtxSetCurrent(set);
  c.stream = NULL;
  st = gcl_launch(k, &c, a);
  printf("%-28s gcl_launch NULL stream: %d, current after %s %s\n", label, st, nm(), st ? gcl_last_error() : "");
}
int main(int argc, char **argv) {
  gcl_context *ctx; gcl_module *m; uint64_t out;
  if (gcl_context_create(0, &ctx)) { puts(gcl_last_error()); return 1; }
  if (gcl_module_load_file(ctx, argv[1], &m) || gcl_module_find_kernel(m, "cfg_add", "u32* out, u32 add", &k)) { puts(gcl_last_error()); return 1; }
  gcl_args_create(gcl_kernel_layout(k), &a); gcl_mem_alloc(ctx, 64, &out); gcl_args_set_ptr(a, 0, out); gcl_args_set_u32(a, 1, 1);
  gcl_stream_create(ctx, 0, &s);
  gcl_context_bind(ctx); gcl__cu.cuCtxGetCurrent(&P);
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  CUdevice d; gcl__cu.cuDeviceGet(&d, 0);
  round_("A: none, no other ctx", NULL);
  gcl__cu.cuCtxSetCurrent(P);
  CUresult r = ((ctx_create_fn)dlsym(h, "cuCtxCreate_v4"))(&O, NULL, 0, d); printf("created O (pushed): %d, current %s\n", r, nm());
  round_("B: none, O exists", NULL);
  round_("C: O current", O);
  round_("C2: P current", P);
  CUcontext popped = NULL; int pops = 0;
  while (((CUresult (*)(CUcontext *))dlsym(h, "cuCtxPopCurrent_v2"))(&popped) == CUDA_SUCCESS && pops < 8) pops++;
  printf("popped %d, current %s\n", pops, nm());
  CUlaunchConfig cfg = {16, 1, 1, 32, 1, 1, 0, (CUstream)gcl_stream_handle(s), NULL, 0};
  r = gcl__cu.cuLaunchKernelEx(&cfg, k->fn, gcl__args_param_pointers(a), NULL);
  printf("D: empty stack raw Ex own stream: rc %d, current %s\n", r, nm());
  round_("E: none after pops", NULL);
  r = ((ctx_one_fn)dlsym(h, "cuCtxDestroy_v2"))(O); printf("destroyed O: %d\n", r);
  round_("F: none, O destroyed", NULL);
  gcl__cu.cuCtxSetCurrent(P); printf("sync %d\n", gcl_context_synchronize(ctx));
  return 0;
}
