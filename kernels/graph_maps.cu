// The struct placement of tests/gpu/test_graph_repoint.c: tma_gather.cu's gather (block b reads
// (map index, column, row) from work[3b .. 3b+2], TMA-loads one 16 x 16 f32 box through that map
// into shared memory, copies it to out + 256 b), with the maps, the work list and the output in
// ONE grid-constant struct. Signature
// "grid_constant struct{tensormap[16] maps, const i32* work, f32* out} g". sm_90 or later.

struct alignas(128) TMap { unsigned long long w[16]; };
struct Globals {
  TMap maps[16];
  const int *work;
  float *out;
};

extern "C" __global__ void graph_gather_struct(const __grid_constant__ Globals g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ __align__(128) float tile[256];
  __shared__ __align__(8) unsigned long long bar;
  const int *w = g.work + 3 * blockIdx.x;
  unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned st = (unsigned)__cvta_generic_to_shared(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(1024)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(st),
        "l"((unsigned long long)&g.maps[w[0]]), "r"(w[1]), "r"(w[2]), "r"(sbar)
        : "memory");
  }
  asm volatile(
      "{\n .reg .pred p;\n wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
      " @!p bra wait_%=;\n}" ::"r"(sbar)
      : "memory");
  for (int i = threadIdx.x; i < 256; i += blockDim.x) g.out[256 * blockIdx.x + i] = tile[i];
#endif
}
