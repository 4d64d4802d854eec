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
expect "unknown kernel lists the kernels there" 1 "no kernel 'nokernel' (1 kernel)" -- \
  "$cubin" nokernel --grid 1 --block 1 --arg f32:1
expect "unknown kernel, closest names first" 1 "kernels there, closest first:
    cfg_add" -- "$kdir/launchcfg.sm_90.cubin" cfg_ad --grid 1 --block 1 --arg buf:u32:1
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
# Field specs (--arg PATH=SPEC) into the globals struct of megakernel_globals_16 (kernels/megakernel.cu).
mega="$kdir/megakernel.sm_90.cubin megakernel_globals_16 --grid 16 --block 32"
gsig="grid_constant struct{tensormap[16] maps, const void* work, u32 n_work} g"
expect "fields: every leaf set, no GPU" 2 "no GPU to run on" -- $mega --signature "$gsig" \
  --arg "g.maps=tmap:a,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b:box=16x16" --arg g.work=buf:u8:640 \
  --arg g.n_work=u32:16 --buffer a=buf:f32:64x64@4=rand --buffer b=buf:f32:64x64
expect "fields: one map per element spec" 2 "no GPU to run on" -- $mega --signature "$gsig" \
  --arg "g.maps[0]=tmap:a:box=16x16" --arg "g.maps[1]=tmap:b:box=16x16:store=1" \
  --arg "g.maps[2]=hex:$(printf '%0256d' 0)" --arg g.work=buf:u8:640 --arg g.n_work=u32:16 \
  --buffer a=buf:f32:64x64 --buffer b=buf:f32:64x64 --arg "g.maps[3]=tmap:a:box=16x16" \
  --arg "g.maps[4]=tmap:a:box=16x16" --arg "g.maps[5]=tmap:a:box=16x16" --arg "g.maps[6]=tmap:a:box=16x16" \
  --arg "g.maps[7]=tmap:a:box=16x16" --arg "g.maps[8]=tmap:a:box=16x16" --arg "g.maps[9]=tmap:a:box=16x16" \
  --arg "g.maps[10]=tmap:a:box=16x16" --arg "g.maps[11]=tmap:a:box=16x16" --arg "g.maps[12]=tmap:a:box=16x16" \
  --arg "g.maps[13]=tmap:a:box=16x16" --arg "g.maps[14]=tmap:a:box=16x16" --arg "g.maps[15]=tmap:a:box=16x16"
expect "fields: the first unset leaf by path" 2 "field 'g.maps[1]' was never set" -- $mega \
  --signature "$gsig" --arg "g.maps[0]=tmap:a:box=16x16" --arg g.work=buf:u8:640 \
  --arg g.n_work=u32:16 --buffer a=buf:f32:64x64
expect "fields: index out of range, with the column" 2 "path 'g.maps[16]', col 8: index 16 out of range" -- \
  $mega --signature "$gsig" --arg "g.maps[16]=tmap:a:box=16x16" --buffer a=buf:f32:64x64
expect "fields: scalar type" 2 "--arg 2 'g.n_work=f32:16': field 'g.n_work' is u32, the argument is f32" -- \
  $mega --signature "$gsig" --arg "g.maps=tmap:a:box=16x16" --arg g.n_work=f32:16 \
  --arg g.work=buf:u8:64 --buffer a=buf:f32:64x64
expect "fields: unknown member" 2 "no member 'nwork' in 'g'" -- $mega --signature "$gsig" \
  --arg g.nwork=u32:1
expect "fields: a tmap list against the array" 2 "field 'g.maps' holds 16 tensor maps, 2 buffers listed" -- \
  $mega --signature "$gsig" --arg "g.maps=tmap:a,a:box=16x16" --arg g.work=buf:u8:64 \
  --arg g.n_work=u32:1 --buffer a=buf:f32:64x64
