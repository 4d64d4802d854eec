// Programmatic dependent launch (PDL) pairs for the launch-safety checks: the same kernel with
// and without griddepcontrol.wait (cudaGridDependencySynchronize compiles to it). A kernel
// launched with PDL may start while the previous kernel on its stream is still writing; only
// the waiting one reads after that kernel's writes. tests/unit/test_launchsafe.c reads these
// images on the CPU; tests/gpu/test_launchsafe.c launches them.

// Writes out[i] = i + 1 slowly (many blocks), then lets a dependent grid start early.
extern "C" __global__ void pdl_producer(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i + 1;
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// Waits for the producer, then copies its output: every dst[i] is i + 1.
extern "C" __global__ void pdl_waits(const int *src, int *dst, int n) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// The same copy without the wait: under PDL it may read before the producer wrote.
extern "C" __global__ void pdl_nowait(const int *src, int *dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// Waits through the runtime's call (the same instruction).
extern "C" __global__ void pdl_waits_api(const int *src, int *dst, int n) {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}
