// Kernels for the launch-path benchmark (bench/launch.c) and the launch-config tests.
struct alignas(128) TM { unsigned long long o[16]; };
struct M16 { TM m[16]; };   // tensormap[16]: 2 KiB
struct M240 { TM m[240]; }; // tensormap[240]: 30 KiB

// Benchmark kernels do nothing unless idx is negative (never in the benchmark), which keeps every
// parameter alive without touching memory.
extern "C" __global__ void bench_args8(int a, int b, float c, float d, const float *p0, float *p1,
                                       unsigned long long n, int idx) {
  if (idx < 0) p1[0] = a + b + c + d + p0[0] + (float)n;
}

extern "C" __global__ void bench_maps16(const __grid_constant__ M16 m, int idx,
                                        unsigned long long *out) {
  if (idx < 0) out[0] = m.m[(-idx) & 15].o[0];
}

extern "C" __global__ void bench_maps240(const __grid_constant__ M240 m, int idx,
                                         unsigned long long *out) {
  if (idx < 0) out[0] = m.m[(-idx) % 240].o[0];
}

// A megakernel's globals: one struct of maps, a pointer and an integer (bench_refresh's
// relaunch loop through a struct's maps).
struct G240 { TM maps[240]; unsigned long long *out; int idx; };
extern "C" __global__ void bench_globals240(const __grid_constant__ G240 g) {
  if (g.idx < 0) g.out[0] = g.maps[(-g.idx) % 240].o[0];
}

// At most 128 threads per block: a launch with more is refused before the driver.
extern "C" __global__ void __launch_bounds__(128) cfg_bounded(unsigned *out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x + 1;
}

// Fills `words` words of dynamic shared memory and writes their sum per block.
extern "C" __global__ void cfg_smem(unsigned *out, unsigned words) {
  extern __shared__ unsigned smem[];
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) smem[i] = i * 2654435761u;
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned sum = 0;
  for (unsigned i = 0; i < words; i++) sum += smem[i];
  out[blockIdx.x] = sum;
}

// Per block: rank in its cluster | cluster size << 16 (sm_90+; 0xffffffff before).
extern "C" __global__ void cfg_cluster(unsigned *out) {
  unsigned v = 0xffffffffu;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned rank, size;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  v = rank | size << 16;
#endif
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// Adds add to out[blockIdx.x]; used for cooperative, PDL, priority and graph tests.
extern "C" __global__ void cfg_add(unsigned *out, unsigned add) {
  if (threadIdx.x == 0) out[blockIdx.x] += add;
}

// No parameters: it counts its runs in a module global, so a test can see that it ran.
extern "C" {
__device__ unsigned cfg_noparams_runs;
}
extern "C" __global__ void cfg_noparams(void) { atomicAdd(&cfg_noparams_runs, 1u); }
