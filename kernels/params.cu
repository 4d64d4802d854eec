// Kernels whose parameter layouts exercise the image readers and `gclaunch inspect`: a tensor
// map (alignas(128) in CUDA 13), arrays of them wrapped in a struct, a 64-aligned map as CUDA 12
// headers declared it, padded and nested structs, and parameter areas past 4352 bytes (the
// cubin then uses EIATTR_KPARAM_INFO_V2).
#include <cuda.h>

struct Maps16 { CUtensorMap m[16]; };
struct alignas(64) Map64 { unsigned long long o[16]; };
struct Padded { char c; double d; short s; };
struct Nested { Padded p; int i[3]; };
struct Big { unsigned char b[8000]; };

extern "C" __global__ void k_one(const __grid_constant__ CUtensorMap m, char c, int *out) {
  if (threadIdx.x == 0) out[0] = c + (int)((const unsigned long long *)&m)[0];
}

extern "C" __global__ void k_maps(const __grid_constant__ Maps16 maps, int idx, float *out) {
  out[threadIdx.x] = (float)((const unsigned long long *)&maps.m[idx])[1];
}

extern "C" __global__ void k_map64(const __grid_constant__ Map64 m, int *out) {
  out[0] = (int)m.o[threadIdx.x % 16];
}

extern "C" __global__ void __launch_bounds__(256) k_structs(Padded a, Nested b, unsigned short h,
                                                            double *out) {
  out[0] = a.d + a.c + a.s + b.p.d + b.i[2] + h;
}

extern "C" __global__ void k_big(const __grid_constant__ Big big, int n, unsigned char *out) {
  __shared__ unsigned char tile[1024];
  tile[threadIdx.x % 1024] = big.b[threadIdx.x % 8000];
  __syncthreads();
  if (threadIdx.x < (unsigned)n) out[threadIdx.x] = tile[(threadIdx.x + 1) % 1024];
}

extern "C" __global__ void k_none() {}
