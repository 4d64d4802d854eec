// Empty definitions for the stand-in headers (nvshmem.h here), device-linked in their place of
// libnvshmem_device.a: the cubin only has to carry the kernels' parameter records.
#include "nvshmem.h"
#include "nvshmemx.h"
extern "C" __device__ int nvshmem_my_pe(void) { return 0; }
extern "C" __device__ void nvshmem_quiet(void) {}
extern "C" __device__ void nvshmemx_getmem_block(void *, const void *, size_t, int) {}
extern "C" __device__ void nvshmemx_putmem_block(void *, const void *, size_t, int) {}
// NVSHMEM's two state symbols as libnvshmem_device.a defines them (kernels/nvshmem_state.cu), so
// that gclaunch sees a module device-linked with NVSHMEM 3.4.5 and requires an attach (the fake
// NVSHMEM of tests/fakenvshmem accepts it; nothing fills it: never on a GPU).
struct stub_version { int major, minor, patch; };
__constant__ unsigned long long nvshmemi_device_state_d[97];
__constant__ stub_version nvshmemi_device_lib_version_d = {3, 4, 5};
