// A persistent copy megakernel: every TMA descriptor it uses sits in ONE by-value grid-constant
// parameter (an array of N tensor maps wrapped in a struct, because an array parameter would decay
// to a pointer) and is picked by a run-time index read from a work list in global memory.
//
// Each work item copies one box: TMA load (global -> shared, completion on an mbarrier), then TMA
// store (shared -> global, bulk group). Two shared-memory stages let the load of the next item run
// while the store of the previous one drains. Only thread 0 of each block issues TMA; the block is
// one warp so the launch stays cheap. sm_90 or later (TMA, mbarrier expect_tx).
//
// Destination maps need rows (innermost extent) of a multiple of 16 bytes: TMA stores write whole
// 16-byte chunks, so a shorter row end would have the bytes after it overwritten with the box's
// out-of-bounds fill. The host encodes destinations with gcl_tensormap_options.store = 1, which
// refuses such tensors.
//
// Host side: descriptors are encoded by gcl_args_set_tensormap into element i of parameter 0,
// signature "grid_constant tensormap[N] maps, const void* work, u32 n_work"
// (and "grid_constant tensormap align(64)[N] maps, ..." for the megakernel_copy_a64_* variants,
// which model CUDA 12 headers where CUtensorMap was only 64-byte aligned).

// The same 128 bytes as CUtensorMap; the alignment is what moves the parameter's offset
// (0x70 for 128, 0x30 for 64 on sm_90).
struct alignas(128) TM { unsigned long long o[16]; };
struct alignas(64) TM64 { unsigned long long o[16]; };

template <class T, int N> struct Maps { T m[N]; };

// One box to copy. src/dst index the maps; both maps must have the same box and element type.
// sc[]/dc[] are the box's element coordinates in the source and the destination, innermost first
// (TMA order); bytes = the box's transaction bytes (gcl_tensormap_desc.box_bytes). 40 bytes.
struct WorkItem {
  unsigned src, dst, rank, bytes;
  int sc[3], dc[3];
};

#define GCL_STAGE_BYTES 16384  // largest box in bytes; the host keeps every box within it

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mbar_init(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void mbar_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void prefetch_map(const void *map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

__device__ __forceinline__ void tma_load(const void *map, unsigned dst, unsigned bar,
                                         const WorkItem &w) {
  const int *c = w.sc;
  if (w.rank == 1)
    asm volatile(
        "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2}], [%3];" ::"r"(dst),
        "l"(map), "r"(c[0]), "r"(bar)
        : "memory");
  else if (w.rank == 2)
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
        "l"(map), "r"(c[0]), "r"(c[1]), "r"(bar)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
        "l"(map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar)
        : "memory");
}

__device__ __forceinline__ void tma_store(const void *map, unsigned src, const WorkItem &w) {
  const int *c = w.dc;
  if (w.rank == 1)
    asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%1}], [%2];" ::"l"(
                     map),
                 "r"(c[0]), "r"(src)
                 : "memory");
  else if (w.rank == 2)
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(map),
        "r"(c[0]), "r"(c[1]), "r"(src)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];" ::"l"(
            map),
        "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(src)
        : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

