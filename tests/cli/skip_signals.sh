#!/bin/sh
# A skip is never a pass: a suite whose tests all skipped exits 77, and GCL_REQUIRE_NVRTC=1 /
# GCL_REQUIRE_GPU=1 turn "NVRTC missing" / "no GPU" skips into failures (exit 1, saying why).
# NVRTC and the driver are made unreachable on purpose, so this runs the same on GPU runners.
# usage: skip_signals.sh BUILD_DIR
b=$1
fail() { echo "FAIL: $1"; exit 1; }
expect() { # expect RC DESCRIPTION ENV... -- CMD...: run CMD with ENV, check its exit status
  want=$1 what=$2; shift 2
  out=$(env "$@" 2>&1); rc=$?
  [ "$rc" -eq "$want" ] || { echo "$out" | tail -8; fail "$what: exit $rc, expected $want"; }
  echo "ok: $what: exit $rc"
}
expect 77 "unit_differential without NVRTC" GCL_LIBNVRTC=/nonexistent GCL_REQUIRE_NVRTC=0 "$b/tests/unit_differential"
echo "$out" | grep -q "SKIP: NVRTC not available" || fail "the skip's reason is not printed"
expect 1 "unit_differential without NVRTC, GCL_REQUIRE_NVRTC=1" GCL_LIBNVRTC=/nonexistent GCL_REQUIRE_NVRTC=1 "$b/tests/unit_differential"
echo "$out" | grep -q "GCL_REQUIRE_NVRTC=1, so this is a failure" || fail "the failure does not say why"
expect 77 "gpu_smoke without a driver" GCL_LIBCUDA=/nonexistent GCL_REQUIRE_GPU=0 "$b/tests/gpu_smoke"
echo "$out" | grep -q "no usable device: no CUDA driver" || fail "the skip's reason is not printed"
expect 1 "gpu_smoke without a driver, GCL_REQUIRE_GPU=1" GCL_LIBCUDA=/nonexistent GCL_REQUIRE_GPU=1 "$b/tests/gpu_smoke"
echo "$out" | grep -q "GCL_REQUIRE_GPU=1 and there is no usable device" || fail "the failure does not say why"
