#!/bin/sh
# NVSHMEM on the GPU (issue 46). Builds tests/gpu/nvshmem_put.cu on this machine, device-linked
# with the NVSHMEM wheel of the python3 environment (site-packages/nvidia/nvshmem: its
# libnvshmem_device.a and include/), then runs one suite against that wheel's host library:
#   test_nvshmem.sh 1pe GPU_NVSHMEM_EXE NVSHMEM_PUT_CU KERNEL_DIR     one PE on one GPU
#   test_nvshmem.sh 2pe GPU_NVSHMEM_2PE_EXE NVSHMEM_PUT_CU KERNEL_DIR two PEs, one process each
#     (PE r on GPU r; with one GPU both share it, time-sliced: the program says which)
# No wheel or no nvcc: skipped (77) saying why, a failure under GCL_REQUIRE_GPU=1. NVLink
# multicast stays off (NVSHMEM_DISABLE_NVLS=1); no network transport (NVSHMEM_REMOTE_TRANSPORT=none).
# GCL_PYTHON names the python3 to ask; GCL_NVSHMEM_ARCH the sm (default: the device's, else 90).
mode=$1 exe=$2 src=$3 kdir=$4
skip() {
  if [ "${GCL_REQUIRE_GPU:-0}" = 1 ]; then echo "FAIL (GCL_REQUIRE_GPU=1): $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
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
nvcc=$(command -v nvcc || echo "${CUDA_PATH:-/usr/local/cuda}/bin/nvcc")
[ -x "$nvcc" ] || skip "no nvcc to build the NVSHMEM kernel"
arch=${GCL_NVSHMEM_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)}
arch=${arch:-90}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-nvshmem.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$nvcc" -arch=sm_$arch -rdc=true -dc -I"$nv/include" "$src" -o "$tmp/k.o" &&
  "$nvcc" -arch=sm_$arch -dlink -cubin "$tmp/k.o" "$nv/lib/libnvshmem_device.a" -o "$tmp/k.cubin" ||
  { echo "FAIL: building $src against $nv"; exit 1; }
echo "NVSHMEM wheel: $nv; kernel: sm_$arch, $(wc -c <"$tmp/k.cubin") bytes"
export GCL_NVSHMEM_CUBIN="$tmp/k.cubin" GCL_NVSHMEM_PATH="$nv/lib" GCL_KERNEL_DIR="$kdir"
export NVSHMEM_DISABLE_NVLS=1 NVSHMEM_REMOTE_TRANSPORT=none
case $mode in
1pe) "$exe" ;;
2pe) NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=${NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME:-lo} timeout 240 "$exe" ;;
*) echo "usage: test_nvshmem.sh 1pe|2pe EXE NVSHMEM_PUT_CU KERNEL_DIR"; exit 2 ;;
esac
