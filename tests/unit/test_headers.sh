#!/bin/sh
# The public headers compile on their own, warning-free, as C11 and as C++17 (-Wall -Wextra
# -Wpedantic -Werror), in every include order, with and without the system DLPack header: the
# umbrella gclaunch.h, each layer header alone (core.h, runtime.h, tensormap.h, ffi.h) and each area header
# alone (status.h ... image.h under core.h, context.h ... multigpu.h under runtime.h); and every
# public header stays under 700 lines (a reader's sitting: issue 56).
#   test_headers.sh CC CXX INCLUDE_DIR      (exit 77, skipped, if CC or CXX is not found)
cc=$1 cxx=$2 inc=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-headers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0

# A translation unit that includes the headers in a given order and uses a few declarations of
# each layer it includes, so the compiler sees the types, not only the preprocessor.
#   unit FILE LAYERS INCLUDE...   LAYERS: any of core, runtime, ffi joined by '+'
unit() {
  f=$1 layers=$2; shift 2
  : >"$f"
  for h in "$@"; do echo "#include <$h>" >>"$f"; done
  cat >>"$f" <<'C'
int gcl_headers_probe(void);
int gcl_headers_probe(void) {
  static DLTensor t;
  static gcl_tensormap_options o;
  static gcl_param_info p;
  gcl_status (*parse)(const char *, gcl_signature **) = gcl_signature_parse;
  int n = (int)sizeof t + (int)sizeof o + (int)sizeof p + (parse != 0) +
          (int)sizeof(DLManagedTensorVersioned) + (int)GCL_STATUS_COUNT + (int)GCL_OK;
C
  case "+$layers+" in *+runtime+*) cat >>"$f" <<'C'
  static gcl_launch_config c;
  gcl_status (*launch)(gcl_kernel *, const gcl_launch_config *, const gcl_args *) = gcl_launch;
  n += (int)sizeof c + (launch != 0);
C
  esac
  case "+$layers+" in *+tensormap+*) cat >>"$f" <<'C'
  static gcl_tensormap_slots at;
  static gcl_tensormap_source src;
  gcl_status (*set)(gcl_context *, const gcl_tensormap_slots *, const gcl_tensormap_source *,
                    const gcl_tensormap_options *, size_t) = gcl_tensormaps_set;
  n += (int)sizeof at + (int)sizeof src + (set != 0);
C
  esac
  case "+$layers+" in *+ffi+*) cat >>"$f" <<'C'
  gcl_status (*ffi)(gcl_args *, const gcl_field *, const struct _ffi_type *, const void *) =
      gcl_args_set_field_ffi;
  n += (ffi != 0);
C
  esac
  echo "  return n;" >>"$f"
  echo "}" >>"$f"
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
all=core+runtime+tensormap+ffi
# the umbrella, each layer header alone (it includes what it builds on), and mixed orders
for spec in "$all:gclaunch/gclaunch.h" "$all:gclaunch/dlpack.h gclaunch/gclaunch.h" \
            "$all:gclaunch/gclaunch.h gclaunch/dlpack.h gclaunch/gclaunch.h" \
            "core:gclaunch/core.h" "core+runtime+tensormap:gclaunch/runtime.h" "core+ffi:gclaunch/ffi.h" \
            "core+runtime+tensormap:gclaunch/tensormap.h" \
            "core+runtime+tensormap:gclaunch/tensormap.h gclaunch/runtime.h" \
            "$all:gclaunch/ffi.h gclaunch/runtime.h gclaunch/core.h gclaunch/gclaunch.h" \
            "$all:gclaunch/runtime.h gclaunch/gclaunch.h gclaunch/ffi.h"; do
  layers=${spec%%:*} order=${spec#*:}
  src=$tmp/unit.c
  unit "$src" "$layers" $order
  check "C11: $order" "$cc" $cw
  check "C11 without the system dlpack.h: $order" "$cc" $cw -DGCL_NO_SYSTEM_DLPACK
  check "C++17: $order" "$cxx" $xw
  check "C++17 without the system dlpack.h: $order" "$cxx" $xw -DGCL_NO_SYSTEM_DLPACK
done
if [ -f /usr/include/dlpack/dlpack.h ]; then # the system header first, then ours
  src=$tmp/unit.c
  unit "$src" "$all" dlpack/dlpack.h gclaunch/gclaunch.h
  check "C11: system dlpack/dlpack.h first" "$cc" $cw
  check "C++17: system dlpack/dlpack.h first" "$cxx" $xw
fi
# Each area header alone: it includes what it builds on.
for h in status signature layout args field image context module launch stream graph multigpu; do
  src=$tmp/area.c
  printf '#include <gclaunch/%s.h>\nint gcl_headers_area;\n' "$h" >"$src"
  check "C11: gclaunch/$h.h alone" "$cc" $cw
  check "C++17: gclaunch/$h.h alone" "$cxx" $xw
done
for f in "$inc"/gclaunch/*.h; do
  n=$(wc -l <"$f")
  if [ "$n" -ge 700 ]; then echo "FAIL: $(basename "$f") has $n lines (700 or more: split it by area)"; failed=1; fi
done
echo "ok: every public header under 700 lines (longest: $(wc -l "$inc"/gclaunch/*.h | grep -v total | sort -n | tail -1))"
# The umbrella declares nothing itself: every function lives in the header of its layer.
if grep -q '^GCL_API' "$inc/gclaunch/gclaunch.h"; then
  echo "FAIL: gclaunch.h declares functions itself (they belong in the area and layer headers)"
  failed=1
else
  echo "ok: gclaunch.h only includes the layer headers"
fi
exit $failed
