// Where should a megakernel's TMA descriptors live? The same persistent TMA copy with its K+1
// descriptors (K sources, 1 destination)
//   P  - in one by-value grid-constant parameter (struct of K+1 maps, run-time index),
//   S  - in K+1 separate grid-constant parameters, picked by a switch (desc_sep_N),
//   G  - in global memory, fenced (fence.proxy.tensormap::generic.acquire) in each block first,
//   GP - in global memory, fenced, and prefetched (prefetch.tensormap) before use,
//   C  - in a __constant__ array of the module (desc_const): the host encodes them and uploads
//        them to the symbol (cuLibraryGetGlobal) before the launch; read through the constant
//        bank like P, but not a kernel parameter (Kokkos went back to it when grid-constant
//        parameters cost registers), up to GCL_DESC_CONST_MAX maps (64 KiB of constant memory),
//   D  - made on the device (desc_device, sm_90a only): one template per shape in a grid-constant
//        parameter, the address of each tile's tensor patched into a copy in shared memory with
//        tensormap.replace, published to a global slot of the block and fenced (release, then
//        acquire), as CUTLASS's grouped GEMMs make theirs.
// (H, the host re-encoding a global table before each launch, runs desc_global.)
// Descriptors 0 ... K-1 describe K source tensors of rows x cols elements; descriptor K describes
// one destination of K*rows x cols: tile t of source i goes to the same tile of row block i of
// the destination. Thread 0 of each block drives an S-stage ring of tiles in dynamic shared
// memory (TMA load completes on an mbarrier, TMA store drains as a bulk group); the other 31
// threads only help fence. bench/descriptors.c is the host side.
//
// Everything about the ring is a run-time value of Shape, so one build serves the host's sweep:
// stages S (up to GCL_DESC_STAGES_MAX), the grid (blocks per SM, the host's), and the lag L: a
// stage is refilled L items after its store was issued (wait_group.read L lets the L newest
// stores keep reading while the load goes out), so S - L loads and up to L + 1 stores are in
// flight. L = 0 refills the stage just stored (waits for that store: load and store alternate).

struct alignas(128) TM { unsigned long long o[16]; };
template <int N> struct Maps { TM m[N]; };

#define GCL_DESC_STAGES_MAX 16
#define GCL_DESC_BOXES_MAX 4
#define GCL_DESC_SLOTS (1 + GCL_DESC_STAGES_MAX * GCL_DESC_BOXES_MAX) // D: global slots per block

