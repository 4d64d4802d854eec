// Test kernels for gcl_tensormap_table and <gclaunch/tmap_table.cuh> (tests/gpu/
// test_tmap_table.c): block b reads (map index, column, row) from work[3b .. 3b+2], TMA-loads one
// 16 x 16 f32 box through that descriptor (picked by run-time index among K) into shared memory
// and copies it to out + 256 b.
//   tmap_table_gather:  descriptor work[3b] of a table in global memory (gcl_tmap_table_acquire);
//   tmap_device_gather: descriptor made on the device (gcl_tmap_make) from a template and
//                       addrs[work[3b]], into slot b of slots (arch-specific targets only).
// sm_90 or later; the column x 4 bytes must be a multiple of 16.
#include <gclaunch/tmap_table.cuh>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void gather_box(const gcl_tmap *map, const int *w, float *out) {
  __shared__ __align__(128) float tile[256];
  __shared__ __align__(8) unsigned long long bar;
  unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned st = (unsigned)__cvta_generic_to_shared(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(1024)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(st),
        "l"(map), "r"(w[1]), "r"(w[2]), "r"(sbar)
        : "memory");
  }
  __syncthreads();
  asm volatile(
      "{\n .reg .pred p;\n wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
      " @!p bra wait_%=;\n}" ::"r"(sbar)
      : "memory");
  for (int i = threadIdx.x; i < 256; i += blockDim.x) out[256 * blockIdx.x + i] = tile[i];
}
#endif

extern "C" __global__ void tmap_table_gather(const gcl_tmap *table, const int *work, float *out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const int *w = work + 3 * blockIdx.x;
  const gcl_tmap *map = table + w[0];
  if (threadIdx.x == 0) gcl_tmap_table_acquire(table, (unsigned)w[0]); // the issuing thread
  gather_box(map, w, out);
#endif
}

extern "C" __global__ void tmap_device_gather(const __grid_constant__ gcl_tmap tmpl,
                                              const unsigned long long *addrs, gcl_tmap *slots,
                                              const int *work, float *out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && GCL_TMAP_HAS_REPLACE
  __shared__ gcl_tmap staged;
  const int *w = work + 3 * blockIdx.x;
  gcl_tmap *slot = slots + blockIdx.x;
  if (threadIdx.x == 0) {
    staged = tmpl;
    gcl_tmap_make(&staged, addrs[w[0]], slot);
  }
  gather_box(slot, w, out);
#endif
}
