// <gclaunch/tma.cuh>: the kernel side of gclaunch's tensor maps (TMA descriptors). Header-only
// CUDA C++, no includes: the same text compiles with nvcc (add -I<prefix>/include, or the
// checkout's include/) and with NVRTC, to which gcl_module_compile, gcl_nvrtc_compile and Python's
// Context.compile hand it themselves (no include path needed). The TMA functions are sm_90 or
// later; the type compiles everywhere. docs/tensormaps.md has a complete kernel and host program.
//
// The map type. The host fills 128 bytes per map (gcl_args_set_tensormaps into a `tensormap`
// leaf, gcl_tensormap_table for a table); on the device a map is
//   - gcl_tmap (below): an aligned 128-byte struct, for nvcc and NVRTC alike. NVRTC has no
//     <cuda.h>, so kernels compiled at run time use this type;
//   - or, with nvcc, CUtensorMap from <cuda.h> (the same 128 bytes, alignas(128) in CUDA 13).
// Every function here takes the map's generic address (`const void *`), so either type works.
// Where a kernel gets its maps, and the fence each needs before the TMA unit reads them:
//   a parameter          `const __grid_constant__ gcl_tmap m` (`grid_constant tensormap m`),
//                        an array in a struct `struct P { gcl_tmap maps[16]; unsigned n; }` taken
//                        as `const __grid_constant__ P p` (`grid_constant struct{tensormap[16]
//                        maps, u32 n} p`): read from the constant bank, no fence. Take the address
//                        of the parameter itself (&p.maps[i]); a copy in registers or local memory
//                        is no map.
//   a table in global    `const gcl_tmap *table` (gcl_tensormap_table_address): written by a copy,
//   memory               so gcl_tmap_acquire(&table[i]) once before the first use
//                        (<gclaunch/tmap_table.cuh> has the table helpers).
// A 2D load of a box into shared memory (one thread issues; every thread waits):
//   __shared__ alignas(128) float tile[BOX_H][BOX_W];   // 128-byte aligned (1024 with swizzle)
//   __shared__ alignas(8) unsigned long long bar;
//   if (threadIdx.x == 0) { gcl_mbar_init(&bar, 1); gcl_fence_mbar_init(); }
//   __syncthreads();
//   if (threadIdx.x == 0) {
//     gcl_mbar_expect_tx(&bar, sizeof tile);        // bytes the copy will deliver: the whole box
//     gcl_tma_load_2d(tile, &p.maps[i], x, y, &bar); // x: innermost coordinate (elements)
//   }
//   gcl_mbar_wait(&bar, 0);                         // phase parity: 0, 1, 0, ... per reuse
// A 2D store of a box from shared memory:
//   ... threads write tile ...;  gcl_fence_proxy_async();  __syncthreads();
//   if (threadIdx.x == 0) { gcl_tma_store_2d(&p.maps[j], x, y, tile); gcl_tma_store_commit();
//                           gcl_tma_store_wait(); }  // before the tile is written again or the
//                                                    // kernel's results are read
// The innermost coordinate x times the element size must be a multiple of 16 bytes, or the load
// ends the kernel with an illegal instruction (docs/facts.md, "TMA on the device"); out-of-bounds
// elements of a box load as zeros (or NaN with the map's oob fill) and are not stored.
// Every rank 1 ... 5 has a load (gcl_tma_load_1d ... _5d) and a store (gcl_tma_store_1d ... _5d)
// of a tiled map, coordinates innermost first (x, y, z, w, v), in elements.
#ifndef GCLAUNCH_TMA_CUH
#define GCLAUNCH_TMA_CUH

// One descriptor: 128 opaque bytes, 128-byte aligned (layout-compatible with CUtensorMap).
struct alignas(128) gcl_tmap {
  unsigned long long word[16];
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

// The shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned gcl_smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

// Acquire fence on a map in global memory: the TMA unit's view of it is refreshed with what the
// generic proxy (a host copy, a device store) wrote. Once before the first use of a map written
// since the kernel (or, for a device-built one, since the writer's release) began. Maps in
// parameters need none.
__device__ __forceinline__ void gcl_tmap_acquire(const void *map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory");
}

// prefetch.tensormap: starts fetching the descriptor (a parameter's or global memory's address).
__device__ __forceinline__ void gcl_tmap_prefetch(const void *map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// An mbarrier in shared memory (8 bytes, 8-aligned) expecting `count` arrivals per phase.
__device__ __forceinline__ void gcl_mbar_init(unsigned long long *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(gcl_smem_addr(bar)), "r"(count)
               : "memory");
}

// Makes initialised mbarriers visible to the async proxy (the TMA unit); after gcl_mbar_init,
// before any thread uses the barrier (then __syncthreads()).
__device__ __forceinline__ void gcl_fence_mbar_init(void) {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// This thread's arrival, announcing `bytes` of transfer the phase must also see complete.
__device__ __forceinline__ void gcl_mbar_expect_tx(unsigned long long *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(gcl_smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// Waits until the phase of `parity` (0 for the first use, then 1, 0, ...) has completed.
__device__ __forceinline__ void gcl_mbar_wait(unsigned long long *bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(gcl_smem_addr(bar)), "r"(parity)
                 : "memory");
}

// TMA load of the box at (x, y) (elements; x innermost) through map into dst (shared memory),
// completing `bar`'s transaction bytes (announce them with gcl_mbar_expect_tx).
__device__ __forceinline__ void gcl_tma_load_2d(void *dst, const void *map, int x, int y,
                                                unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];" ::"r"(gcl_smem_addr(dst)),
               "l"(map), "r"(x), "r"(y), "r"(gcl_smem_addr(bar))
               : "memory");
}

// The same for a rank-1 map (x) and a rank-3 map (x innermost, then y, z).
__device__ __forceinline__ void gcl_tma_load_1d(void *dst, const void *map, int x,
                                                unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2}], [%3];" ::"r"(gcl_smem_addr(dst)),
               "l"(map), "r"(x), "r"(gcl_smem_addr(bar))
               : "memory");
}