expect "fields and positional specs together" 2 "so 0 positional --arg are needed, 1 given" -- \
  $mega --signature "$gsig" --arg g.n_work=u32:1 --arg u32:1
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
maps4="$kdir/echo.sm_90.cubin echo_maps4 --grid 1 --block 1 --signature"
m4sig="grid_constant tensormap[4] m, f32 f, u8* out"
expect "valid tmap, no GPU" 2 "no GPU" -- \
  $maps4 "$m4sig" --arg tmap:a,b,a,b:box=16x16 --arg f32:1 --arg out=buf:u8:1024 \
  --buffer a=buf:f32:64x64=iota --buffer b=buf:f32:64x64
expect "tmap list against tensormap[4]" 2 \
  "--arg 1 'tmap:a,b:box=16x16': parameter 0 'm' holds 4 tensor maps, 2 buffers listed" -- \
  $maps4 "$m4sig" --arg tmap:a,b:box=16x16 --arg f32:1 --arg out=buf:u8:1024 \
  --buffer a=buf:f32:64x64 --buffer b=buf:f32:64x64
expect "signature against the module (a tensormap[2] is not saxpy's)" 1 \
  "--signature declares 2 parameters, kernel 'saxpy' has 4 in '$cubin' (sm_90)" -- \
  $saxpy --signature "$msig" --arg tmap:a:box=16 --arg u32:1 --buffer a=buf:f32:64
expect "duplicate buffer name" 2 "the name 'a' is taken" -- \
  $saxpy --arg f32:2 --arg a=buf:f32:16 --arg a=buf:f32:16 --arg u64:16
expect "missing input file" 2 "--arg 2: cannot read '$tmp/none.bin'" -- \
  $saxpy --arg f32:2 --arg "buf:f32:16=@$tmp/none.bin" --arg buf:f32:16 --arg u64:16
head -c 60 /dev/zero >"$tmp/60.bin"
expect "input file of the wrong size" 2 "has 60 bytes, the view has 64 (16 x 4)" -- \
  $saxpy --arg f32:2 --arg "buf:f32:16=@$tmp/60.bin" --arg buf:f32:16 --arg u64:16
expect "--out of an unknown buffer" 2 "no buffer argument is named 'z'" -- \
  $saxpy --arg f32:2 --arg buf:f32:16 --arg buf:f32:16 --arg u64:16 --out "z=$tmp/z.bin"
# Checked against the module itself before "no GPU" (issue 17).
expect "parameter size against the cubin's records" 1 \
  "kernel 'saxpy' in '$cubin' (sm_90): parameter 3 'n': declared offset 24 size 4, kernel has offset 24 size 8" -- \
  $saxpy --signature "f32 a, const f32* x, f32* y, u32 n" $four
expect "parameter count against the cubin's records" 1 \
  "--signature declares 3 parameters, kernel 'saxpy' has 4" -- \
  $saxpy --signature "f32 a, const f32* x, f32* y" --arg f32:2 --arg buf:f32:16 --arg buf:f32:16
printf 'not a module\n' >"$tmp/text.bin"
expect "a file that is not CUDA" 1 "not a cubin (ELF), fatbin (magic 0xba55ed50) or PTX" -- \
  "$tmp/text.bin" saxpy --grid 1 --block 1 $four
expect "a host program without device code" 1 "has no .nv_fatbin or __nv_relfatbin section" -- \
  "$gclaunch" saxpy --grid 1 --block 1 $four
expect "a cubin for another architecture" 1 "is a cubin for sm_90; it cannot run on sm_100 (--arch)" -- \
  $saxpy --arch sm_100 $four
expect "a fatbin without an entry for --arch" 1 "fatbin: no entry usable on sm_80" -- \
  "$kdir/smoke.fatbin" saxpy --grid 4 --block 256 --arch sm_80 $four
expect "a fatbin's entry for --arch, no GPU" 2 "checked against '$kdir/smoke.fatbin' for sm_90 (--arch)" -- \
  "$kdir/smoke.fatbin" saxpy --grid 4 --block 256 --arch sm_90 $four
