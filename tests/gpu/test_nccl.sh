#!/bin/sh
# NCCL's device API on the GPU: finds the NCCL libraries this machine has -- the python3
# environment's nvidia-nccl wheel (site-packages/nvidia/nccl/lib/libnccl.so.2) and the system's
# (ldconfig) -- and runs tests/gpu/test_nccl_devcomm.c with the first as GCL_NCCL_LIB and, when
# it differs, the second as GCL_NCCL_OTHER_LIB (the refusal of another layout).
#   test_nccl.sh GPU_NCCL_EXE
# No library: skipped (77) saying why (also under GCL_REQUIRE_GPU=1: NCCL is optional). GCL_NCCL_LIB
# set by the caller wins. NVLink multicast stays off (NCCL_NVLS_ENABLE=0).
exe=$1
wheel=
for py in "${GCL_PYTHON:-}" python3 /opt/torch/.venv/bin/python3; do
  [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 || continue
  wheel=$("$py" -c 'import nvidia.nccl as m, os
print(next(os.path.join(p, "lib", "libnccl.so.2") for p in m.__path__ if os.path.isfile(os.path.join(p, "lib", "libnccl.so.2"))))' 2>/dev/null) && break
  wheel=
done
system=$(ldconfig -p 2>/dev/null | sed -n 's/.*libnccl\.so\.2 .*=> //p' | head -1)
lib=${GCL_NCCL_LIB:-${wheel:-$system}}
[ -n "$lib" ] || { echo "SKIP: no NCCL library (no nvidia-nccl wheel for python3, no libnccl.so.2 in ldconfig)"; exit 77; }
other=
[ -n "$system" ] && [ "$(readlink -f "$system")" != "$(readlink -f "$lib")" ] && other=$system
echo "NCCL: GCL_NCCL_LIB=$lib${other:+ GCL_NCCL_OTHER_LIB=$other}"
export GCL_NCCL_LIB="$lib" GCL_NCCL_OTHER_LIB="$other" NCCL_NVLS_ENABLE=0
exec "$exe" --verbose=1
