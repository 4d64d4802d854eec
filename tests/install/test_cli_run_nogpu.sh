#!/bin/sh
# gclaunch run without a GPU (the driver is forced missing with GCL_LIBCUDA): every mistake in the
# command line is reported, naming the argument, before the driver is needed; valid command lines
# end with "no GPU" and exit status 2.
#   test_cli_run_nogpu.sh GCLAUNCH KERNEL_DIR
gclaunch=$1 kdir=$2
export GCL_LIBCUDA=/nonexistent/libcuda.so.1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
cubin=$kdir/smoke.sm_90.cubin
saxpy="$cubin saxpy --grid 4 --block 256"

expect() { # expect NAME STATUS TEXT -- ARGS...: gclaunch exits STATUS and stderr+stdout contain TEXT
  name=$1 want=$2 text=$3; shift 4
  "$gclaunch" run "$@" >"$tmp/out" 2>&1
  got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $name: exit $got, expected $want"; cat "$tmp/out"; failed=1
  elif ! grep -qF -- "$text" "$tmp/out"; then
    echo "FAIL: $name: output lacks: $text"; cat "$tmp/out"; failed=1
  else echo "ok: $name"; fi
}

expect "valid arguments, no GPU" 2 "the 4 arguments are valid, but there is no GPU to run on" -- \
  $saxpy --arg f32:2 --arg x=buf:f32:1024@4=iota --arg y=buf:f32:1024=rand --arg u64:1024
expect "the driver's own message" 2 "GCL_ERROR_NO_DRIVER" -- \
  $saxpy --arg f32:2 --arg buf:f32:1024 --arg buf:f32:1024 --arg u64:1024
four="--arg f32:2 --arg buf:f32:1024 --arg buf:f32:1024 --arg u64:1024"
expect "--devices all, no GPU" 2 "the 4 arguments are valid, but there is no GPU to run on" -- \
  $saxpy $four --devices all
expect "--devices 0,1, no GPU" 2 "GCL_ERROR_NO_DRIVER" -- $saxpy $four --devices 0,1
expect "--devices malformed" 2 "--devices '0,,1': expected 'all' or device numbers" -- \
  $saxpy $four --devices 0,,1
expect "--devices repeated" 2 "--devices '1,1': device 1 listed twice" -- $saxpy $four --devices 1,1
expect "--devices out of range" 2 "0 ... 1023" -- $saxpy $four --devices 1024
expect "--devices with --device" 2 "--device and --devices exclude each other" -- \
  $saxpy $four --device 0 --devices all
expect "unknown element type" 2 "--arg 2 'buf:f33:16': unknown element type 'f33'" -- \
  $saxpy --arg f32:2 --arg buf:f33:16 --arg buf:f32:16 --arg u64:16
expect "argument count against the cubin" 2 "kernel 'saxpy' has 4 parameters in" -- \
  $saxpy --arg f32:2 --arg buf:f32:16
expect "size against the cubin" 2 "--arg 4 'u32:16'" -- \
  $saxpy --arg f32:2 --arg buf:f32:16 --arg buf:f32:16 --arg u32:16
expect "unknown kernel" 2 "nokernel" -- \
  "$cubin" nokernel --grid 1 --block 1 --arg f32:1
sig="f32 a, const f32* align(16) x, f32* y, u64 n"
expect "scalar type against the signature" 2 \
  "--arg 4 'i32:16': parameter 3 'n' is u64, the argument is i32" -- \
  $saxpy --signature "$sig" --arg f32:2 --arg buf:f32:16 --arg buf:f32:16 --arg i32:16
expect "offset view against align(16)" 2 "--arg 2 'buf:f32:16@1': parameter 1 'x'" -- \
  $saxpy --signature "$sig" --arg f32:2 --arg buf:f32:16@1 --arg buf:f32:16 --arg u64:16
expect "offset view of 4 elements is 16-byte aligned" 2 "no GPU" -- \
  $saxpy --signature "$sig" --arg f32:2 --arg buf:f32:16@4 --arg buf:f32:16 --arg u64:16
