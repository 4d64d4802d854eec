#!/bin/sh
# Runs bench_nvshmem_bw (bench/nvshmem_bw.c) on a GPU runner: builds its device code,
# bench/nvshmem_bw.cu, on this machine with scripts/nvshmem_device.sh (the NVSHMEM `gclaunch info`
# finds; with GCL_NVSHMEM_PATH unset, the pip wheel of the python3 environment found by import;
# GCLAUNCH names the tool, default BENCH_EXE/../tools/gclaunch), points gclaunch at that host
# library, and runs the benchmark: one process (one PE) per GPU, two sharing the
# GPU when there is one (time-sliced, said in the output), PE 0's unique id passed to the others
# through a pipe (tests/common/pe_spawn.c).
#   bench/nvshmem_bw.sh BENCH_EXE [bench_nvshmem_bw options]   (--pes N, --bytes SIZE, --help, ...)
# BENCH_EXE: build/bench/bench_nvshmem_bw, or the kit's gclaunch-testkit/bench/bench_nvshmem_bw.
# No NVSHMEM, no nvcc or no GPU: skipped (exit 77) saying why; under GCL_REQUIRE_GPU=1 a failure.
# NVLink multicast stays off (NVSHMEM_DISABLE_NVLS=1); one host, no network transport
# (NVSHMEM_REMOTE_TRANSPORT=none). GCL_PYTHON names the python3 to ask for the wheel;
# GCL_NVSHMEM_ARCH the sm (default: the device's, else 90). NVSHMEM_SYMMETRIC_SIZE (default here
# 2G) must hold (1 + PEs) x --bytes.
exe=${1:?usage: bench/nvshmem_bw.sh BENCH_EXE [bench_nvshmem_bw options]}
shift
src=$(dirname "$0")/nvshmem_bw.cu
skip() {
  if [ "${GCL_REQUIRE_GPU:-0}" = 1 ]; then echo "FAIL (GCL_REQUIRE_GPU=1): $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
[ -x "$exe" ] || { echo "bench/nvshmem_bw.sh: $exe is not an executable"; exit 2; }
for a in "$@"; do # --help and bad arguments need no GPU and no wheel: the program answers them
  case $a in --help|-h) exec "$exe" --help ;; esac
done
[ -f "$src" ] || { echo "bench/nvshmem_bw.sh: no $src next to this script"; exit 2; }
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || skip "no GPU (nvidia-smi -L lists none)"
gcl=${GCLAUNCH:-$(dirname "$exe")/../tools/gclaunch} # the build tree's or the test kit's
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-nvshmem-bw.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$(sh "$(dirname "$0")/../scripts/nvshmem_device.sh" "$gcl" "$src" "$tmp/bw.cubin")
rc=$?
[ $rc -eq 77 ] && skip "${out#SKIP: }"
[ $rc -eq 0 ] || { echo "FAIL: scripts/nvshmem_device.sh exited $rc: $out"; exit 1; }
export "$out" # GCL_NVSHMEM_PATH: the host library beside the device library linked in
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
nvidia-smi topo -m 2>/dev/null | head -20
export NVSHMEM_DISABLE_NVLS=1 NVSHMEM_REMOTE_TRANSPORT=none
export NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-2G}
export NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=${NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME:-lo}
timeout "${BW_TIMEOUT:-480}" "$exe" --cubin "$tmp/bw.cubin" "$@"
