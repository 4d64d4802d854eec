// Parameter areas at the 32,764-byte limit. ptxas checks the limit on the PTX layout, which starts
// at offset 0; the device layout starts at the per-architecture base (112 for a 128-aligned first
// parameter on sm_90), so on sm_90 this kernel's device area is 32,768 bytes and still compiles --
// but the driver refuses to load such a kernel (H200, driver 580), so gclaunch refuses its layout.
#include <cuda.h>

struct Maps255 { CUtensorMap m[255]; };

extern "C" __global__ void k_maps255(const __grid_constant__ Maps255 maps, int idx,
                                     unsigned long long *out) {
  out[threadIdx.x] = ((const unsigned long long *)&maps.m[idx])[threadIdx.x % 16];
}
