#!/bin/sh
# `gclaunch info` says how each device re-points tensor maps (issue 47): against the fake driver,
# which keeps a map's address where driver 580 does, gclaunch's check proves its patch for every
# interleave mode; with GCL_TMAP_PATCH=0 the driver path and why; --json has the same.
#   info_tmap_path.sh GCLAUNCH LIBFAKECUDA
g=$1
export GCL_LIBCUDA=$2
failed=0
# has TEXT OUTPUT WHAT: TEXT in OUTPUT.
has() {
  case $2 in
    *"$1"*) echo "ok: $3" ;;
    *) echo "FAIL: $3: output lacks '$1':"; echo "$2"; failed=1 ;;
  esac
}
out=$("$g" info 2>&1)
has "tensor-map re-points: patch (interleave none, 16B, 32B) -- 48 of 48 re-points byte-identical to cuTensorMapReplaceAddress" "$out" "patch path"
out=$(GCL_TMAP_PATCH=0 "$g" info 2>&1)
has "tensor-map re-points: driver (cuTensorMapReplaceAddress) -- GCL_TMAP_PATCH=0" "$out" "forced driver path"
out=$("$g" info --json 2>&1)
has '"tensormap_repoint": {"path": "patch", "patched_interleaves": 7, "checks": 48, "mismatches": 0' "$out" "json"
exit $failed
