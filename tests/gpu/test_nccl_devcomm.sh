#!/bin/sh
# NCCL's device API on the GPU (issue 54, item 5): runs gpu_nccl_devcomm_run (test_nccl_devcomm.cc)
# against the NCCL library Python's import system finds -- the pip wheel nvidia-nccl-cu13
# (nvidia/nccl/lib/libnccl.so.2) of $GCL_PYTHON, python3 or the GPU image's
# /opt/torch/.venv/bin/python3 -- else the loader's libnccl.so.2 (GCL_NCCL_LIB names one outright).
#   test_nccl_devcomm.sh EXE KERNEL_DIR
# Multicast stays off (NCCL_NVLS_ENABLE=0). Exit 77 (skipped, saying why) without a GPU or NCCL.
exe=$1 kdir=$2
if [ -z "${GCL_NCCL_LIB:-}" ]; then
  for py in "${GCL_PYTHON:-}" python3 /opt/torch/.venv/bin/python3; do
    [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 || continue
    lib=$("$py" -c 'import importlib.util as u, os
s = u.find_spec("nvidia.nccl")
print(next((f for d in (s.submodule_search_locations or []) if s else []
            for f in [os.path.join(d, "lib", "libnccl.so.2")] if os.path.isfile(f)), ""))' 2>/dev/null)
    [ -n "$lib" ] && { GCL_NCCL_LIB=$lib; export GCL_NCCL_LIB; break; }
  done
fi
export GCL_KERNEL_DIR="$kdir" NCCL_NVLS_ENABLE=0
timeout 240 "$exe"
