// A stand-in for NVSHMEM's nvshmem.h with only what bench/nvshmem_bw.cu calls, so that
// tests/unit/test_nvshmem_bw_args.sh can build that file on the CPU (no NVSHMEM installed) and
// check bench_nvshmem_bw's signatures against the cubin's own parameter records. Never run.
#pragma once
#include <stddef.h>
extern "C" __device__ int nvshmem_my_pe(void);
extern "C" __device__ void nvshmem_quiet(void);
