// The complete kernel of docs/tensormaps.md, written from <gclaunch/tma.cuh> alone: each block
// TMA-loads one 16 x 32 f32 tile of `src` through p.maps[0], adds 1 to every element and
// TMA-stores the tile to `dst` through p.maps[1]. Both maps come from one grid-constant struct:
//   signature "grid_constant struct{tensormap[2] maps, u32 tiles_x} p"
// Block b handles tile (b % tiles_x, b / tiles_x). The same text compiles with nvcc (kernels/
// meson.build) and with NVRTC (tests/gpu/test_tma_header.c compiles it at run time).
#include <gclaunch/tma.cuh>

#define TILE_W 32 // elements along the innermost dimension: 128 bytes of f32
#define TILE_H 16

struct tile_params {
  gcl_tmap maps[2];  // [0]: the source, [1]: the destination (encoded with store = 1)
  unsigned tiles_x;  // tiles per row of the tensor
};

extern "C" __global__ void tma_tile_add1(const __grid_constant__ tile_params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ alignas(128) float tile[TILE_H][TILE_W];
  __shared__ alignas(8) unsigned long long bar;
  int x = (int)(blockIdx.x % p.tiles_x) * TILE_W, y = (int)(blockIdx.x / p.tiles_x) * TILE_H;
  if (threadIdx.x == 0) {
    gcl_tmap_prefetch(&p.maps[0]);
    gcl_mbar_init(&bar, 1);
    gcl_fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    gcl_mbar_expect_tx(&bar, sizeof tile);
    gcl_tma_load_2d(tile, &p.maps[0], x, y, &bar);
  }
  gcl_mbar_wait(&bar, 0);
  for (unsigned i = threadIdx.x; i < TILE_H * TILE_W; i += blockDim.x)
    tile[i / TILE_W][i % TILE_W] += 1.0f;
  gcl_fence_proxy_async(); // this thread's writes to tile, visible to the TMA store
  __syncthreads();
  if (threadIdx.x == 0) {
    gcl_tma_store_2d(&p.maps[1], x, y, tile);
    gcl_tma_store_commit();
    gcl_tma_store_wait();
  }
#endif
}
