#!/bin/sh
# Prints a header with sizeof and alignof(ncclDevComm) as the host sees them through NCCL's
# headers (C++ only: nccl_device.h is a C++ header), for tests/unit/test_nccl_bytes.c; and for
# tests/gpu/test_nccl_devcomm.c (C) the headers' NCCL_VERSION_CODE and the bytes of their
# NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER where they have one, else zeros (pointers in it are null:
# the bytes hold no address).
#   nccl_devcomm_size.sh CXX CUDA_INCLUDE_DIR
cxx=$1 inc=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-nccl.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/s.cc" <<'CC'
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>
int main() {
  std::printf("#define GCL_TEST_NCCL_DEVCOMM_BYTES %zu\n#define GCL_TEST_NCCL_DEVCOMM_ALIGN %zu\n"
              "#define GCL_TEST_NCCL_VERSION \"%d.%d.%d\"\n", sizeof(ncclDevComm),
              alignof(ncclDevComm), NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  std::printf("#define GCL_TEST_NCCL_VERSION_CODE %d\n", NCCL_VERSION_CODE);
  ncclDevCommRequirements reqs;
  std::memset(&reqs, 0, sizeof reqs); /* 2.28/2.29: zeros are the defaults */
#ifdef NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER
  reqs = ncclDevCommRequirements(NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER);
#endif
  const unsigned char *b = reinterpret_cast<const unsigned char *>(&reqs);
  std::printf("#define GCL_TEST_NCCL_REQS_BYTES {");
  for (size_t i = 0; i < sizeof reqs; i++) std::printf("%s0x%02x", i ? ", " : "", b[i]);
  std::printf("}\n");
}
CC
"$cxx" -std=c++17 -I"$inc" "$tmp/s.cc" -o "$tmp/s" >&2 && "$tmp/s"
