#!/usr/bin/env bash
# Stages `meson install --destdir` of a build into a temporary directory and builds
# tests/install/consumer.c against the staged install three ways -- pkg-config (shared),
# pkg-config --static, and CMake find_package(gclaunch) -- runs each and checks the output.
#   tests/install/check.sh [BUILD_DIR]     (default: build; GCL_NO_REBUILD=1 installs what is built)
# Prints one "PASS: ..." or "FAIL: ..." line per check and "install: N passed, N failed" at the end;
# exits 1 if any check failed. Needs cc, pkg-config, cmake; no GPU.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd) || { echo "FAIL: no build directory ${1:-build}"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() { echo "install: $passed passed, $failed failed"; exit $((failed > 0)); }

option() { # option NAME: a meson build option's value
  meson introspect "$build" --buildoptions |
    python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]==sys.argv[1]][0])' "$1"
}

# --- stage ---------------------------------------------------------------------------------------
stage=$tmp/stage
norebuild=(); [[ ${GCL_NO_REBUILD:-0} == 1 ]] && norebuild=(--no-rebuild)
if meson install -C "$build" "${norebuild[@]}" --destdir "$stage" >"$tmp/install.log" 2>&1; then
  pass "meson install --destdir into a temporary directory"
else
  cat "$tmp/install.log"; fail "meson install --destdir"; finish
