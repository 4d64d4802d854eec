// The struct placement of tests/gpu/test_graph_repoint.c: tma_gather.cu's gather (block b reads
// (map index, column, row) from work[3b .. 3b+2], TMA-loads one 16 x 16 f32 box through that map
// into shared memory, copies it to out + 256 b), with the maps, the work list and the output in
// ONE grid-constant struct, written with the kernel-side header <gclaunch/tma.cuh>. Signature
// "grid_constant struct{tensormap[16] maps, const i32* work, f32* out} g". sm_90 or later.
#include <gclaunch/tma.cuh>

struct Globals {
  gcl_tmap maps[16];
  const int *work;
  float *out;
};

extern "C" __global__ void graph_gather_struct(const __grid_constant__ Globals g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ __align__(128) float tile[256];
  __shared__ __align__(8) unsigned long long bar;
  const int *w = g.work + 3 * blockIdx.x;
  if (threadIdx.x == 0) {
    gcl_mbar_init(&bar, 1);
    gcl_fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    gcl_mbar_expect_tx(&bar, sizeof tile);
    gcl_tma_load_2d(tile, &g.maps[w[0]], w[1], w[2], &bar);
  }
  gcl_mbar_wait(&bar, 0);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) g.out[256 * blockIdx.x + i] = tile[i];
#endif
}
