// <gclaunch/tmap_table.cuh>: the kernel side of gclaunch's tensor-map tables.
// Header-only CUDA C++ over <gclaunch/tma.cuh> (the map type gcl_tmap, the fences, TMA loads and
// stores), sm_90 or later; NVRTC gets both from the compile calls, nvcc from -I<prefix>/include.
//
// Two ways to give a kernel more TMA descriptors than the 240 its parameter holds (the choice,
// from the H200 study, is in docs/tensormaps.md):
//
// 1. A TABLE in global memory (gcl_tensormap_table on the host: K maps, 128 bytes each, map i at
//    table + i). The host wrote them through another proxy (a copy), so before the TMA unit reads
//    map i the kernel fences it once (per block, or per thread that issues with it):
//      const gcl_tmap *m = gcl_tmap_table_acquire(table, i);   // fence.proxy.tensormap acquire
//      ... cp.async.bulk.tensor ... [m, {x, y}] ...
//    gcl_tmap_table_acquire_all(table, k) fences all k maps cooperatively with the block's
//    threads and ends with __syncthreads() (the study's G placement: cheap for small k, a prologue
//    that grows with k). gcl_tmap_prefetch(m) is prefetch.tensormap (the study measured no gain;
//    harmless).
//
// 2. DEVICE-BUILT descriptors (sm_90a / sm_100a and other arch-specific targets only:
//    tensormap.replace): one TEMPLATE per shape (any map of that shape, e.g. a grid-constant
//    tensormap parameter encoded by gclaunch) and the tensors' addresses in global memory. Per
//    tile, the kernel patches the address into a copy of the template in shared memory and
//    publishes it to a 128-byte slot of the block in global memory:
//      __shared__ gcl_tmap staged;  staged = tmpl;               // once per shape
//      gcl_tmap_make(&staged, addrs[i], &slots[my_slot]);        // replace, copy, release, acquire
//    then loads through &slots[my_slot]. A slot may be re-made only once no TMA operation in
//    flight still reads it (e.g. after the mbarrier of the load that used it completed).
//
// Neither is needed up to 240 maps: a `const __grid_constant__` tensormap[K] parameter is read
// through the constant bank and needs no fence (gcl_args_set_tensormaps fills it).
#ifndef GCLAUNCH_TMAP_TABLE_CUH
#define GCLAUNCH_TMAP_TABLE_CUH

#include <gclaunch/tma.cuh>

// True on the arch-specific targets that have tensormap.replace (sm_90a, sm_100a, ...).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(__CUDA_ARCH_FEAT_SM100_ALL) ||                  \
    defined(__CUDA_ARCH_FEAT_SM101_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL) ||                 \
    defined(__CUDA_ARCH_FEAT_SM110_ALL) || defined(__CUDA_ARCH_FEAT_SM120_ALL) ||                 \
    defined(__CUDA_ARCH_SPECIFIC__) || defined(__CUDA_ARCH_FAMILY_SPECIFIC__)
#define GCL_TMAP_HAS_REPLACE 1
#else
#define GCL_TMAP_HAS_REPLACE 0
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

// Map i of a table uploaded by gcl_tensormap_table_upload, fenced: ready for cp.async.bulk.tensor.
__device__ __forceinline__ const gcl_tmap *gcl_tmap_table_acquire(const gcl_tmap *table,
                                                                  unsigned long long i) {
  const gcl_tmap *m = table + i;
  gcl_tmap_acquire(m);
  return m;
}

// Fences maps 0 ... k-1 with all threads of the block, then __syncthreads(): every thread of the
// block may then use any of them. Call from every thread of the block.
__device__ __forceinline__ void gcl_tmap_table_acquire_all(const gcl_tmap *table,
                                                          unsigned long long k) {
  for (unsigned long long i = threadIdx.x + (unsigned long long)blockDim.x *
                                                (threadIdx.y + (unsigned long long)blockDim.y * threadIdx.z);
       i < k; i += (unsigned long long)blockDim.x * blockDim.y * blockDim.z)
    gcl_tmap_acquire(table + i);
  __syncthreads();
}

#if GCL_TMAP_HAS_REPLACE
// Device-built descriptor: staged (shared memory, a copy of the template) gets global address
// addr (16-byte aligned, 32 with 32-byte interleave), is copied to slot (global memory, 128-byte
// aligned), released to the tensormap proxy and acquired for this thread's use. One thread.
__device__ __forceinline__ void gcl_tmap_make(gcl_tmap *staged, unsigned long long addr,
                                              gcl_tmap *slot) {
  unsigned s = (unsigned)__cvta_generic_to_shared(staged);
  asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(s),
               "l"(addr)
               : "memory");
  const uint4 *from = reinterpret_cast<const uint4 *>(staged);
  uint4 *to = reinterpret_cast<uint4 *>(slot);
#pragma unroll
  for (int w = 0; w < 8; w++) to[w] = from[w];
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
  gcl_tmap_acquire(slot);
}
#endif

#endif // __CUDA_ARCH__ >= 900
#endif // GCLAUNCH_TMAP_TABLE_CUH
