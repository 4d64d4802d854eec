/* Do a tensor map's bytes depend on the context current at the encode? A raw experiment (no
 * gclaunch) for docs/facts.md "Tensor maps: cost and bytes": 64 random 2-D tiled maps over one
 * allocation of the primary context P, each encoded with P current and again with another context
 * O of the same device current (cuCtxCreate), compared byte for byte; then the same with the
 * address replaced under O (cuTensorMapReplaceAddress). Prints one line per kind of comparison.
 * Build: cc -std=c11 -I/usr/local/cuda/include tmap_context.c -L/usr/local/cuda/lib64/stubs -lcuda */
#include <cuda.h>
#include <stdio.h>
#include <string.h>
#define C(x) do { CUresult r_ = (x); if (r_) { printf("FAIL %s = %d\n", #x, r_); return 1; } } while (0)
static unsigned long long rng = 0x9E3779B97F4A7C15ull;
static unsigned next(unsigned n) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (unsigned)(rng % n); }
int main(void) {
  CUdevice d; CUcontext P, O; CUdeviceptr base;
  C(cuInit(0)); C(cuDeviceGet(&d, 0)); C(cuDevicePrimaryCtxRetain(&P, d)); C(cuCtxSetCurrent(P));
  C(cuMemAlloc(&base, 64u << 20));
  C(cuCtxCreate(&O, NULL, 0, d)); C(cuCtxSetCurrent(P));
  int same = 0, differ = 0, same_rep = 0, differ_rep = 0, refused = 0;
  for (int i = 0; i < 64; i++) {
    cuuint64_t cols = 16 + next(4000), rows = 1 + next(2000), pitch = (cols * 4 + 15) / 16 * 16 + 16 * next(4);
    cuuint64_t dims[2] = {cols, rows}, strides[1] = {pitch};
    cuuint32_t box[2] = {4u << next(5), 1u + next(256)}, es[2] = {1, 1};
    CUdeviceptr at = base + 256 * next(1000);
    CUtensorMap a, b;
    memset(&a, 0, sizeof a); memset(&b, 0, sizeof b);
    C(cuCtxSetCurrent(P));
    CUresult ra = cuTensorMapEncodeTiled(&a, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)at, dims, strides, box, es,
                                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    C(cuCtxSetCurrent(O));
    CUresult rb = cuTensorMapEncodeTiled(&b, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)at, dims, strides, box, es,
                                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (ra || rb) { refused++; printf("case %d: P %d, O %d\n", i, ra, rb); continue; }
    memcmp(&a, &b, sizeof a) ? differ++ : same++;
    CUdeviceptr to = base + 256 * next(1000);
    C(cuCtxSetCurrent(P)); C(cuTensorMapReplaceAddress(&a, (void *)to));
    C(cuCtxSetCurrent(O)); C(cuTensorMapReplaceAddress(&b, (void *)to));
    memcmp(&a, &b, sizeof a) ? differ_rep++ : same_rep++;
  }
  CUcontext cur = NULL; cuCtxGetCurrent(&cur);
  printf("encode with P current vs O current: %d identical, %d differ, %d refused\n", same, differ, refused);
  printf("replace-address with P vs O current: %d identical, %d differ\n", same_rep, differ_rep);
  printf("current at the end: %s\n", cur == O ? "O" : cur == P ? "P" : "other");
  return differ || differ_rep;
}
