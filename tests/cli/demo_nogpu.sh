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
# --row-align, --order, --l2: the plan says what they chose; bad values are refused with the usage.
out=$("$1" demo --tensors 8 --mib 8 --row-align 16 --order interleave --l2 256) || fail "ring options: exit $?"
echo "$out" | grep -q "work interleaved over the tensors; L2 promotion 256 B" || fail "ring line: $out"
echo "$out" | grep -Eq "sectors:  rows start at multiples of 16 bytes: .* 9[0-9]\.[0-9]% of them view bytes" || fail "16-byte rows: $out"
out=$("$1" demo --tensors 8 --mib 8) || fail "default: exit $?"
echo "$out" | grep -q "rows start at multiples of 256 bytes: .* 99\.[0-9]% of them view bytes" || fail "default rows: $out"
for bad in "--row-align 48" "--row-align 8" "--row-align 512" "--order random" "--l2 32" "--l2"; do
  err=$("$1" demo $bad 2>&1) && fail "$bad accepted"
  echo "$err" | grep -q "usage: gclaunch demo" || fail "$bad: $err"
done
echo "ok: --row-align, --order, --l2"
# The ring: tuned on the device by default; either option given turns the tune off.
out=$("$1" demo --tensors 8 --mib 8) || fail "default ring: exit $?"
echo "$out" | grep -q "^ring:     tuned on the device" || fail "default ring not tuned: $out"
out=$("$1" demo --tensors 8 --mib 8 --stages 8) || fail "--stages 8: exit $?"
echo "$out" | grep -q "^ring:     8 stages of 16 KiB per block (dynamic shared memory), 2 one-warp blocks" || fail "--stages 8: $out"
out=$("$1" demo --tensors 8 --mib 8 --blocks-per-sm 1) || fail "--blocks-per-sm 1: exit $?"
echo "$out" | grep -q "^ring:     3 stages of 16 KiB per block (dynamic shared memory), 1 one-warp blocks" || fail "--blocks-per-sm 1: $out"
echo "ok: the ring's tune and its overrides"
