// Device side of the NVSHMEM probe: a put to itself and a barrier, device-linked with the wheel.
#include <nvshmem.h>
#include <nvshmemx.h>
extern "C" __global__ void put_self(int *sym, int value) {
  int me = nvshmem_my_pe();
  if (threadIdx.x == 0 && blockIdx.x == 0) nvshmem_int_p(sym, value + me, me);
  nvshmem_barrier_all();
}