template <class T, int N>
__device__ void copy_loop(const Maps<T, N> &maps, const WorkItem *work, unsigned n_work) {
  __shared__ alignas(1024) unsigned char stage[2][GCL_STAGE_BYTES];
  __shared__ alignas(8) unsigned long long bar[2];
  if (threadIdx.x != 0) return;
  // Stage j's buffer and barrier by arithmetic (an indexed local array would live in local memory).
  const unsigned s0 = smem_addr(stage[0]), b0 = smem_addr(&bar[0]);
  mbar_init(b0);
  mbar_init(b0 + 8);
  unsigned it = blockIdx.x;
  if (it >= n_work) return;
  WorkItem cur = work[it];
  // Run-time indices into the grid-constant array: &maps.m[i] is a generic address of the
  // parameter space, which TMA and prefetch.tensormap accept.
  prefetch_map(&maps.m[cur.src]);
  prefetch_map(&maps.m[cur.dst]);
  mbar_expect(b0, cur.bytes);
  tma_load(&maps.m[cur.src], s0, b0, cur);
  for (unsigned k = 0; it < n_work; k++, it += gridDim.x) {
    unsigned st = k & 1, next = it + gridDim.x;
    unsigned bar_now = b0 + 8 * st, bar_next = b0 + 8 * (st ^ 1);
    unsigned buf_now = s0 + GCL_STAGE_BYTES * st, buf_next = s0 + GCL_STAGE_BYTES * (st ^ 1);
    WorkItem nw = cur;
    if (next < n_work) {
      nw = work[next];
      prefetch_map(&maps.m[nw.src]);
      prefetch_map(&maps.m[nw.dst]);
      // Stage st^1 was last read by the store of item k-1: let it finish reading first.
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      mbar_expect(bar_next, nw.bytes);
      tma_load(&maps.m[nw.src], buf_next, bar_next, nw);
    }
    mbar_wait(bar_now, (k >> 1) & 1);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // cheap; orders load -> store
    tma_store(&maps.m[cur.dst], buf_now, cur);
    cur = nw;
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

#define GCL_MEGAKERNEL(T, N, NAME)                                                                \
  extern "C" __global__ void __launch_bounds__(32)                                                \
      NAME(const __grid_constant__ Maps<T, N> maps, const WorkItem *work, unsigned n_work) {     \
    copy_loop<T, N>(maps, work, n_work);                                                          \
  }

GCL_MEGAKERNEL(TM, 1, megakernel_copy_1)
GCL_MEGAKERNEL(TM, 16, megakernel_copy_16)
GCL_MEGAKERNEL(TM, 64, megakernel_copy_64)
// 0x70 + 255 * 128 + 8 + 4 = 32764: exactly the parameter limit on sm_90.
GCL_MEGAKERNEL(TM, 255, megakernel_copy_255)
GCL_MEGAKERNEL(TM64, 16, megakernel_copy_a64_16)
GCL_MEGAKERNEL(TM64, 255, megakernel_copy_a64_255)

// The same megakernel taking ONE grid-constant globals struct, the shape real megakernels use
// (ThunderKittens' globals, CUTLASS Params): its maps, the work list and its length are members.
// Host side: signature "grid_constant struct{tensormap[N] maps, const void* work, u32 n_work} g",
// every member set through fields ("g.maps[3]", "g.work", "g.n_work").
template <class T, int N> struct Globals {
  Maps<T, N> maps;
  const WorkItem *work;
  unsigned n_work;
};

#define GCL_MEGAKERNEL_GLOBALS(T, N, NAME)                                                        \
  extern "C" __global__ void __launch_bounds__(32) NAME(const __grid_constant__ Globals<T, N> g) { \
    copy_loop<T, N>(g.maps, g.work, g.n_work);                                                    \
  }

GCL_MEGAKERNEL_GLOBALS(TM, 16, megakernel_globals_16)
GCL_MEGAKERNEL_GLOBALS(TM, 64, megakernel_globals_64)
// --- The ring variant (gclaunch demo): a deeper pipeline, more bytes in flight per SM ----------
//
// The same work list and descriptors, but an S-stage ring of GCL_STAGE_BYTES stages in dynamic
// shared memory, S = dynamic shared bytes / GCL_STAGE_BYTES (2 ... GCL_RING_MAX), chosen by the
// host through the launch's shared_bytes -- so the parameter list stays (maps, work, n_work).
// Thread 0 keeps S - 1 loads in flight: after storing item k from stage k % S it refills stage
// (k - 1) % S, whose store was issued one item earlier (wait_group.read 1: every store but the
// newest has finished reading shared memory), instead of waiting for the store it has just
// issued (wait_group.read 0, which serialises load and store in copy_loop above). This is the
// design of kernels/descbench.cu, which reaches ~92% of cuMemcpyDtoD with 16 KiB tiles; like it,
// the loop reads nothing from global memory on the issuing thread's critical path (see below).
#define GCL_RING_MAX 13  // 13 x 16 KiB = 208 KiB of the 227 KiB a block may have

template <class T, int N>
__device__ void ring_loop(const Maps<T, N> &maps, const WorkItem *work, unsigned n_work) {
  extern __shared__ __align__(1024) unsigned char ring[];
  __shared__ alignas(8) unsigned long long bar[GCL_RING_MAX];
  __shared__ WorkItem items[GCL_RING_MAX];  // the item each stage holds (stores need dst, dc)
  if (threadIdx.x != 0) return;
  unsigned dyn;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
  unsigned S = dyn / GCL_STAGE_BYTES;
  S = S > GCL_RING_MAX ? GCL_RING_MAX : S;
  if (S < 2) __trap();  // the host must give at least two stages (tools/demo_gpu.c does)
  const unsigned r0 = smem_addr(ring), b0 = smem_addr(&bar[0]), grid = gridDim.x;
  for (unsigned j = 0; j < S; j++) mbar_init(b0 + 8 * j);
  // Prologue: items 0 ... S-2 of this block into stages 0 ... S-2.
  for (unsigned j = 0; j + 1 < S; j++) {
    unsigned it = blockIdx.x + j * grid;
    if (it >= n_work) break;
    items[j] = work[it];
    prefetch_map(&maps.m[items[j].dst]);
    mbar_expect(b0 + 8 * j, items[j].bytes);
    tma_load(&maps.m[items[j].src], r0 + j * GCL_STAGE_BYTES, b0 + 8 * j, items[j]);
  }
  // The work list is read two refills ahead of its use: w1 is the item the next refill loads,
  // w2 the one after. Reading work[next] just before its load put a dependent global-memory read
  // (~0.5-1 us from DRAM) on the single issuing thread's path once per item, which bounded the
  // demo at ~85% of cuMemcpyDtoD; loaded two items early, the read's latency hides behind the
  // mbarrier waits (a load's result is only waited for at its first use).
  unsigned next = blockIdx.x + (S - 1) * grid;
  WorkItem w1 = next < n_work ? work[next] : WorkItem{}, w2 = w1;
  if (next + grid < n_work) w2 = work[next + grid];
  unsigned j = 0, phase = 0, jn = S - 1;  // j = k % S, phase = (k / S) & 1, jn = (k - 1) % S
  for (unsigned it = blockIdx.x; it < n_work; it += grid, next += grid) {
    mbar_wait(b0 + 8 * j, phase);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    tma_store(&maps.m[items[j].dst], r0 + j * GCL_STAGE_BYTES, items[j]);
    if (next < n_work) {
      WorkItem w = w1;
      w1 = w2;
      if (next + 2 * grid < n_work) w2 = work[next + 2 * grid];
      prefetch_map(&maps.m[w.dst]);
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");  // store k-1 read out
      items[jn] = w;
      mbar_expect(b0 + 8 * jn, w.bytes);
      tma_load(&maps.m[w.src], r0 + jn * GCL_STAGE_BYTES, b0 + 8 * jn, w);
    }
    jn = j;
    if (++j == S) j = 0, phase ^= 1;
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

#define GCL_MEGAKERNEL_RING(T, N, NAME)                                                           \
  extern "C" __global__ void __launch_bounds__(32)                                                \
      NAME(const __grid_constant__ Maps<T, N> maps, const WorkItem *work, unsigned n_work) {     \
    ring_loop<T, N>(maps, work, n_work);                                                          \
  }

GCL_MEGAKERNEL_RING(TM, 16, megakernel_ring_16)
GCL_MEGAKERNEL_RING(TM, 64, megakernel_ring_64)
GCL_MEGAKERNEL_RING(TM, 255, megakernel_ring_255)

// The ring megakernel on one globals struct: what `gclaunch demo` launches. 254 maps is the most a
// globals struct of (maps, work, n_work) holds on sm_90: 254 * 128 + 12 bytes rounded up to the
// struct's 128-byte alignment is 32640, placed at 112: 32752 <= 32764 (255 would need 32768).
#define GCL_MEGAKERNEL_GLOBALS_RING(T, N, NAME)                                                   \
  extern "C" __global__ void __launch_bounds__(32) NAME(const __grid_constant__ Globals<T, N> g) { \
    ring_loop<T, N>(g.maps, g.work, g.n_work);                                                    \
  }

GCL_MEGAKERNEL_GLOBALS_RING(TM, 16, megakernel_globals_ring_16)
GCL_MEGAKERNEL_GLOBALS_RING(TM, 64, megakernel_globals_ring_64)
GCL_MEGAKERNEL_GLOBALS_RING(TM, 254, megakernel_globals_ring_254)
