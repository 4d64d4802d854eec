#!/bin/sh
# NVSHMEM on the GPU (issue 46). Builds tests/gpu/nvshmem_put.cu on this machine with
# scripts/nvshmem_device.sh (device-linked with the libnvshmem_device.a beside the host library
# `gclaunch info` finds; with GCL_NVSHMEM_PATH unset, the pip wheel of the python3 environment
# found by import), then runs one suite against that host library:
#   test_nvshmem.sh 1pe GPU_NVSHMEM_EXE NVSHMEM_PUT_CU KERNEL_DIR GCLAUNCH     one PE on one GPU
#   test_nvshmem.sh 2pe GPU_NVSHMEM_2PE_EXE NVSHMEM_PUT_CU KERNEL_DIR GCLAUNCH two PEs, one process
#     each (PE r on GPU r; with one GPU both share it, time-sliced: the program says which)
# No NVSHMEM or no nvcc: skipped (77) saying why, a failure under GCL_REQUIRE_GPU=1. NVLink
# multicast stays off (NVSHMEM_DISABLE_NVLS=1); no network transport (NVSHMEM_REMOTE_TRANSPORT=none).
# GCL_PYTHON names the python3 to ask; GCL_NVSHMEM_ARCH the sm (default: the device's, else 90).
mode=$1 exe=$2 src=$3 kdir=$4 gcl=$5
skip() {
  if [ "${GCL_REQUIRE_GPU:-0}" = 1 ]; then echo "FAIL (GCL_REQUIRE_GPU=1): $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
here=$(dirname "$0")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-nvshmem.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$(sh "$here/../../scripts/nvshmem_device.sh" "$gcl" "$src" "$tmp/k.cubin")
rc=$?
[ $rc -eq 77 ] && skip "${out#SKIP: }"
[ $rc -eq 0 ] || { echo "FAIL: scripts/nvshmem_device.sh exited $rc: $out"; exit 1; }
export "$out" # GCL_NVSHMEM_PATH: the host library the kernel's device library sits beside
export GCL_NVSHMEM_CUBIN="$tmp/k.cubin" GCL_KERNEL_DIR="$kdir"
export NVSHMEM_DISABLE_NVLS=1 NVSHMEM_REMOTE_TRANSPORT=none
# Runs the suite with its output copied to $tmp/out; its status in $tmp/rc.
run() { { "$@"; echo $? >"$tmp/rc"; } 2>&1 | tee "$tmp/out"; }
case $mode in
1pe) run "$exe" ;;
2pe) NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=${NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME:-lo} run timeout 240 "$exe" ;;
*) echo "usage: test_nvshmem.sh 1pe|2pe EXE NVSHMEM_PUT_CU KERNEL_DIR GCLAUNCH"; exit 2 ;;
esac
rc=$(cat "$tmp/rc" 2>/dev/null) || rc=
[ -n "$rc" ] || { echo "FAIL: $exe left no status (killed with the shell?)"; exit 1; }
# Say why a nonzero status came, in words (issue 55: "Failing: 0", then exit 1 with nothing said).
if [ "$rc" = 0 ] || [ "$rc" = 77 ]; then exit "$rc"; fi
synthesis=$(grep 'Synthesis:' "$tmp/out" | tail -1)
if [ "$rc" = 124 ]; then why="timed out (240 s)"
elif [ "$rc" -gt 128 ]; then why="killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))"
elif echo "$synthesis" | grep -q 'Failing: 0 | Crashing: 0'; then
  why="its tests passed ($synthesis) but the run failed: a logged warning (cr_log_warn fails a Criterion 2.4 run) or something that ran after the verdict"
elif [ -n "$synthesis" ]; then why="tests failed ($synthesis; see above)"
else why="it ended before Criterion's synthesis (see the lines above)"
fi
echo "FAIL: $(basename "$exe") exited $rc: $why"
exit "$rc"