expect "PTX laid out for its .target, no GPU" 2 "for sm_90 (the module's own)" -- \
  "$kdir/smoke.compute_90.ptx" saxpy --grid 4 --block 256 --signature "$sig" $four
expect "PTX parameter sizes" 1 "parameter 3 'n': declared offset 24 size 4, kernel has offset 24 size 8" -- \
  "$kdir/smoke.compute_90.ptx" saxpy --grid 4 --block 256 --signature "f32 a, ptr x, ptr y, u32 n" $four
cfg="$kdir/launchcfg.sm_90.cubin"
expect "block over the kernel's max threads" 1 \
  "--block 256,1,1: 256 threads, kernel 'cfg_bounded' allows at most 128 per block" -- \
  "$cfg" cfg_bounded --grid 1 --block 256 --arg buf:u32:256
expect "block within the kernel's max threads" 2 "no GPU" -- \
  "$cfg" cfg_bounded --grid 1 --block 128 --arg buf:u32:128
# .reqntid (a PTX directive; cubins carry it as EIATTR_REQNTID): the block must be exactly that.
sed 's/^)$/)\n.reqntid 64, 2, 1/' "$kdir/smoke.compute_90.ptx" >"$tmp/reqntid.ptx"
expect "block against .reqntid" 1 "--block 128,1,1: kernel 'saxpy' requires exactly 64,2,1 threads (reqntid in '$tmp/reqntid.ptx')" -- \
  "$tmp/reqntid.ptx" saxpy --grid 4 --block 128 $four
expect "block equal to .reqntid" 2 "no GPU" -- "$tmp/reqntid.ptx" saxpy --grid 4 --block 64,2 $four
# PTX for another .target is laid out for it (sm_100: a first 128-aligned parameter at 0).
sed 's/^\.target sm_90$/.target sm_100/' "$kdir/echo.compute_90.ptx" >"$tmp/echo100.ptx"
expect "PTX .target sm_100 laid out for sm_100, no GPU" 2 "for sm_100 (the module's own)" -- \
  "$tmp/echo100.ptx" echo_maps4 --grid 1 --block 1 --signature "$m4sig" --arg tmap:a:box=16x16 \
  --arg f32:1 --arg out=buf:u8:1024 --buffer a=buf:f32:64x64
expect "block over 1024 threads" 1 "--block 64,32,1: 2048 threads" -- \
  "$cfg" cfg_add --grid 1 --block 64,32 --arg buf:u32:1 --arg u32:1
expect "block z over 64" 1 "--block 1,1,65: dimension 2 is 65, at most 64" -- \
  "$cfg" cfg_add --grid 1 --block 1,1,65 --arg buf:u32:1 --arg u32:1
expect "cluster that does not divide the grid" 1 "--cluster 2,1,1: dimension 0 (2) does not divide --grid's (3)" -- \
  "$cfg" cfg_cluster --grid 3 --block 32 --cluster 2 --arg buf:u32:3
expect "cluster that divides the grid" 2 "no GPU" -- \
  "$cfg" cfg_cluster --grid 4 --block 32 --cluster 2 --arg buf:u32:4
expect "shared memory over the architecture's limit" 1 \
  "--smem 232449: with the kernel's 0 bytes of static shared memory that is 232449 bytes, more than the 232448 bytes a block can have on sm_90" -- \
  "$cfg" cfg_smem --grid 1 --block 32 --smem 232449 --arg buf:u32:1 --arg u32:1
expect "shared memory at the architecture's limit" 2 "no GPU" -- \
  "$cfg" cfg_smem --grid 1 --block 32 --smem 232448 --arg buf:u32:1 --arg u32:1
