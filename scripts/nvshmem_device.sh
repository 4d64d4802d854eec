#!/bin/sh
# The one build of NVSHMEM device code (docs/multigpu.md, section 2), for every test, benchmark and
# doc that needs it: SRC.cu compiled relocatable (nvcc -rdc=true -dc), then device-linked with
# NVSHMEM's libnvshmem_device.a into a cubin the driver API loads (nvcc -dlink -cubin).
#   scripts/nvshmem_device.sh GCLAUNCH SRC.cu OUT.cubin     builds OUT.cubin
#   scripts/nvshmem_device.sh GCLAUNCH --where              only finds NVSHMEM
# GCLAUNCH: the gclaunch tool (build/tools/gclaunch). Where NVSHMEM is, `GCLAUNCH info` says -- the
# host library it opens (GCL_NVSHMEM_PATH, else the dynamic loader, else $NVSHMEM_HOME/lib); the
# device library and headers are the ones beside it (ROOT/lib/libnvshmem_device.a,
# ROOT/include/nvshmem.h), so host and device code come from one NVSHMEM. When the library finds
# none that way (and GCL_NVSHMEM_PATH is unset), the pip wheel nvidia-nvshmem-cu13 is asked for
# through Python's import system (`import nvidia.nvshmem`) of $GCL_PYTHON, python3, or the GPU
# image's /opt/torch/.venv/bin/python3.
# On success prints one line on stdout, GCL_NVSHMEM_PATH=<the host library>, for the caller to
# export (its program must open the same library). Exit 77 with "SKIP: why" on stdout when there
# is no NVSHMEM or no nvcc; 1 when the build fails; 2 for a usage error.
# Environment: GCL_NVSHMEM_ARCH (the sm, default: the device's by nvidia-smi, else 90), CUDA_PATH.
usage() { echo "usage: scripts/nvshmem_device.sh GCLAUNCH (SRC.cu OUT.cubin | --where)" >&2; exit 2; }
[ $# -ge 2 ] || usage
gcl=$1 src=$2 out=${3:-}
[ -x "$gcl" ] || { echo "scripts/nvshmem_device.sh: $gcl is not the gclaunch tool" >&2; exit 2; }
[ "$src" = --where ] || [ -n "$out" ] || usage
skip() { echo "SKIP: $*"; exit 77; }

line=$("$gcl" info 2>/dev/null | sed -n 's/^nvshmem: *//p')
host=$(echo "$line" | sed -n 's/^\(.*libnvshmem_host\.so[.0-9]*\), version .*/\1/p')
if [ -z "$host" ] && [ -z "${GCL_NVSHMEM_PATH:-}" ]; then
  for py in "${GCL_PYTHON:-}" python3 /opt/torch/.venv/bin/python3; do
    [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 || continue
    lib=$("$py" -c 'import importlib.util as u, os
try:
    s = u.find_spec("nvidia.nvshmem")
except ImportError:
    s = None
dirs = list(s.submodule_search_locations or []) if s else []
libs = [os.path.join(d, "lib", "libnvshmem_host.so.3") for d in dirs]
print(next((f for f in libs if os.path.isfile(f)), ""))' 2>/dev/null) && [ -n "$lib" ] && { GCL_NVSHMEM_PATH=$lib; export GCL_NVSHMEM_PATH; break; }
  done
fi
[ -n "$host" ] || line=$("$gcl" info 2>/dev/null | sed -n 's/^nvshmem: *//p')
host=$(echo "$line" | sed -n 's/^\(.*libnvshmem_host\.so[.0-9]*\), version .*/\1/p')
[ -n "$host" ] || skip "no usable NVSHMEM host library (gclaunch info: ${line:-nothing}); set" \
  "GCL_NVSHMEM_PATH or NVSHMEM_HOME, or pip install nvidia-nvshmem-cu13"
root=$(cd "$(dirname "$host")/.." && pwd -P)
for f in lib/libnvshmem_device.a include/nvshmem.h; do
  [ -f "$root/$f" ] || skip "NVSHMEM at $root (from gclaunch info) has no $f beside its host library"
done
echo "NVSHMEM: $line; root $root" >&2
[ "$src" = --where ] && { echo "GCL_NVSHMEM_PATH=$host"; exit 0; }

nvcc=$(command -v nvcc || echo "${CUDA_PATH:-/usr/local/cuda}/bin/nvcc")
[ -x "$nvcc" ] || skip "no nvcc to build $src"
[ -f "$src" ] || { echo "scripts/nvshmem_device.sh: no $src" >&2; exit 2; }
arch=${GCL_NVSHMEM_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)}
arch=${arch:-90}
obj=$(mktemp "${TMPDIR:-/tmp}/gcl-nvshmem-XXXXXX.o") || exit 1
trap 'rm -f "$obj"' EXIT
"$nvcc" -arch=sm_$arch -rdc=true -dc -I"$root/include" "$src" -o "$obj" &&
  "$nvcc" -arch=sm_$arch -dlink -cubin "$obj" "$root/lib/libnvshmem_device.a" -o "$out" ||
  { echo "FAIL: building $src against NVSHMEM at $root (sm_$arch)" >&2; exit 1; }
echo "built $out: sm_$arch, $(wc -c <"$out") bytes, device-linked with $root/lib/libnvshmem_device.a" >&2
echo "GCL_NVSHMEM_PATH=$host"
