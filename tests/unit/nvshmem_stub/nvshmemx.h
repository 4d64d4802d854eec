// Stand-in (see nvshmem.h here): the block-scoped get and put of bench/nvshmem_bw.cu.
#pragma once
#include <stddef.h>
extern "C" __device__ void nvshmemx_getmem_block(void *dst, const void *src, size_t n, int pe);
extern "C" __device__ void nvshmemx_putmem_block(void *dst, const void *src, size_t n, int pe);