expect "grid 0 refused" 2 "--grid '0'" -- "$cfg" cfg_add --grid 0 --block 1 --arg buf:u32:1 --arg u32:1
expect "unknown option" 2 "unknown option '--frobnicate'" -- $saxpy $four --frobnicate 1
expect "unknown option at the end" 2 "unknown option '--frobnicate'" -- $saxpy $four --frobnicate
# CUDA source through NVRTC (no GPU needed): laid out for --arch, not a fixed sm_90. On sm_100 a
# first tensor map sits at offset 0, so tensormap[255] and 16 more bytes fit in 32,764; on sm_90
# it sits at 112 and the same parameters end at 32,768.
cat >"$tmp/maps255.cu" <<'CU'
struct alignas(128) TM { unsigned long long o[16]; };
struct Maps255 { TM m[255]; };
extern "C" __global__ void k255(const __grid_constant__ Maps255 maps, unsigned long long a,
                                unsigned long long *out) { out[0] = maps.m[a % 255].o[0]; }
template <int N> __global__ void tk(float *p) { p[threadIdx.x] = N; }
template __global__ void tk<3>(float *);
CU
sig255="grid_constant tensormap[255] maps, u64 a, u64* out"
a255="--arg tmap:t:box=16 --arg u64:1 --arg buf:u64:1 --buffer t=buf:f32:64"
if "$gclaunch" info 2>/dev/null | grep -q "^nvrtc: .*version"; then
  expect "sm_100 kernel with tensormap[255] + 16 bytes (NVRTC), no GPU" 2 "for sm_100 (--arch)" -- \
    "$tmp/maps255.cu" k255 --grid 1 --block 1 --arch sm_100 --signature "$sig255" $a255
  expect "the same parameters on sm_90 pass the limit" 2 "--signature '$sig255' on sm_90" -- \
    "$tmp/maps255.cu" k255 --grid 1 --block 1 --arch sm_90 --signature "$sig255" $a255
  if "$gclaunch" inspect "$tmp/maps255.cu" --json 2>/dev/null | grep -q '"demangled": "void tk<3>(float\*)"'; then
    expect "a template kernel by its demangled name" 2 "no GPU" -- \
      "$tmp/maps255.cu" 'tk<3>' --grid 1 --block 32 --arg buf:f32:32
  else echo "FAIL: inspect of CUDA source does not demangle tk<3>"; failed=1; fi
else echo "skip: NVRTC not found: the .cu checks did not run"; fi

expect "--grid is required" 2 "--grid is required" -- "$cubin" saxpy --block 1 --arg f32:1
expect "malformed --block" 2 "--block '0,1'" -- "$cubin" saxpy --grid 1 --block 0,1
expect "--help" 0 "usage: gclaunch run MODULE KERNEL" -- --help

# Habits of every subcommand: --help and `gclaunch help CMD` exit 0; info --json is JSON.
for c in info inspect run demo; do
  "$gclaunch" $c --help >"$tmp/help" 2>&1 && grep -q "usage: gclaunch $c" "$tmp/help" &&
    "$gclaunch" help $c >"$tmp/help2" 2>&1 && cmp -s "$tmp/help" "$tmp/help2" &&
    echo "ok: $c --help and help $c" || { echo "FAIL: $c --help / help $c"; cat "$tmp/help"; failed=1; }
done
"$gclaunch" help >"$tmp/help" 2>&1 && grep -q "^  inspect " "$tmp/help" && echo "ok: help" ||
  { echo "FAIL: gclaunch help"; failed=1; }
"$gclaunch" info --frobnicate >"$tmp/out" 2>&1
[ $? = 2 ] && grep -q "unknown option '--frobnicate'" "$tmp/out" && echo "ok: info --frobnicate" ||
  { echo "FAIL: info --frobnicate"; cat "$tmp/out"; failed=1; }
"$gclaunch" info --json >"$tmp/info.json" 2>"$tmp/info.err"
if [ $? = 0 ] && command -v python3 >/dev/null && python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["driver"]["found"] is False and o["driver"]["status"] == "GCL_ERROR_NO_DRIVER", o
assert o["devices"] == [] and "found" in o["nvrtc"] and o["gclaunch"], o
' "$tmp/info.json"; then echo "ok: info --json without a driver"
else echo "FAIL: info --json"; cat "$tmp/info.json" "$tmp/info.err"; failed=1; fi

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
