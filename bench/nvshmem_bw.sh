#!/bin/sh
# Runs bench_nvshmem_bw (bench/nvshmem_bw.c) on a GPU runner: builds its device code,
# bench/nvshmem_bw.cu, on this machine, device-linked with the NVSHMEM wheel of the python3
# environment (site-packages/nvidia/nvshmem: libnvshmem_device.a and include/), points gclaunch at
# that wheel's host library, and runs the benchmark: one process (one PE) per GPU, two sharing the
# GPU when there is one (time-sliced, said in the output), PE 0's unique id passed to the others
# through a pipe (tests/common/pe_spawn.c).
#   bench/nvshmem_bw.sh BENCH_EXE [bench_nvshmem_bw options]   (--pes N, --bytes SIZE, --help, ...)
# BENCH_EXE: build/bench/bench_nvshmem_bw, or the kit's gclaunch-testkit/bench/bench_nvshmem_bw.
# No wheel, no nvcc or no GPU: skipped (exit 77) saying why; under GCL_REQUIRE_GPU=1 a failure.
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
nv=
for py in "${GCL_PYTHON:-}" python3 /opt/torch/.venv/bin/python3; do
  [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 || continue
  nv=$("$py" -c 'import nvidia.nvshmem as m, os; print(next(p for p in m.__path__ if os.path.isdir(os.path.join(p, "lib"))))' 2>/dev/null) && break
  nv=
done
[ -n "$nv" ] || skip "no NVSHMEM wheel (python3 -c 'import nvidia.nvshmem' found none; pip install nvidia-nvshmem-cu13)"
for f in lib/libnvshmem_host.so.3 lib/libnvshmem_device.a include/nvshmem.h; do
  [ -f "$nv/$f" ] || skip "the NVSHMEM wheel at $nv has no $f"
done
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || skip "no GPU (nvidia-smi -L lists none)"
nvcc=$(command -v nvcc || echo "${CUDA_PATH:-/usr/local/cuda}/bin/nvcc")
[ -x "$nvcc" ] || skip "no nvcc to build $src"
arch=${GCL_NVSHMEM_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)}
arch=${arch:-90}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-nvshmem-bw.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$nvcc" -arch=sm_$arch -rdc=true -dc -I"$nv/include" "$src" -o "$tmp/bw.o" &&
  "$nvcc" -arch=sm_$arch -dlink -cubin "$tmp/bw.o" "$nv/lib/libnvshmem_device.a" -o "$tmp/bw.cubin" ||
  { echo "FAIL: building $src against $nv"; exit 1; }
echo "NVSHMEM wheel: $nv; device code: sm_$arch, $(wc -c <"$tmp/bw.cubin") bytes"
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
nvidia-smi topo -m 2>/dev/null | head -20
export GCL_NVSHMEM_PATH="$nv/lib" NVSHMEM_DISABLE_NVLS=1 NVSHMEM_REMOTE_TRANSPORT=none
export NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-2G}
export NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=${NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME:-lo}
timeout "${BW_TIMEOUT:-480}" "$exe" --cubin "$tmp/bw.cubin" "$@"