expect "dtype against the signature" 2 "--arg 3 'buf:f64:16'" -- \
  $saxpy --signature "$sig" --arg f32:2 --arg buf:f32:16 --arg buf:f64:16 --arg u64:16
expect "malformed signature" 2 "--signature 'f32 a,'" -- \
  $saxpy --signature "f32 a," --arg f32:2
msig="grid_constant tensormap[2] maps, u32 n"
expect "tmap of an unknown buffer" 2 "--arg 1 'tmap:nope:box=16': no buffer argument is named 'nope'" -- \
  $saxpy --signature "$msig" --arg tmap:nope:box=16 --arg u32:1
expect "tmap box rank against the buffer" 2 "box has 1 sizes, buffer 'a' has rank 2" -- \
  $saxpy --signature "$msig,f32* a" --arg tmap:a:box=16 --arg u32:1 --arg a=buf:f32:64x64
expect "tmap box checked by gcl_tensormap_check" 2 "--arg 1 'tmap:a:box=2x2': buffer 'a':" -- \
  $saxpy --signature "$msig,f32* a" --arg tmap:a:box=2x2 --arg u32:1 --arg a=buf:f32:64x64
im2col="$kdir/im2col.sm_90.cubin im2col_load_4d --grid 1 --block 128 --signature"
isig="grid_constant tensormap map, const void* jobs, u8* out"
iargs="--arg jobs=buf:u8:24 --arg out=buf:u8:16384 --buffer img=buf:f32:2x9x14x64=rand"
expect "valid im2col tmap, no GPU" 2 "the 3 arguments are valid, but there is no GPU" -- \
  $im2col "$isig" --arg "tmap:img:im2col=8x32:lower=-1,-1:upper=-1,-1" $iargs
expect "im2col corner checked by gcl_tensormap_check" 2 \
  "buffer 'img': tensor: im2col.lower[1] (H, dimension 1) = -200: expected -128 ... 127 for rank 4" -- \
  $im2col "$isig" --arg "tmap:img:im2col=8x32:lower=-1,-200" $iargs
expect "valid tmap, no GPU" 2 "no GPU" -- \
  $saxpy --signature "$msig,f32* a,f32* b" --arg tmap:a,b:box=16x16 --arg u32:1 \
  --arg a=buf:f32:64x64=iota --arg b=buf:f32:64x64
expect "duplicate buffer name" 2 "the name 'a' is taken" -- \
  $saxpy --arg f32:2 --arg a=buf:f32:16 --arg a=buf:f32:16 --arg u64:16
expect "missing input file" 2 "--arg 2: cannot read '$tmp/none.bin'" -- \
  $saxpy --arg f32:2 --arg "buf:f32:16=@$tmp/none.bin" --arg buf:f32:16 --arg u64:16
head -c 60 /dev/zero >"$tmp/60.bin"
expect "input file of the wrong size" 2 "has 60 bytes, the view has 64 (16 x 4)" -- \
  $saxpy --arg f32:2 --arg "buf:f32:16=@$tmp/60.bin" --arg buf:f32:16 --arg u64:16
expect "--out of an unknown buffer" 2 "no buffer argument is named 'z'" -- \
  $saxpy --arg f32:2 --arg buf:f32:16 --arg buf:f32:16 --arg u64:16 --out "z=$tmp/z.bin"
expect "--grid is required" 2 "--grid is required" -- "$cubin" saxpy --block 1 --arg f32:1
expect "malformed --block" 2 "--block '0,1'" -- "$cubin" saxpy --grid 1 --block 0,1
expect "--help" 0 "usage: gclaunch run MODULE KERNEL" -- --help

# --json without a GPU: one JSON object that says it did not launch.
"$gclaunch" run $saxpy --json --arg f32:2 --arg buf:f32:16 --arg buf:f32:16 --arg u64:16 \
  >"$tmp/json" 2>/dev/null
if command -v python3 >/dev/null && python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["launched"] is False and o["status"] == "GCL_ERROR_NO_DRIVER" and o["kernel"] == "saxpy", o
' "$tmp/json"; then echo "ok: --json without a GPU"
else echo "FAIL: --json without a GPU"; cat "$tmp/json"; failed=1; fi
exit $failed