__device__ __forceinline__ void gcl_tma_load_3d(void *dst, const void *map, int x, int y, int z,
                                                unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(gcl_smem_addr(dst)),
               "l"(map), "r"(x), "r"(y), "r"(z), "r"(gcl_smem_addr(bar))
               : "memory");
}

// Rank 4 (x innermost, then y, z, w) and rank 5 (then v). The box's bytes (the product of its
// sizes x the element size) are what gcl_mbar_expect_tx announces, whatever the rank.
__device__ __forceinline__ void gcl_tma_load_4d(void *dst, const void *map, int x, int y, int z,
                                                int w, unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(gcl_smem_addr(dst)),
               "l"(map), "r"(x), "r"(y), "r"(z), "r"(w), "r"(gcl_smem_addr(bar))
               : "memory");
}

__device__ __forceinline__ void gcl_tma_load_5d(void *dst, const void *map, int x, int y, int z,
                                                int w, int v, unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(gcl_smem_addr(dst)),
               "l"(map), "r"(x), "r"(y), "r"(z), "r"(w), "r"(v), "r"(gcl_smem_addr(bar))
               : "memory");
}

// Makes this thread's generic-proxy writes to shared memory visible to the async proxy: every
// thread that wrote a tile calls it before the barrier that precedes the TMA store.
__device__ __forceinline__ void gcl_fence_proxy_async(void) {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// TMA store of src (shared memory) to the box at (x, y) through map; one thread. Elements outside
// the tensor are not written; a row whose byte length is no multiple of 16 gets the bytes after it
// up to the next 16-byte boundary overwritten (set options.store = 1 on the host: refused there).
__device__ __forceinline__ void gcl_tma_store_2d(const void *map, int x, int y, const void *src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::
                   "l"(map),
               "r"(x), "r"(y), "r"(gcl_smem_addr(src))
               : "memory");
}

// The same for rank 1 (x), 3 (x, y, z), 4 (x, y, z, w) and 5 (x, y, z, w, v), x innermost.
__device__ __forceinline__ void gcl_tma_store_1d(const void *map, int x, const void *src) {
  asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%1}], [%2];" ::
                   "l"(map),
               "r"(x), "r"(gcl_smem_addr(src))
               : "memory");
}

__device__ __forceinline__ void gcl_tma_store_3d(const void *map, int x, int y, int z,
                                                 const void *src) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];" ::
                   "l"(map),
               "r"(x), "r"(y), "r"(z), "r"(gcl_smem_addr(src))
               : "memory");
}

__device__ __forceinline__ void gcl_tma_store_4d(const void *map, int x, int y, int z, int w,
                                                 const void *src) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group"
               " [%0, {%1, %2, %3, %4}], [%5];" ::"l"(map),
               "r"(x), "r"(y), "r"(z), "r"(w), "r"(gcl_smem_addr(src))
               : "memory");
}

__device__ __forceinline__ void gcl_tma_store_5d(const void *map, int x, int y, int z, int w,
                                                 int v, const void *src) {
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group"
               " [%0, {%1, %2, %3, %4, %5}], [%6];" ::"l"(map),
               "r"(x), "r"(y), "r"(z), "r"(w), "r"(v), "r"(gcl_smem_addr(src))
               : "memory");
}

// Closes the bulk group of the stores issued so far by this thread.
__device__ __forceinline__ void gcl_tma_store_commit(void) {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Waits until every committed store of this thread has finished writing global memory.
__device__ __forceinline__ void gcl_tma_store_wait(void) {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

#endif // __CUDA_ARCH__ >= 900
#endif // GCLAUNCH_TMA_CUH