// boxes: tiles per stage (0 means 1). A stage of B boxes is one mbarrier transaction of B tiles
// (B loads complete on one barrier, B stores form one bulk group), so the per-stage costs of the
// issuing thread -- the barrier wait, the fence, the commit and the wait_group -- are paid once
// per B boxes. It separates the cost per TMA box from the cost per pipeline step.
// order: which tile item i is. 0: interleaved (tile i / K of source i % K: consecutive items
// change tensor), 1: tensor by tensor (source i / tiles_per_tensor), 2: shuffled (item i is
// item perm(i) of order 1, perm a pseudo-random permutation of the n items on perm_bits bits).
struct Shape {  // all in elements / tiles; 48 bytes
  unsigned k, rows, tiles_x, tiles_per_tensor, box_w, box_h, tile_bytes, stages, lag, boxes;
  unsigned order, perm_bits;
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

// A 4-round Feistel permutation of [0, 2^(2 half)), the round function a multiplicative hash.
__device__ __forceinline__ unsigned feistel(unsigned x, unsigned half) {
  const unsigned mask = (1u << half) - 1;
  unsigned l = x >> half, r = x & mask;
  for (unsigned round = 0; round < 4; round++) {
    unsigned f = (r + round) * 0x9E3779B1u;
    f ^= f >> 15;
    f *= 0x2C1B3C6Du;
    f ^= f >> 13;
    unsigned next = (l ^ f) & mask;
    l = r;
    r = next;
  }
  return (l << half) | r;
}

// A permutation of [0, n) for n <= 2^bits (bits even): the Feistel permutation walked until it
// lands inside (cycle walking keeps it a bijection; fewer than 4 steps on average).
__device__ __forceinline__ unsigned shuffle(unsigned i, unsigned n, unsigned bits) {
  do i = feistel(i, bits / 2); while (i >= n);
  return i;
}

// Tile item's coordinates: source src, element offsets x, y in it (see Shape's order).
__device__ __forceinline__ void tile_of(const Shape &s, unsigned item, unsigned &src, int &x,
                                        int &y) {
  unsigned t;
  if (s.order == 0) {
    t = item / s.k;
    src = item % s.k;
  } else {
    if (s.order == 2) item = shuffle(item, s.k * s.tiles_per_tensor, s.perm_bits);
    src = item / s.tiles_per_tensor;
    t = item % s.tiles_per_tensor;
  }
  x = (t % s.tiles_x) * s.box_w;
  y = (t / s.tiles_x) * s.box_h;
}

// maps.load(src, slot) gives the descriptor for a load from source src into ring slot `slot`
// (stage * B + box), maps.store() the destination's: generic addresses in parameter space or
// global memory. Work unit u (a stage's content) is items u*B ... u*B+B-1; units go round-robin
// over the blocks.
template <bool kPrefetch, class Maps_>
__device__ void copy_ring(Maps_ maps, const Shape &s) {
  extern __shared__ __align__(1024) unsigned char ring[];
  __shared__ __align__(8) unsigned long long bars[GCL_DESC_STAGES_MAX];
  if (threadIdx.x != 0) return;
  const unsigned base = smem_u32(ring), bar0 = smem_u32(bars);
  for (unsigned j = 0; j < s.stages; j++) bar_init(bar0 + 8 * j);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const unsigned n = s.k * s.tiles_per_tensor, grid = gridDim.x, B = s.boxes ? s.boxes : 1;
  const unsigned units = (n + B - 1) / B, stage_bytes = B * s.tile_bytes;
  const void *dst_map = maps.store();
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
      const void *map = maps.load(src, j * B + b);
      if (kPrefetch) prefetch_map(map);
      load_tile(map, base + j * stage_bytes + b * s.tile_bytes, bar, x, y);
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

// P, S, G: descriptor i at at(i), the destination at at(k).
template <class At> struct IndexMaps {
  At at;
  unsigned k;
  __device__ const void *load(unsigned src, unsigned) const { return at(src); }
  __device__ const void *store() const { return at(k); }
};
template <class At> __device__ IndexMaps<At> index_maps(At at, unsigned k) { return {at, k}; }

// --- P: one grid-constant tensormap[N], indexed at run time ------------------------------------

#define DESC_PARAM(N)                                                                             \
  extern "C" __global__ void __launch_bounds__(32)                                                \
      desc_param_##N(const __grid_constant__ Maps<N> maps, Shape s) {                             \
    copy_ring<false>(index_maps([&](unsigned i) -> const void * { return &maps.m[i]; }, s.k), s); \
  }
DESC_PARAM(2)
DESC_PARAM(9)
DESC_PARAM(65)
DESC_PARAM(241)

// --- S: N separate grid-constant parameters m000 ... picked by a switch -------------------------
// SEP_LIST_N(M) expands M(i) for i = 000 ... N-1 (three digits, so names and labels paste; the
// case label is 1i - 1000, since a literal with a leading 0 is octal).

#define SEP_PARAM(i) const __grid_constant__ TM m##i,
#define SEP_CASE(i) case 1##i - 1000: return &m##i;
#define SEP_TEN(M, p) M(p##0) M(p##1) M(p##2) M(p##3) M(p##4) M(p##5) M(p##6) M(p##7) M(p##8) M(p##9)
#define SEP_HUNDRED(M, p)                                                                         \
  SEP_TEN(M, p##0) SEP_TEN(M, p##1) SEP_TEN(M, p##2) SEP_TEN(M, p##3) SEP_TEN(M, p##4)            \
  SEP_TEN(M, p##5) SEP_TEN(M, p##6) SEP_TEN(M, p##7) SEP_TEN(M, p##8) SEP_TEN(M, p##9)
#define SEP_LIST_2(M) M(000) M(001)
#define SEP_LIST_9(M) M(000) M(001) M(002) M(003) M(004) M(005) M(006) M(007) M(008)
#define SEP_LIST_65(M)                                                                            \
  SEP_TEN(M, 00) SEP_TEN(M, 01) SEP_TEN(M, 02) SEP_TEN(M, 03) SEP_TEN(M, 04) SEP_TEN(M, 05)       \
  M(060) M(061) M(062) M(063) M(064)
#define SEP_LIST_241(M)                                                                           \
  SEP_HUNDRED(M, 0) SEP_HUNDRED(M, 1) SEP_TEN(M, 20) SEP_TEN(M, 21) SEP_TEN(M, 22) SEP_TEN(M, 23) \
  M(240)

#define DESC_SEP(N)                                                                               \
  extern "C" __global__ void __launch_bounds__(32) desc_sep_##N(SEP_LIST_##N(SEP_PARAM) Shape s) { \
    auto at = [&](unsigned i) -> const void * {                                                   \
      switch (i) { SEP_LIST_##N(SEP_CASE) }                                                       \
      return nullptr;                                                                             \
    };                                                                                            \
    copy_ring<false>(index_maps(at, s.k), s);                                                     \
  }
DESC_SEP(2)
DESC_SEP(9)
DESC_SEP(65)
DESC_SEP(241)

// --- C: a __constant__ array, indexed at run time --------------------------------------------------

#define GCL_DESC_CONST_MAX 480 // 60 KiB of the module's 64 KiB constant bank
__constant__ TM desc_const_maps[GCL_DESC_CONST_MAX];

extern "C" __global__ void __launch_bounds__(32) desc_const(Shape s) {
  copy_ring<false>(index_maps([](unsigned i) -> const void * { return &desc_const_maps[i]; }, s.k),
                   s);
}

// --- G, GP (and H): descriptors in global memory -----------------------------------------------

// All 32 threads fence the k+1 descriptors; then thread 0 runs the ring.
template <bool kPrefetch>
__device__ void global_variant(const TM *g, const Shape &s) {
  for (unsigned i = threadIdx.x; i <= s.k; i += blockDim.x) fence_map(g + i);
  __syncthreads();
  copy_ring<kPrefetch>(index_maps([g](unsigned i) -> const void * { return g + i; }, s.k), s);
}

extern "C" __global__ void __launch_bounds__(32) desc_global(const TM *g, Shape s) {
  global_variant<false>(g, s);
}

extern "C" __global__ void __launch_bounds__(32) desc_global_prefetch(const TM *g, Shape s) {
  global_variant<true>(g, s);
}

// --- D: descriptors made on the device (tensormap.replace is sm_90a) ---------------------------
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The template in shared memory at `staged` gets address addr (tensormap.replace), is copied to
// the global slot g, and published: release by the writer, acquire before the TMA unit reads g.
__device__ __forceinline__ void make_map(TM *staged, unsigned long long addr, TM *g) {
  asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;"
               ::"r"(smem_u32(staged)), "l"(addr) : "memory");
  const uint4 *from = reinterpret_cast<const uint4 *>(staged);
  uint4 *to = reinterpret_cast<uint4 *>(g);
#pragma unroll
  for (int i = 0; i < 8; i++) to[i] = from[i];
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
  fence_map(g);
}

// Load slot i's descriptor lives in slots[1 + i] (the destination's in slots[0]); held[i] is the
// tensor it describes now, so a slot is re-made only when its tensor changes. A slot is reused
// only after its stage's load completed (the ring waits for it), so no load in flight reads a
// descriptor being rewritten.
struct DeviceMaps {
  const unsigned long long *addrs;  // k source addresses, then the destination's
  TM *slots, *staged;
  unsigned *held;
  __device__ const void *load(unsigned src, unsigned slot) const {
    if (held[slot] != src) {
      make_map(staged, addrs[src], slots + 1 + slot);
      held[slot] = src;
    }
    return slots + 1 + slot;
  }
  __device__ const void *store() const { return slots; }
};

// tmpl.m[0]: the sources' template, m[1]: the destination's (any addresses: they are replaced).
extern "C" __global__ void __launch_bounds__(32)
    desc_device(const __grid_constant__ Maps<2> tmpl, const unsigned long long *addrs, TM *slots,
                Shape s) {
  __shared__ TM staged;
  __shared__ unsigned held[GCL_DESC_SLOTS - 1];
  if (threadIdx.x != 0) return;
  TM *mine = slots + (size_t)blockIdx.x * GCL_DESC_SLOTS;
  for (unsigned i = 0; i < GCL_DESC_SLOTS - 1; i++) held[i] = ~0u;
  staged = tmpl.m[1];
  make_map(&staged, addrs[s.k], mine);
  staged = tmpl.m[0];
  copy_ring<false>(DeviceMaps{addrs, mine, &staged, held}, s);
}

#endif

// --- verification: counts the 16-byte words where a and b differ -------------------------------

extern "C" __global__ void desc_compare(const uint4 *a, const uint4 *b, unsigned long long n,
                                        unsigned long long *bad) {
  unsigned long long count = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint4 x = a[i], y = b[i];
    count += (x.x != y.x) | (x.y != y.y) | (x.z != y.z) | (x.w != y.w);
  }
  if (count) atomicAdd(bad, count);
}
