#!/usr/bin/env bash
# Writes BUILD/gclaunch-testkit.tar.gz: the test suite as it runs on a GPU runner that has the CUDA
# driver (and, for the NVRTC tests, the toolkit), cmake/ctest and nothing of this build:
#
#   tar xf gclaunch-testkit.tar.gz && ctest --test-dir gclaunch-testkit
#
# from any directory. Run by `ninja -C BUILD testkit` (tests/kit/meson.build); by hand:
#   tests/kit/pack.sh BUILD_DIR SOURCE_DIR KIT_CTESTFILE
# The kit (gclaunch-testkit/):
#   CTestTestfile.cmake   the suite's tests with paths relative to the kit (tests/kit/meson.build)
#   tests/ kernels/ tools/ bench/ examples/ python/ libgclaunch.so*
#                         the build's programs, libraries, kernels and Python package, at the
#                         build's relative paths (debug info stripped: it names the build folder)
#   libs/                 the shared libraries they load that a runner cannot be assumed to have
#                         (Criterion and what it loads, libffi, ...; not glibc, libgcc_s, libstdc++,
#                         the CUDA driver or NVRTC), found with ldd
#   src/                  the repository's files the tests read (tests/, kernels/*.cu, include/,
#                         lib/ for the function lengths, README.md and docs/ for the link check, ...)
#                         and the GPU runner's scripts (scripts/h200.sh KIT, bench/*.py)
# Every ELF program and library finds its libraries through an $ORIGIN-relative RUNPATH (patched
# here with patchelf); nothing needs LD_LIBRARY_PATH. Then tests/kit/check_paths.sh greps every
# file of the kit for the absolute paths of the build and source trees: none may be inside.
set -euo pipefail
build=$(cd "${1:?usage: pack.sh BUILD_DIR SOURCE_DIR KIT_CTESTFILE}" && pwd -P)
src=$(cd "${2:?}" && pwd -P)
ctestfile=${3:?}
name=gclaunch-testkit
stage=$build/testkit.d
kit=$stage/$name
out=$build/$name.tar.gz
for t in patchelf objcopy ldd readelf tar; do
  command -v "$t" >/dev/null || { echo "testkit: '$t' is needed (apt-get install patchelf binutils)" >&2; exit 1; }
done
rm -rf "$stage" "$out"
mkdir -p "$kit/libs" "$kit/src"

is_elf() { [[ $(head -c4 "$1" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 7f454c46 ]]; }
# An x86-64 (host) ELF file -- not a cubin (also ELF, machine NVIDIA CUDA).
is_host_elf() { is_elf "$1" && readelf -h "$1" 2>/dev/null | grep -q 'Machine:.*X86-64'; }

# 1. The build's files, at their relative paths.
cd "$build"
find . \( -name meson-private -o -name meson-info -o -name meson-logs -o -name meson-uninstalled \
          -o -name testkit.d -o -name __pycache__ -o -name devlibs \
          -o -name '*.p' ! -path ./tools/gclaunch.p ! -path './lib/*/*.a.p' \) -prune \
       -o \( -type f -o -type l \) -print | sed 's|^\./||' | sort |
while IFS= read -r f; do
  keep=0
  case $f in
    kernels/*|bench/*.cubin|python/gclaunch/*) keep=1 ;;
    tools/gclaunch.p/*.o|lib/*/*.a.p/*.o) keep=1 ;;      # tests/cli/file_graph.sh reads them
    tests/*.sh|tests/*/*.sh) keep=1 ;;                   # scripts meson copied (tests/install)
    tests/oracle_*) keep=1 ;;                            # nvcc's and fatbinary's (test_fatbin_oracle.c)
    *.so|*.so.*) [[ -L $f ]] || is_elf "$f" && keep=1 ;;
    *) [[ -x $f && ! -L $f ]] && is_elf "$f" && keep=1 ;;
  esac
  [[ $f == *.a || $f == *.fatbin.d ]] && keep=0
  ((keep)) || continue
  mkdir -p "$kit/$(dirname "$f")"
  cp -P "$f" "$kit/$f"
