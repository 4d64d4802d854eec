#!/bin/sh
# The PTX reader is linear in parameters and kernels (issue 50): 200,000 parameters of one
# kernel (refused: too large for the parameter space), the same with a duplicate name at the
# end (refused by name: the duplicate check), and 200,000 kernels (read). Before the fix the
# reader scanned the list for every name: 100k parameters took 18 s, 40k kernels 12.5 s, so
# each 200k case took minutes; after it each takes about a second. No timed assertion: each runs
# under `timeout 60`, which only a quadratic reader reaches.
#   ptx_scale.sh GCLAUNCH
g=$1
export GCL_LIBCUDA=/nonexistent/libcuda.so.1 GCL_LIBNVRTC=/nonexistent/libnvrtc.so
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-ptxscale.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
check() { # NAME RC PATTERN FILE
  timeout 60 "$g" inspect "$4" >"$tmp/out" 2>&1
  rc=$?
  if [ $rc -eq 124 ]; then echo "FAIL: $1: still running after 60 s (quadratic)"; failed=1
  elif [ $rc -ne "$2" ]; then echo "FAIL: $1: exit $rc, expected $2: $(tail -2 "$tmp/out")"; failed=1
  elif ! grep -q -- "$3" "$tmp/out"; then echo "FAIL: $1: no '$3' in: $(tail -2 "$tmp/out")"; failed=1
  else echo "ok: $1"
  fi
}
python3 - "$tmp" <<'PY'
import sys
d, n = sys.argv[1], 200000
head = ".version 8.5\n.target sm_90\n.address_size 64\n"
params = ",\n".join(".param .u32 p%d" % i for i in range(n))
open(d + "/params.ptx", "w").write(head + ".visible .entry k(\n" + params + "\n) { ret; }\n")
open(d + "/dup.ptx", "w").write(head + ".visible .entry k(\n" + params + ",\n.param .u32 p0\n) { ret; }\n")
open(d + "/kernels.ptx", "w").write(head + "".join(
    ".visible .entry k%d(.param .u32 a) { ret; }\n" % i for i in range(n)))
PY
check "200k parameters" 1 "parameters need 800000 bytes on sm_90" "$tmp/params.ptx"
check "200k parameters + a duplicate" 1 "parameter 200000: a parameter of that name was declared before" "$tmp/dup.ptx"
check "200k kernels" 0 "ptx, offsets for sm_90, 200000 kernels" "$tmp/kernels.ptx"
[ $failed -eq 0 ] && echo "ptx_scale.sh: all passed"
exit $failed
