#!/bin/sh
# `gclaunch run`'s tmap: specs refuse with gcl_tensormap_check's named messages before any driver
# call (issue 36): with no driver at all (GCL_LIBCUDA points nowhere), each description below
# breaks one rule and must exit 2 naming the spec, the buffer and the rule's words.
#   tmap_rules.sh GCLAUNCH
g=$1
export GCL_LIBCUDA=/nonexistent/libcuda.so.1 GCL_LIBNVRTC=/nonexistent/libnvrtc.so
failed=0
# refuses BUFFER TMAP TEXT: exit 2 and TEXT in the message.
refuses() {
  out=$("$g" run /nonexistent.cubin k --grid 1 --block 1 --arg "$1" --arg "$2" 2>&1)
  rc=$?
  if [ $rc -ne 2 ]; then echo "FAIL: '$2' exits $rc: $out"; failed=1; return; fi
  case $out in
    *"'$2': buffer 'a': tensor: "*"$3"*) echo "ok: $2" ;;
    *) echo "FAIL: '$2': message lacks '$3': $out"; failed=1 ;;
  esac
}
refuses a=buf:f32:8x64 tmap:a:box=8x3 "box[0] (dimension 1) = 3 elements of 4 bytes = 12 bytes"
refuses a=buf:f32:8x64 tmap:a:box=8x64:swizzle=128 "exceeds the 128-byte swizzle span"
refuses a=buf:u8:24 tmap:a:box=16:store=1 "store = 1 and dimension 0 (innermost) has 24 elements of 1 bytes = 24 bytes"
refuses a=buf:f16:2x8x8x64 tmap:a:im2col=64x12 "im2col.channels (dimension 3) = 12 elements of 2 bytes = 24 bytes"
refuses a=buf:f16:2x8x8x64 tmap:a:im2col=64x64:lower=3,0:upper=-5,0 "im2col bounding box along W is empty: dimension 2 has size 8, and size + upper[0] - lower[0] = 8 + -5 - 3 = 0; expected at least 1"
refuses a=buf:f16:2x8x8x64 tmap:a:im2col=512x256 "im2col.pixels x channels = 512 x 256 elements of 2 bytes = 262144 bytes"
refuses a=buf:f16:64x64x64x64x64 tmap:a:box=64x8x8x8x8 "the product of floor(box / element stride) = 524288 bytes"
refuses a=buf:i32:8x64 tmap:a:box=8x16:oob=nan "the NaN out-of-bounds fill needs a floating-point type"
exit $failed
