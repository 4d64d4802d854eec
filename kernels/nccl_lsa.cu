// NCCL's device API (2.28+) through gclaunch: the communicator rides BY VALUE as bytes(N)
// (N = sizeof(ncclDevComm), what ncclDevCommCreate fills on the host), windows as pointers.
// lsa_put: every thread writes threadIdx.x + lsaRank into the next LSA peer's window at offset,
// thread 0 writes (lsaRank, lsaSize) into out. Signature
// "bytes(200) align(8) comm, ptr win, u64 offset, i32* out" with NCCL 2.28.9's headers.
// Built only where the toolkit ships nccl_device.h (kernels/meson.build).
#include <nccl_device.h>

extern "C" __global__ void lsa_put(ncclDevComm comm, ncclWindow_t win, size_t offset, int *out) {
  int peer = (comm.lsaRank + 1) % comm.lsaSize;
  int *p = (int *)ncclGetLsaPointer(win, offset, peer);
  if (threadIdx.x == 0) {
    out[0] = comm.lsaRank;
    out[1] = comm.lsaSize;
  }
  p[threadIdx.x] = (int)threadIdx.x + comm.lsaRank;
}
