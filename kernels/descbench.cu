// Where should TMA descriptors live? The same persistent TMA copy with its K+1 descriptors
//   P  - in one by-value grid-constant parameter (struct of K+1 maps, run-time index),
//   G  - in global memory, fenced (fence.proxy.tensormap::generic.acquire) in each block first,
//   GP - in global memory, fenced, and prefetched (prefetch.tensormap) before use.
// Descriptors 0 ... K-1 describe K source tensors of rows x cols elements; descriptor K describes
// one destination of K*rows x cols: item i copies tile (i / K) of source (i % K) to the same
// tile of row block (i % K) of the destination. Thread 0 of each block drives an S-stage ring of
// tiles in dynamic shared memory (TMA load completes on an mbarrier, TMA store drains as a bulk
// group); the other 31 threads only help fence. bench/descriptors.c is the host side.
//
// Everything about the ring is a run-time value of Shape, so one build serves the host's sweep:
// stages S (up to GCL_DESC_STAGES_MAX), the grid (blocks per SM, the host's), and the lag L: a
// stage is refilled L items after its store was issued (wait_group.read L lets the L newest
// stores keep reading while the load goes out), so S - L loads and up to L + 1 stores are in
// flight. L = 0 refills the stage just stored (waits for that store: load and store alternate).

struct alignas(128) TM { unsigned long long o[16]; };
template <int N> struct Maps { TM m[N]; };

#define GCL_DESC_STAGES_MAX 16
#define GCL_DESC_LAG_MAX 3

// boxes: tiles per stage (0 means 1). A stage of B boxes is one mbarrier transaction of B tiles
// (B loads complete on one barrier, B stores form one bulk group), so the per-stage costs of the
// issuing thread -- the barrier wait, the fence, the commit and the wait_group -- are paid once
// per B boxes. It separates the cost per TMA box from the cost per pipeline step.
struct Shape {  // all in elements / tiles; 40 bytes
  unsigned k, rows, tiles_x, tiles_per_tensor, box_w, box_h, tile_bytes, stages, lag, boxes;
};

__device__ __forceinline__ unsigned smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void bar_init(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void bar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred p;\nW_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra W_%=;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}

__device__ __forceinline__ void load_tile(const void *map, unsigned dst, unsigned bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar) : "memory");
}

__device__ __forceinline__ void store_tile(const void *map, unsigned src, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
               ::"l"(map), "r"(x), "r"(y), "r"(src) : "memory");
}

__device__ __forceinline__ void fence_map(const void *map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory");
}

__device__ __forceinline__ void prefetch_map(const void *map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// All but the `lag` newest bulk groups (stores) have finished reading shared memory. The count is
// an immediate of the instruction, hence the switch.
__device__ __forceinline__ void wait_reads(unsigned lag) {
  switch (lag) {
  case 0: asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); break;
  case 1: asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory"); break;
  case 2: asm volatile("cp.async.bulk.wait_group.read 2;" ::: "memory"); break;
  default: asm volatile("cp.async.bulk.wait_group.read 3;" ::: "memory"); break;
  }
}

// Tile item's coordinates: tile (item / k) of source (item % k).
__device__ __forceinline__ void tile_of(const Shape &s, unsigned item, unsigned &src, int &x,
                                        int &y) {
  unsigned t = item / s.k;
  src = item % s.k;
  x = (t % s.tiles_x) * s.box_w;
  y = (t / s.tiles_x) * s.box_h;
}

// maps(i) gives descriptor i's generic address (parameter space or global memory). Work unit u
// (a stage's content) is items u*B ... u*B+B-1; units go round-robin over the blocks.
template <bool kPrefetch, class Maps_>
__device__ void copy_ring(const Maps_ &maps, const Shape &s) {
  extern __shared__ __align__(1024) unsigned char ring[];
  __shared__ __align__(8) unsigned long long bars[GCL_DESC_STAGES_MAX];
  if (threadIdx.x != 0) return;
  const unsigned base = smem_u32(ring), bar0 = smem_u32(bars);
  for (unsigned j = 0; j < s.stages; j++) bar_init(bar0 + 8 * j);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const unsigned n = s.k * s.tiles_per_tensor, grid = gridDim.x, B = s.boxes ? s.boxes : 1;
  const unsigned units = (n + B - 1) / B, stage_bytes = B * s.tile_bytes;
  const void *dst_map = maps(s.k);
  if (kPrefetch) prefetch_map(dst_map);
  const unsigned lag = s.lag < s.stages ? s.lag : s.stages - 1, ahead = s.stages - lag;
  // Loads unit u into stage j: one barrier, expecting every box of the unit.
  auto load_unit = [&](unsigned u, unsigned j) {
    unsigned first = u * B, count = n - first < B ? n - first : B;
    unsigned bar = bar0 + 8 * j;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                 "r"(count * s.tile_bytes) : "memory");
    for (unsigned b = 0; b < count; b++) {
      unsigned src;
      int x, y;
      tile_of(s, first + b, src, x, y);
      if (kPrefetch) prefetch_map(maps(src));
      load_tile(maps(src), base + j * stage_bytes + b * s.tile_bytes, bar, x, y);
    }
  };
  // Prologue: units 0 ... S-L-1 into stages 0 ... S-L-1.
  for (unsigned j = 0; j < ahead; j++) {
    unsigned u = blockIdx.x + j * grid;
    if (u >= units) break;
    load_unit(u, j);
  }
  unsigned k = 0;
  for (unsigned u = blockIdx.x; u < units; u += grid, k++) {
    unsigned j = k % s.stages;
    bar_wait(bar0 + 8 * j, (k / s.stages) & 1);
    unsigned first = u * B, count = n - first < B ? n - first : B;
    for (unsigned b = 0; b < count; b++) {
      unsigned src;
      int x, y;
      tile_of(s, first + b, src, x, y);
      store_tile(dst_map, base + j * stage_bytes + b * s.tile_bytes, x, y + src * s.rows);
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");  // the unit's stores: one group
    unsigned next = u + ahead * grid, jn = (k + ahead) % s.stages;  // jn == (k - L) % S
    if (next < units) {
      wait_reads(lag);  // the stores of unit k - L (stage jn) have read their tiles out
      load_unit(next, jn);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

template <int N> struct ParamMaps {
  const Maps<N> &m;
  __device__ const void *operator()(unsigned i) const { return &m.m[i]; }
};

struct GlobalMaps {
  const TM *g;
  __device__ const void *operator()(unsigned i) const { return g + i; }
};

#define DESC_PARAM(N)                                                                             \
  extern "C" __global__ void __launch_bounds__(32)                                                \
      desc_param_##N(const __grid_constant__ Maps<N> maps, Shape s) {                             \
    copy_ring<false>(ParamMaps<N>{maps}, s);                                                      \
  }
DESC_PARAM(2)
DESC_PARAM(9)
DESC_PARAM(65)
DESC_PARAM(241)

// All 32 threads fence the k+1 descriptors; then thread 0 runs the ring.
template <bool kPrefetch>
__device__ void global_variant(const TM *g, const Shape &s) {
  for (unsigned i = threadIdx.x; i <= s.k; i += blockDim.x) fence_map(g + i);
  __syncthreads();
  copy_ring<kPrefetch>(GlobalMaps{g}, s);
}

extern "C" __global__ void __launch_bounds__(32) desc_global(const TM *g, Shape s) {
  global_variant<false>(g, s);
}

extern "C" __global__ void __launch_bounds__(32) desc_global_prefetch(const TM *g, Shape s) {
  global_variant<true>(g, s);
}
