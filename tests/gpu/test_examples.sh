#!/bin/sh
# The C examples of the README and docs/, run on a GPU: each must exit 0 (they verify their own results against
# the host). Exits 77 (skipped) without a usable GPU, 1 under GCL_REQUIRE_GPU=1 then.
#   test_examples.sh BUILD_DIR      (ctest runs it in the build directory: ".")
b=${1:-.}
if ! "$b/tools/gclaunch" info 2>&1 | grep -q "^  \[0\] .*sm_"; then
  if [ "${GCL_REQUIRE_GPU:-0}" = 1 ]; then echo "FAILED: GCL_REQUIRE_GPU=1 and no usable GPU"; exit 1; fi
  echo "SKIP: no usable GPU"; exit 77
fi
failed=0
one() { # one EXAMPLE ARGS...
  e=$1; shift
  if [ ! -x "$b/examples/$e" ]; then echo "FAIL: $e was not built"; failed=1; return; fi
  out=$("$b/examples/$e" "$@" 2>&1); rc=$?
  echo "$out" | tail -3
  if [ $rc = 0 ]; then echo "ok: $e"; else echo "FAIL: $e exit $rc"; failed=1; fi
}
one example_launch_scalars "$b/kernels/smoke.sm_90.cubin"
one example_dlpack_offsets "$b/kernels/smoke.sm_90.cubin"
one example_megakernel_tmaps "$b/kernels/megakernel.sm_90.cubin"
one example_persistent "$b/kernels/persistent.sm_90.cubin"
one example_tma_tile "$b/kernels/tma_tile.sm_90.cubin"
# Every GPU, one PE each (two PEs sharing the GPU when there is one). Where NVSHMEM is:
# scripts/nvshmem_device.sh --where (gclaunch info; the pip wheel by import when GCL_NVSHMEM_PATH
# is unset), as for every NVSHMEM test.
nv=$(sh "$(dirname "$0")/../../scripts/nvshmem_device.sh" "$b/tools/gclaunch" --where 2>/dev/null)
if [ $? -eq 0 ]; then
  (export "$nv"; one example_nvshmem_gather "$b/kernels/tma_gather.sm_90.cubin"; exit $failed) || failed=1
else
  echo "not run: example_nvshmem_gather (${nv#SKIP: })"
fi
exit $failed
