#!/bin/sh
# `gclaunch demo` with the driver made unreachable (GCL_LIBCUDA points nowhere), so this runs the
# same on GPU runners: it must exit 0, say plainly that there is no GPU, and show the kernel's
# layout from the cubin agreeing with the layout engine, and the packed buffer.
# usage: demo_nogpu.sh PATH/TO/gclaunch
GCL_LIBCUDA=/nonexistent/libcuda.so.1
export GCL_LIBCUDA
out=$("$1" demo --tensors 8 --mib 8) || { echo "gclaunch demo exited $?"; echo "$out"; exit 1; }
echo "$out"
fail() { echo "FAIL: $1"; exit 1; }
echo "$out" | grep -q "no GPU -- GCL_ERROR_NO_DRIVER" || fail "no plain no-GPU line"
echo "$out" | grep -q "megakernel_globals_ring_16: 1 parameter, 2288 bytes" || fail "cubin layout missing"
[ "$(echo "$out" | grep -c '(same)')" -eq 1 ] || fail "cubin and layout engine disagree"
echo "$out" | grep -q "param 0 'g': offset 0x0070 size  2176 align 128" || fail "buffer dump"
echo "$out" | grep -q "buffer:   2288 bytes packed for sm_90" || fail "buffer size"
# --devices: parsed before the driver is needed; without a GPU the usual no-GPU view.
out=$("$1" demo --tensors 8 --mib 8 --devices all) || fail "--devices all without a GPU: exit $?"
echo "$out" | grep -q "no GPU -- GCL_ERROR_NO_DRIVER" || fail "--devices all: no plain no-GPU line"
out=$("$1" demo --tensors 8 --mib 8 --devices 0,1) || fail "--devices 0,1 without a GPU: exit $?"
err=$("$1" demo --devices 0,,1 2>&1) && fail "--devices 0,,1 accepted"
echo "$err" | grep -q "devices '0,,1': expected 'all' or device numbers" || fail "--devices 0,,1: $err"
err=$("$1" demo --devices 2,2 2>&1) && fail "--devices 2,2 accepted"
echo "$err" | grep -q "device 2 listed twice" || fail "--devices 2,2: $err"
err=$("$1" demo --devices 2>&1) && fail "--devices without a value accepted"
echo "ok: --devices"
