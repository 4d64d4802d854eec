// A stand-in for a module device-linked with NVSHMEM, for the CPU tests (tests/unit/test_pe.c,
// tests/cli): it defines NVSHMEM's two state symbols as libnvshmem_device does (the device state
// and the 12-byte library version, both in the constant bank) without NVSHMEM itself. It must
// never run on a GPU: nothing fills its state. NVSHMEM_LIB_VERSION picks the version it claims.
#ifndef NVSHMEM_LIB_MAJOR
#define NVSHMEM_LIB_MAJOR 3
#define NVSHMEM_LIB_MINOR 4
#define NVSHMEM_LIB_PATCH 5
#endif

struct fake_version { int major, minor, patch; };
__constant__ unsigned long long nvshmemi_device_state_d[97];
__constant__ fake_version nvshmemi_device_lib_version_d = {NVSHMEM_LIB_MAJOR, NVSHMEM_LIB_MINOR,
                                                           NVSHMEM_LIB_PATCH};

extern "C" __global__ void put_self(int *out) {
  out[threadIdx.x] = (int)nvshmemi_device_state_d[threadIdx.x % 97] + nvshmemi_device_lib_version_d.minor;
}