done
cp "$ctestfile" "$kit/CTestTestfile.cmake"

# 2. The repository's files the tests read.
for d in tests kernels include lib tools examples python bench scripts docs README.md CHANGELOG.md; do
  mkdir -p "$kit/src/$(dirname "$d")"
  (cd "$src" && tar -cf - --exclude=__pycache__ --exclude='*.pyc' --exclude=bench/results "$d") | tar -xf - -C "$kit/src"
done

# 3. Host ELF files: debug info out (it names the build folder); the external libraries they load.
cd "$kit"
mapfile -t elves < <(find . -path ./libs -prune -o -type f -print | sort | while IFS= read -r f; do
  is_host_elf "$f" && echo "${f#./}"; done)
skip_re='/(libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|ld-linux[^/]*|libgcc_s|libstdc\+\+|libcuda|libnvrtc[^/]*|libnvJitLink|libpython[^/]*)\.so'
for f in "${elves[@]}"; do
  objcopy --strip-debug "$f"
  [[ $f == *.o ]] && continue
  env -u LD_LIBRARY_PATH ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'
done | sort -u | { grep -vE "$skip_re" || true; } | while IFS= read -r lib; do
  case $(realpath "$lib") in "$kit"/*|"$build"/*) continue ;; esac
  cp -L "$lib" "libs/"
done
# What the copied libraries load in turn (Criterion's dependencies), until nothing is new.
while :; do
  new=0
  for l in libs/*; do
    env -u LD_LIBRARY_PATH ldd "$l" 2>/dev/null | awk '/=> \//{print $3}' | { grep -vE "$skip_re" || true; }
  done | sort -u > "$stage/deps"
  while IFS= read -r lib; do
    [[ -e libs/$(basename "$lib") ]] && continue
    cp -L "$lib" libs/ && new=1
  done < "$stage/deps"
  ((new)) || break
done

# 4. RUNPATHs: $ORIGIN-relative entries of the build kept, the kit's libs/ added, nothing absolute.
relto() { realpath -m --relative-to="$1" "$2"; }
for f in "${elves[@]}" libs/*; do
  [[ $f == *.o ]] && continue
  readelf -d "$f" 2>/dev/null | grep -q '(NEEDED)' || continue
  old=$(patchelf --print-rpath "$f")
  rp=
  IFS=: read -ra parts <<< "$old"
  for p in "${parts[@]}"; do [[ $p == '$ORIGIN'* ]] && rp=${rp:+$rp:}$p; done
  if [[ $f == libs/* ]]; then rp='$ORIGIN'
  else
    up=$(relto "$(dirname "$f")" libs)
    rp=${rp:+$rp:}\$ORIGIN/$up
  fi
  patchelf --set-rpath "$rp" "$f"
done

cat > README.txt <<'TXT'
gclaunch test kit: the test suite of a gclaunch build, for a GPU runner that has the CUDA driver
(and the toolkit for the NVRTC tests), cmake/ctest and nothing of the build.

  tar xf gclaunch-testkit.tar.gz
  GCL_REQUIRE_GPU=1 GCL_REQUIRE_NVRTC=1 ctest --test-dir gclaunch-testkit --output-on-failure

Without a GPU the GPU tests show as skipped (exit 77); GCL_REQUIRE_GPU=1 / GCL_REQUIRE_NVRTC=1
turn those skips into failures. The Python suites run with $GCL_PYTHON, else python3 on PATH
(CPython >= 3.10; the GPU suite needs torch). Labels: unit, gpu, python (ctest -L gpu).
TXT

n_files=$(find . -type f | wc -l) n_libs=$(find libs -type f | wc -l)
# 5. Nothing of this machine's build or source tree inside.
sh "$src/tests/kit/check_paths.sh" "$kit" "$build" "$src"
tar -C "$stage" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out" "$name"
rm -rf "$stage"
echo "testkit: $out ($n_files files, $n_libs libraries in libs/, $(du -h "$out" | cut -f1))"