fi
prefix=$(option prefix) libdir=$(option libdir) includedir=$(option includedir)
[[ $libdir == /* ]] || libdir=$prefix/$libdir
[[ $includedir == /* ]] || includedir=$prefix/$includedir
root=$stage$prefix lib=$stage$libdir inc=$stage$includedir
version=$(meson introspect "$build" --projectinfo |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')

for f in "$lib/libgclaunch.so" "$lib/libgclaunch.so.$version" "$lib/libgclaunch.a" \
         "$inc/gclaunch/gclaunch.h" "$inc/gclaunch/core.h" "$inc/gclaunch/runtime.h" "$inc/gclaunch/tensormap.h" \
         "$inc/gclaunch/status.h" "$inc/gclaunch/signature.h" "$inc/gclaunch/layout.h" \
         "$inc/gclaunch/args.h" "$inc/gclaunch/field.h" "$inc/gclaunch/image.h" \
         "$inc/gclaunch/context.h" "$inc/gclaunch/module.h" "$inc/gclaunch/launch.h" \
         "$inc/gclaunch/stream.h" "$inc/gclaunch/graph.h" "$inc/gclaunch/multigpu.h" \
         "$inc/gclaunch/ffi.h" "$inc/gclaunch/dlpack.h" "$inc/gclaunch/tma.cuh" \
         "$inc/gclaunch/tmap_table.cuh" "$inc/gclaunch/gclaunch_tmap_table.cuh" \
         "$lib/pkgconfig/gclaunch.pc" \
         "$root/lib/cmake/gclaunch/gclaunchConfig.cmake" \
         "$root/lib/cmake/gclaunch/gclaunchConfigVersion.cmake" "$root/bin/gclaunch"; do
  if [[ -e $f ]]; then pass "installed ${f#"$stage"}"; else fail "not installed: ${f#"$stage"}"; fi
done
# The kernel-side headers, as a user's kernel includes them: nvcc -I<staged include> only.
nvcc=${CUDA_PATH:-/usr/local/cuda}/bin/nvcc
if [[ -x $nvcc ]]; then
  printf '%s\n' '#include <gclaunch/tmap_table.cuh>' \
    '#include <gclaunch/gclaunch_tmap_table.cuh> // the 0.3 name, forwarding' \
    'extern "C" __global__ void k(const __grid_constant__ gcl_tmap m, float *out) {' \
    '  __shared__ alignas(128) float t[8][32]; __shared__ alignas(8) unsigned long long bar;' \
    '  if (threadIdx.x == 0) { gcl_mbar_init(&bar, 1); gcl_fence_mbar_init();' \
    '    gcl_mbar_expect_tx(&bar, sizeof t); gcl_tma_load_2d(t, &m, 0, 0, &bar); }' \
    '  gcl_mbar_wait(&bar, 0); out[threadIdx.x] = t[0][threadIdx.x % 32]; }' > "$tmp/tma_user.cu"
  if "$nvcc" -std=c++17 -arch=sm_90 -cubin -I"$inc" -o "$tmp/tma_user.cubin" "$tmp/tma_user.cu" \
       >"$tmp/nvcc.log" 2>&1; then
    pass "a kernel including <gclaunch/tmap_table.cuh> and its 0.3 name gclaunch_tmap_table.cuh (and tma.cuh) from the install compiles with nvcc -arch=sm_90"
  else
    cat "$tmp/nvcc.log"; fail "nvcc -I<installed include> on <gclaunch/tmap_table.cuh>"
  fi
fi

# --- the Python package (when the build has it) --------------------------------------------------
# It lands where the interpreter meson built it for reads packages (for prefix /usr/local on Debian:
# /usr/local/lib/python3.X/dist-packages, not meson's lib/python3/dist-packages), imports from the
# staged site-packages with no LD_LIBRARY_PATH (libgclaunch and libffi are linked into the module:
# it needs no library of the install), and `meson install --tags runtime` installs the package's
# Python files with the module.
py=${GCL_PYTHON:-$( [[ -x /usr/bin/python3 ]] && echo /usr/bin/python3 || echo python3)}
if [[ -e $build/python/gclaunch/_gclaunch.abi3.so ]]; then
  ext=$(find "$stage" -name _gclaunch.abi3.so -path '*/gclaunch/*' | head -1)
  site=$(dirname "$(dirname "${ext:-/nonexistent/x/y}")")
  if [[ -n $ext ]] && out=$(cd "$tmp" && env -u LD_LIBRARY_PATH PYTHONPATH="$site" "$py" -c \
       'import gclaunch, os; print(gclaunch.__version__, os.path.dirname(gclaunch.__file__))' 2>&1) &&
     [[ $out == "$version $(dirname "$ext")" ]]; then
    pass "installed the Python package (${ext#"$stage"}) and it imports without LD_LIBRARY_PATH: gclaunch $version"
  else echo "$out"; fail "the staged Python package does not import (${ext:-no _gclaunch.abi3.so})"; fi
  if [[ -n $ext ]]; then
    needed=$(readelf -d "$ext" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | tr '\n' ' ')
    if [[ $needed == *libgclaunch* || $needed == *libffi* ]]; then
      fail "the installed module needs a library of its own: $needed"
    else pass "the installed module carries libgclaunch and libffi (NEEDED: $needed)"; fi
    if readelf -d "$ext" | grep -qE 'R(UN)?PATH'; then
      fail "the installed module has an RPATH/RUNPATH: $(readelf -d "$ext" | grep -E 'R(UN)?PATH')"
    else pass "the installed module has no RPATH/RUNPATH"; fi
    # On the interpreter's own path (prefixes it reads: /usr/local, /usr on Debian).
    if [[ $prefix == /usr/local || $prefix == /usr ]]; then
      if "$py" -c 'import sys, os; sys.exit(os.path.normpath(sys.argv[1]) not in map(os.path.normpath, sys.path))' \
           "${site#"$stage"}"; then pass "${site#"$stage"} is on $py's sys.path"
      else fail "${site#"$stage"} is not on $py's sys.path: $("$py" -c 'import sys; print(sys.path)')"; fi
    fi
  fi
  # `meson install --tags runtime`: the package whole (module, __init__.py, stub, py.typed).
  if meson install -C "$build" --no-rebuild --tags runtime --destdir "$tmp/runtime" \
       >"$tmp/runtime.log" 2>&1; then
    rext=$(find "$tmp/runtime" -name _gclaunch.abi3.so -path '*/gclaunch/*' | head -1)
    rpkg=$(dirname "${rext:-/nonexistent/x}")
    missing=""
    for f in __init__.py __init__.pyi py.typed; do [[ -e $rpkg/$f ]] || missing+=" $f"; done
    if [[ -n $rext && -z $missing ]] && (cd "$tmp" && env -u LD_LIBRARY_PATH \
         PYTHONPATH="$(dirname "$rpkg")" "$py" -c 'import gclaunch' 2>&1); then
      pass "meson install --tags runtime installs the package whole and it imports"
    else fail "meson install --tags runtime: module ${rext:-missing}, missing:${missing:- none}"; fi
  else cat "$tmp/runtime.log"; fail "meson install --tags runtime"; fi
fi

# --- the installed tool: `gclaunch demo` without a GPU reads the installed kernels -----------------
kernels=$stage$prefix/$(option datadir)/gclaunch/kernels
[[ $(option datadir) == /* ]] && kernels=$stage$(option datadir)/gclaunch/kernels
if [[ -r $kernels/megakernel.fatbin && -r $kernels/megakernel.sm_90.cubin ]]; then
  pass "installed the demo's kernels in ${kernels#"$stage"}"
else fail "the demo's kernels are not installed in ${kernels#"$stage"}"; fi
# The driver is made unreachable (no-GPU mode); the tool must name the installed cubin, not the
# build tree's, and show its layout.
# No LD_LIBRARY_PATH and no ldconfig: the tool finds the staged libgclaunch.so by its RUNPATH
# ($ORIGIN/../<libdir>).
runpath=$(readelf -d "$root/bin/gclaunch" | sed -nE 's/.*\(RUNPATH\).*\[(.*)\]/\1/p')
if [[ $runpath == '$ORIGIN/'* && $runpath != *"$build"* && $runpath != *"$src"* ]]; then
  pass "installed gclaunch has RUNPATH $runpath (relative, no build path)"
else fail "installed gclaunch's RUNPATH is '$runpath' (expected \$ORIGIN/..., no build path)"; fi
resolved=$(env -u LD_LIBRARY_PATH ldd "$root/bin/gclaunch" | sed -nE 's/.*libgclaunch\.so[^ ]* => ([^ ]*).*/\1/p')
if [[ $(readlink -f "${resolved:-/nonexistent}") == $(readlink -f "$lib/libgclaunch.so.$version") ]]; then
  pass "installed gclaunch loads the staged ${lib#"$stage"}/libgclaunch.so (ldd, no LD_LIBRARY_PATH)"
else fail "installed gclaunch resolves libgclaunch to '${resolved:-nothing}', not ${lib#"$stage"}"; fi
demo_out=$(cd "$tmp" && env -u GCL_KERNEL_DIR -u LD_LIBRARY_PATH GCL_LIBCUDA=/nonexistent/libcuda.so.1 \
           "$root/bin/gclaunch" demo 2>&1)
demo_rc=$?
real_kernels=$(cd "$kernels" 2>/dev/null && pwd -P)
if [[ $demo_rc == 0 && $demo_out == *"cubin:    $real_kernels/megakernel.sm_90.cubin, sm_90"* &&
      $demo_out == *"param 0: offset 0x"* && $demo_out != *"$build/kernels"* ]]; then
  pass "installed gclaunch demo (no GPU, no LD_LIBRARY_PATH) reads ${kernels#"$stage"} and shows the cubin's layout"
else
  fail "installed gclaunch demo: exit $demo_rc, expected the cubin in $real_kernels:"
  echo "$demo_out" | head -20
fi

# What consumer.c must print: the sm_90 rule of docs/facts.md ("Parameter bases": param base
# 0x210, so the 128-aligned tensormap array lands at 112, not at 0 as in C).
expected="gclaunch $version sm_90
param 0 maps offset 112 size 256 align 128
param 1 src offset 368 size 8 align 8
param 2 dst offset 376 size 8 align 8
param 3 n offset 384 size 8 align 8
param 4 tile offset 392 size 12 align 4
bytes 404"

check_run() { # check_run NAME EXE [ENV...]: runs EXE and compares its output with $expected
  local name=$1 exe=$2; shift 2
  local out
  if ! out=$(env "$@" "$exe" 2>&1); then fail "$name: consumer exited non-zero: $out"; return; fi
  if [[ $out == "$expected" ]]; then pass "$name: consumer prints the sm_90 layout"
  else fail "$name: unexpected output"; diff <(echo "$expected") <(echo "$out"); fi
}

# --- pkg-config ----------------------------------------------------------------------------------
# PKG_CONFIG_SYSROOT_DIR maps the .pc file's /usr/local/... paths into the staging directory.
pc() { PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage pkg-config "$@"; }
if [[ $(pc --modversion gclaunch 2>&1) == "$version" ]]; then pass "pkg-config --modversion gclaunch"
else fail "pkg-config --modversion gclaunch: $(pc --modversion gclaunch 2>&1)"; fi
libs=$(pc --libs gclaunch)
if [[ $libs == *-lffi* ]]; then fail "libffi leaks into pkg-config --libs: $libs"
else pass "libffi is private (pkg-config --libs: $libs)"; fi
static_libs=$(pc --static --libs gclaunch)
if [[ $static_libs == *-lffi* ]]; then pass "pkg-config --static --libs names libffi"
else fail "pkg-config --static --libs lacks -lffi: $static_libs"; fi

cflags=(-std=c11 -Wall -Wextra -Werror)
# shellcheck disable=SC2046
if cc "${cflags[@]}" $(pc --cflags gclaunch) "$here/consumer.c" -o "$tmp/app_pc" $libs 2>"$tmp/cc.log"
then pass "pkg-config: consumer builds"; check_run "pkg-config" "$tmp/app_pc" "LD_LIBRARY_PATH=$lib"
else cat "$tmp/cc.log"; fail "pkg-config: consumer does not build"; fi
# The static archive with --static's private libraries (-l:libgclaunch.a picks the archive).
# shellcheck disable=SC2046
if cc "${cflags[@]}" $(pc --cflags gclaunch) "$here/consumer.c" -o "$tmp/app_pc_static" \
      ${static_libs//-lgclaunch/-l:libgclaunch.a} 2>"$tmp/cc.log"
then pass "pkg-config --static: consumer builds"; check_run "pkg-config --static" "$tmp/app_pc_static"
else cat "$tmp/cc.log"; fail "pkg-config --static: consumer does not build"; fi

# --- CMake ---------------------------------------------------------------------------------------
if cmake -S "$here" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_BUILD_TYPE=Release \
      >"$tmp/cmake.log" 2>&1 && cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1; then
  pass "CMake: find_package(gclaunch) and target_link_libraries(app gclaunch::gclaunch)"
  check_run "CMake gclaunch::gclaunch" "$tmp/cmake/app"
  if [[ -x $tmp/cmake/app_static ]]; then check_run "CMake gclaunch::gclaunch_static" "$tmp/cmake/app_static"
  else fail "CMake: no gclaunch::gclaunch_static target although libgclaunch.a is installed"; fi
  if readelf -d "$tmp/cmake/app" | grep -q 'NEEDED.*libgclaunch.so'; then
    pass "CMake: app links the shared library"
  else fail "CMake: app does not link libgclaunch.so"; fi
  if readelf -d "$tmp/cmake/app" | grep -q 'NEEDED.*libffi'; then
    fail "CMake: app links libffi directly (it should be private to libgclaunch.so)"
  else pass "CMake: libffi stays private (not NEEDED by app)"; fi
else
  cat "$tmp/cmake.log"; fail "CMake: consumer does not configure or build"
fi
# A version the package does not satisfy must be refused.
mkdir -p "$tmp/cmake_ver"
printf 'cmake_minimum_required(VERSION 3.16)\nproject(v C)\nfind_package(gclaunch 99.0 REQUIRED)\n' \
  >"$tmp/cmake_ver/CMakeLists.txt"
if cmake -S "$tmp/cmake_ver" -B "$tmp/cmake_ver/b" -DCMAKE_PREFIX_PATH="$root" >"$tmp/ver.log" 2>&1; then
  fail "CMake: find_package(gclaunch 99.0) was accepted"
elif grep -q 'compatible with requested version' "$tmp/ver.log"; then
  pass "CMake: find_package(gclaunch 99.0) is refused by the version file"
else cat "$tmp/ver.log"; fail "CMake: find_package(gclaunch 99.0) failed for another reason"; fi

finish
