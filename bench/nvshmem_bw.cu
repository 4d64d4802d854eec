// bench_nvshmem_bw's device code (bench/nvshmem_bw.c). Built on the GPU runner by
// bench/nvshmem_bw.sh, device-linked with the NVSHMEM wheel's libnvshmem_device.a:
//   nvcc -arch=sm_90 -rdc=true -dc -I$NV/include nvshmem_bw.cu -o bw.o
//   nvcc -arch=sm_90 -dlink -cubin bw.o $NV/lib/libnvshmem_device.a -o bw.cubin
// The module is device-linked with NVSHMEM, so it is attached before any launch; bw_tma itself
// calls no NVSHMEM function (the maps carry the peers' addresses).
//
// Bytes: every PE holds one symmetric source of `bytes` bytes; a PE moves each of its npeers
// peers' copies (PE list index i) to region i of a local destination (i * bytes ...).
#include <nvshmem.h>
#include <nvshmemx.h>

// bw_tma: the example megakernel's gather (examples/nvshmem_gather.c, kernels/tma_gather.cu)
// scaled up: ONE grid-constant tensormap[16], map i over peer i's copy viewed as u32
// [bytes / 1024][256], picked by run-time index (tile / tiles_per_peer). A tile is one 256 x 8
// box (8 KiB); each block's thread 0 keeps STAGES boxes in flight (TMA load into shared memory,
// then a bulk copy shared -> global into the destination). Signature
// "grid_constant tensormap[16] maps, u8* dst, i32 npeers, i32 tiles_per_peer".
#define STAGES 4
#define TILE_ROWS 8
#define TILE_BYTES (TILE_ROWS * 1024)

struct alignas(128) TMap { unsigned long long w[16]; };
struct Maps { TMap m[16]; };

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ static void tma_issue(const Maps &maps, unsigned st, unsigned bar, int tile, int tpp) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(TILE_BYTES)
               : "memory");
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(st),
      "l"((unsigned long long)&maps.m[tile / tpp]), "r"(0), "r"((tile % tpp) * TILE_ROWS), "r"(bar)
      : "memory");
}

__device__ static void tma_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred p;\n wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra wait_%=;\n}" ::"r"(bar), "r"(parity)
      : "memory");
}
#endif

extern "C" __global__ void bw_tma(const __grid_constant__ Maps maps, unsigned char *dst,
                                  int npeers, int tiles_per_peer) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ __align__(128) unsigned char tile[STAGES][TILE_BYTES];
  __shared__ __align__(8) unsigned long long bars[STAGES];
  if (threadIdx.x != 0) return;
  int total = npeers * tiles_per_peer;
  unsigned st[STAGES], bar[STAGES];
  for (int s = 0; s < STAGES; s++) {
    st[s] = (unsigned)__cvta_generic_to_shared(tile[s]);
    bar[s] = (unsigned)__cvta_generic_to_shared(&bars[s]);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar[s]));
  }
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  for (int s = 0; s < STAGES; s++) {
    int t = blockIdx.x + s * gridDim.x;
    if (t < total) tma_issue(maps, st[s], bar[s], t, tiles_per_peer);
  }
  for (int k = 0;; k++) {
    int t = blockIdx.x + k * gridDim.x, s = k % STAGES;
    if (t >= total) break;
    tma_wait(bar[s], (unsigned)(k / STAGES) & 1u);
    unsigned char *to = dst + (size_t)(t / tiles_per_peer) * ((size_t)tiles_per_peer * TILE_BYTES) +
                        (size_t)(t % tiles_per_peer) * TILE_BYTES;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(to), "r"(st[s]),
                 "r"(TILE_BYTES)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); /* stage s free again */
    int next = t + STAGES * gridDim.x;
    if (next < total) tma_issue(maps, st[s], bar[s], next, tiles_per_peer);
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

// bw_get: chunk c of the grid-stride loop is bytes [off, off + chunk) of peer i's copy of `src`
// (symmetric), fetched by the whole block with nvshmemx_getmem_block into dst + i * bytes + off.
// Signature "u8* dst, const u8* src, u64 n, const i32* peers, i32 npeers, u64 chunk".
extern "C" __global__ void bw_get(unsigned char *dst, const unsigned char *src, size_t bytes,
                                  const int *peers, int npeers, size_t chunk) {
  size_t per = bytes / chunk, total = per * (size_t)npeers;
  for (size_t c = blockIdx.x; c < total; c += gridDim.x) {
    size_t i = c / per, off = (c % per) * chunk;
    nvshmemx_getmem_block(dst + i * bytes + off, src + off, chunk, peers[i]);
  }
}

// bw_put: this PE's `src` (bytes) into region `me` of `dst` (symmetric, npes * bytes) on every
// listed peer, with nvshmemx_putmem_block per chunk; then nvshmem_quiet, so the puts are complete
// when the kernel is. Signature
// "u8* dst, const u8* src, u64 n, const i32* peers, i32 npeers, i32 me, u64 chunk".
extern "C" __global__ void bw_put(unsigned char *dst, const unsigned char *src, size_t bytes,
                                  const int *peers, int npeers, int me, size_t chunk) {
  size_t per = bytes / chunk, total = per * (size_t)npeers;
  for (size_t c = blockIdx.x; c < total; c += gridDim.x) {
    size_t i = c / per, off = (c % per) * chunk;
    nvshmemx_putmem_block(dst + (size_t)me * bytes + off, src + off, chunk, peers[i]);
  }
  __syncthreads();
  if (threadIdx.x == 0) nvshmem_quiet();
}

// launch_probe: the attached kernel of the launch-cost check (gcl_launch against
// cuLaunchKernelEx of this function). It references NVSHMEM but does nothing unless idx < 0.
// Signature "i32* out, i32 idx".
extern "C" __global__ void launch_probe(int *out, int idx) {
  if (idx < 0 && threadIdx.x == 0) out[0] = nvshmem_my_pe();
}
