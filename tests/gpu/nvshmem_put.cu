// The GPU tests' NVSHMEM kernel (tests/gpu/test_nvshmem.sh builds it on the runner, device-linked
// with the NVSHMEM wheel's libnvshmem_device.a):
//   nvcc -arch=sm_90 -rdc=true -dc -I$NV/include nvshmem_put.cu -o k.o
//   nvcc -arch=sm_90 -dlink -cubin k.o $NV/lib/libnvshmem_device.a -o k.cubin
// put_ring: every thread puts 3 i + 1 + pe into element i of `dst` (symmetric) on PE
// (pe + shift) % n_pes -- itself with shift 0 or one PE; then the whole grid syncs (a cooperative
// launch is required), thread 0 of block 0 joins nvshmem_barrier_all and writes (pe, n_pes)
// into info. Signature "i32* dst, i32* info, i32 shift".
#include <cooperative_groups.h>
#include <nvshmem.h>

extern "C" __global__ void put_ring(int *dst, int *info, int shift) {
  int me = nvshmem_my_pe(), n = nvshmem_n_pes();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  nvshmem_int_p(dst + i, 3 * i + 1 + me, (me + shift) % n);
  nvshmem_quiet();
  cooperative_groups::this_grid().sync();
  if (i == 0) {
    nvshmem_barrier_all();
    info[0] = me;
    info[1] = n;
  }
}

// put_to: put_ring's puts without its barriers -- every thread puts 3 i + 1 + pe into element i
// of `dst` on PE (pe + shift) % n_pes, then nvshmem_quiet. It needs no other PE's kernel running
// at the same time (the host's gcl_pe_barrier orders it), so it runs where two PEs share one GPU
// (time-sliced processes, docs/multigpu.md). Signature "i32* dst, i32 shift".
extern "C" __global__ void put_to(int *dst, int shift) {
  int me = nvshmem_my_pe(), n = nvshmem_n_pes();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  nvshmem_int_p(dst + i, 3 * i + 1 + me, (me + shift) % n);
  nvshmem_quiet();
}
