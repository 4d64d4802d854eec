#!/bin/sh
# Prints a header with sizeof and alignof(ncclDevComm) as the host sees them through NCCL's
# headers (C++ only: nccl_device.h is a C++ header), for tests/unit/test_nccl_bytes.c.
#   nccl_devcomm_size.sh CXX CUDA_INCLUDE_DIR
cxx=$1 inc=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-nccl.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/s.cc" <<'CC'
#include <cstddef>
#include <cstdio>
#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>
int main() {
  std::printf("#define GCL_TEST_NCCL_DEVCOMM_BYTES %zu\n#define GCL_TEST_NCCL_DEVCOMM_ALIGN %zu\n"
              "#define GCL_TEST_NCCL_VERSION \"%d.%d.%d\"\n", sizeof(ncclDevComm),
              alignof(ncclDevComm), NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
}
CC
"$cxx" -std=c++17 -I"$inc" "$tmp/s.cc" -o "$tmp/s" >&2 && "$tmp/s"
