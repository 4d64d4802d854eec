#!/usr/bin/env bash
# On the GPU image: bench/experiments/nvshmem_probe/run.sh OUTDIR
set -u
out=${1:-/tmp}; cd "$(dirname "$0")"
NV=$(python3 -c 'import nvidia.nvshmem as m, os; print(os.path.dirname(m.__file__) if m.__file__ else list(m.__path__)[0])')
echo "NV=$NV"; ls "$NV" "$NV/lib"
H=$NV/include
grep -n 'NVSHMEMX_INIT_WITH_UNIQUEID\|NVSHMEMX_INIT_WITH_MPI\|define NVSHMEM_VENDOR_MAJOR\|define NVSHMEM_VENDOR_MINOR\|define NVSHMEM_VENDOR_PATCH\|NVSHMEMX_INIT_ATTR_VERSION\|NVSHMEMX_UNIQUEID_ARGS_VERSION\|NVSHMEMX_INIT_ARGS_V2' -r "$H" | head -30
grep -n 'hostlib_init_attr\|set_attr_uniqueid_args\|get_uniqueid\|culibrary_init\|vendor_get_version_info' -r "$H" | head -20
nm -D --defined-only "$NV/lib/libnvshmem_host.so.3" | grep -c ' T '
nm -D --defined-only "$NV/lib/libnvshmem_host.so.3" | grep -E 'uniqueid|hostlib|culibrary|cumodule|version|init_status' 
cat > sz.cu <<'X'
#include <nvshmem.h>
#include <nvshmemx.h>
#include <cstdio>
#include <cstddef>
int main(){ printf("header sizes: uid %zu attr %zu uid_args %zu args_v2 %zu; off args %zu off cuda_device_id %zu; INIT_WITH_UNIQUEID %d\n",
 sizeof(nvshmemx_uniqueid_t), sizeof(nvshmemx_init_attr_t), sizeof(nvshmemx_uniqueid_args_t), sizeof(nvshmemx_init_args_t),
 offsetof(nvshmemx_init_attr_t, args), offsetof(nvshmemx_init_args_t, cuda_device_id), (int)NVSHMEMX_INIT_WITH_UNIQUEID);
 printf("vendor %d.%d.%d\n", NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION, NVSHMEM_VENDOR_PATCH_VERSION); }
X
nvcc -I"$H" sz.cu -o /tmp/sz 2>&1 | tail -5 && /tmp/sz | tee /tmp/sz.txt
flag=$(sed -nE 's/.*INIT_WITH_UNIQUEID ([0-9]+).*/\1/p' /tmp/sz.txt)
nvcc -arch=sm_90 -rdc=true -dc -I"$H" kernel.cu -o /tmp/k.o && nvcc -arch=sm_90 -dlink -cubin /tmp/k.o "$NV/lib/libnvshmem_device.a" -o /tmp/k.cubin && ls -l /tmp/k.cubin
gcc -std=gnu11 -I/usr/local/cuda/include host.c -o /tmp/probe -L/usr/local/cuda/lib64/stubs -lcuda -ldl
export NVSHMEM_DISABLE_NVLS=1 NVSHMEM_REMOTE_TRANSPORT=none
timeout 120 /tmp/probe "$NV/lib/libnvshmem_host.so.3" /tmp/k.cubin "${flag:-1}"; echo "probe exit $?"
