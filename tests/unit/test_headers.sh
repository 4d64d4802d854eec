#!/bin/sh
# The public headers compile on their own, warning-free, as C11 and as C++17 (-Wall -Wextra
# -Wpedantic -Werror), in every include order, with and without the system DLPack header.
#   test_headers.sh CC CXX INCLUDE_DIR      (exit 77, skipped, if CC or CXX is not found)
cc=$1 cxx=$2 inc=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-headers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0

# A translation unit that includes the headers in a given order and uses a few declarations, so
# the compiler sees the types, not only the preprocessor.
unit() { # unit FILE INCLUDE...
  f=$1; shift
  : >"$f"
  for h in "$@"; do echo "#include <$h>" >>"$f"; done
  cat >>"$f" <<'C'
int gcl_headers_probe(void);
int gcl_headers_probe(void) {
  static DLTensor t;
  static gcl_tensormap_options o;
  static gcl_launch_config c;
  static gcl_param_info p;
  gcl_status (*parse)(const char *, gcl_signature **) = gcl_signature_parse;
  return (int)sizeof t + (int)sizeof o + (int)sizeof c + (int)sizeof p + (parse != 0) +
         (int)sizeof(DLManagedTensorVersioned) + (int)GCL_STATUS_COUNT + (int)GCL_OK;
}
C
}

check() { # check NAME COMPILER FLAGS... -- runs the compiler on $src
  name=$1; shift
  if "$@" -fsyntax-only "$src" 2>"$tmp/err"; then echo "ok: $name"
  else echo "FAIL: $name"; head -20 "$tmp/err"; failed=1; fi
}

if ! command -v "$cxx" >/dev/null 2>&1; then echo "no C++ compiler '$cxx': skipped"; exit 77; fi
# A GPU runner that got the test kit (tests/kit/) may have no C compiler either.
if ! command -v "$cc" >/dev/null 2>&1; then echo "no C compiler '$cc': skipped"; exit 77; fi
cw="-std=c11 -Wall -Wextra -Wpedantic -Werror -I$inc"
xw="-std=c++17 -Wall -Wextra -Wpedantic -Werror -x c++ -I$inc"
for order in "gclaunch/gclaunch.h" "gclaunch/dlpack.h gclaunch/gclaunch.h" \
             "gclaunch/gclaunch.h gclaunch/dlpack.h gclaunch/gclaunch.h"; do
  src=$tmp/unit.c
  unit "$src" $order
  check "C11: $order" "$cc" $cw
  check "C11 without the system dlpack.h: $order" "$cc" $cw -DGCL_NO_SYSTEM_DLPACK
  check "C++17: $order" "$cxx" $xw
  check "C++17 without the system dlpack.h: $order" "$cxx" $xw -DGCL_NO_SYSTEM_DLPACK
done
if [ -f /usr/include/dlpack/dlpack.h ]; then # the system header first, then ours
  src=$tmp/unit.c
  unit "$src" dlpack/dlpack.h gclaunch/gclaunch.h
  check "C11: system dlpack/dlpack.h first" "$cc" $cw
  check "C++17: system dlpack/dlpack.h first" "$cxx" $xw
fi
exit $failed
