// A user's TMA gather (a reported ILLEGAL_INSTRUCTION) as a test kernel: block b reads
// (map index, column, row) from work[3b .. 3b+2] and TMA-loads one 16 x 16 f32 box from that map
// (picked by run-time index from ONE grid-constant tensormap[16] parameter) into shared memory,
// then copies it to out + 256 b. The column is the innermost TMA coordinate: column x 4 bytes must
// be a multiple of 16, or the load ends the kernel with CUDA_ERROR_ILLEGAL_INSTRUCTION (sticky;
// docs/facts.md "TMA on the device"). sm_90 or later. Signature
// "grid_constant tensormap[16] maps, const i32* work, f32* out".

struct alignas(128) TMap { unsigned long long w[16]; };
struct Maps { TMap m[16]; };

extern "C" __global__ void tma_gather(const __grid_constant__ Maps maps, const int *work, float *out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ __align__(128) float tile[256];
  __shared__ __align__(8) unsigned long long bar;
  const int *w = work + 3 * blockIdx.x;
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
        "l"((unsigned long long)&maps.m[w[0]]), "r"(w[1]), "r"(w[2]), "r"(sbar)
        : "memory");
  }
  asm volatile(
      "{\n .reg .pred p;\n wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
      " @!p bra wait_%=;\n}" ::"r"(sbar)
      : "memory");
  for (int i = threadIdx.x; i < 256; i += blockDim.x) out[256 * blockIdx.x + i] = tile[i];
#endif
}
