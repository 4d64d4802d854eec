/* Which launches does the driver accept when the current context is not the kernel's? A raw
 * experiment (no gclaunch), run twice on the H200 (bench/results/launch_context_raw_2026-12-03.log).
 * Build: cc -std=c11 -I/usr/local/cuda/include ctxexp.c -L/usr/local/cuda/lib64/stubs -lcuda;
 * run next to k.cubin from: extern "C" __global__ void w(int *p, int v) { *p = v; }
 * (nvcc -cubin -arch=sm_90 -o k.cubin k.cu). Note: nm() printed "O" for NULL in the first
 * block of the first run (O was still NULL then). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
static void *load(const char *path) { FILE *f = fopen(path, "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f);
  void *b = malloc(n); fread(b, 1, n, f); fclose(f); return b; }
#define C(x) do { CUresult r_ = (x); if (r_) { printf("FAIL %s = %d\n", #x, r_); return 1; } } while (0)
static CUfunction fn; static CUdeviceptr dP; static CUcontext P, O;
static const char *nm(CUcontext c) { return !c ? "none" : c == P ? "P" : c == O ? "O" : "?"; }
static void try_launch(const char *label, CUstream s, int v, int ex) {
  void *args[] = {&dP, &v};
  CUresult rc;
  if (ex) { CUlaunchConfig cfg = {1,1,1,1,1,1,0,s,NULL,0}; rc = cuLaunchKernelEx(&cfg, fn, args, NULL); }
  else rc = cuLaunchKernel(fn, 1,1,1,1,1,1,0,s,args,NULL);
  CUcontext cur = NULL; cuCtxGetCurrent(&cur);
  const char *en = ""; cuGetErrorName(rc, &en);
  /* read the value back in P */
  CUcontext save = cur; cuCtxSetCurrent(P); CUresult sr = cuCtxSynchronize(); int got = -1; cuMemcpyDtoH(&got, dP, 4);
  int zero = 0; cuMemcpyHtoD(dP, &zero, 4); cuCtxSetCurrent(save);
  printf("%-40s %s rc=%d %-28s current after=%s  P sync=%d value=%d (launched %d)\n", label, ex ? "Ex " : "old", rc, en, nm(cur), sr, got, v);
}
int main(void) {
  CUdevice d; CUlibrary lib; CUkernel k; CUstream sP, sO;
  C(cuInit(0)); C(cuDeviceGet(&d, 0)); C(cuDevicePrimaryCtxRetain(&P, d)); C(cuCtxSetCurrent(P));
  C(cuLibraryLoadData(&lib, load("k.cubin"), NULL, NULL, 0, NULL, NULL, 0));
  C(cuLibraryGetKernel(&k, lib, "w")); C(cuKernelGetFunction(&fn, k));
  C(cuMemAlloc(&dP, 4)); int zero = 0; C(cuMemcpyHtoD(dP, &zero, 4));
  C(cuStreamCreate(&sP, CU_STREAM_NON_BLOCKING));
  for (int ex = 0; ex < 2; ex++) {
    C(cuCtxSetCurrent(P)); try_launch("P current, P stream", sP, 11, ex); try_launch("P current, NULL stream", NULL, 12, ex);
    C(cuCtxSetCurrent(NULL)); try_launch("no context, P stream", sP, 21, ex);
    C(cuCtxSetCurrent(NULL)); try_launch("no context, NULL stream", NULL, 22, ex);
  }
  C(cuCtxCreate(&O, NULL, 0, d)); /* now current */
  C(cuStreamCreate(&sO, CU_STREAM_NON_BLOCKING));
  for (int ex = 0; ex < 2; ex++) {
    C(cuCtxSetCurrent(O)); try_launch("other ctx current, P stream", sP, 31, ex);
    C(cuCtxSetCurrent(O)); try_launch("other ctx current, NULL stream", NULL, 32, ex);
    C(cuCtxSetCurrent(O)); try_launch("other ctx current, O stream", sO, 33, ex);
    C(cuCtxSetCurrent(P)); try_launch("P current, O stream", sO, 34, ex);
  }
  C(cuCtxSetCurrent(O)); try_launch("other ctx current, LEGACY stream", CU_STREAM_LEGACY, 41, 1);
  C(cuCtxSetCurrent(O)); try_launch("other ctx current, PER_THREAD stream", CU_STREAM_PER_THREAD, 42, 1);
  C(cuCtxSetCurrent(NULL)); try_launch("no context, LEGACY stream", CU_STREAM_LEGACY, 43, 1);
  C(cuCtxSetCurrent(NULL)); try_launch("no context, PER_THREAD stream", CU_STREAM_PER_THREAD, 44, 1);
  C(cuCtxSetCurrent(NULL)); printf("no context: cuFuncSetAttribute(max dyn smem 64K) = %d\n", cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
  C(cuCtxSetCurrent(O)); printf("other ctx: cuFuncSetAttribute(max dyn smem 80K) = %d\n", cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 81920));
  C(cuCtxSetCurrent(O)); CUresult r = cuCtxSynchronize(); printf("O sync at end: %d\n", r);
  C(cuCtxSetCurrent(P)); r = cuCtxSynchronize(); printf("P sync at end: %d\n", r);
  return 0;
}
