// Empty definitions for the stand-in headers (nvshmem.h here), device-linked in their place of
// libnvshmem_device.a: the cubin only has to carry the kernels' parameter records.
#include "nvshmem.h"
#include "nvshmemx.h"
extern "C" __device__ int nvshmem_my_pe(void) { return 0; }
extern "C" __device__ void nvshmem_quiet(void) {}
extern "C" __device__ void nvshmemx_getmem_block(void *, const void *, size_t, int) {}
extern "C" __device__ void nvshmemx_putmem_block(void *, const void *, size_t, int) {}
