#!/usr/bin/env bash
# ThreadSanitizer: the concurrency cases as plain pthread programs (Criterion cannot run under
# TSan), built with -fsanitize=thread together with the library and the fake driver into
# build-tsan/ (a direct compiler build: no kernels, no Criterion, well under a minute), then run
# against the fake driver with halt_on_error. One line per program: "ok   tsan NAME", "SKIP tsan
# NAME: reason" (exit 77) or "FAIL tsan NAME: ..." (a TSan report exits 66). Exit 1 on any FAIL.
# usage: tests/tsan/run.sh [BUILD_DIR]   (default build-tsan)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$(mkdir -p "${1:-build-tsan}" && cd "${1:-build-tsan}" && pwd)
cc=${CC:-gcc}
cuda=${CUDA_PATH:-/usr/local/cuda}
[[ -f $cuda/include/cuda.h ]] || cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
flags=(-std=c11 -O2 -g -fsanitize=thread -fno-omit-frame-pointer -D_GNU_SOURCE -pthread
       -Wall -Wextra -Werror -Wno-pedantic)
inc=(-Iinclude -Ilib/core -Ilib/cuda -I"$out" -isystem "$cuda/include")

build() { # build: the TSan library, fake driver and programs; prints the compiler's errors
  # nvrtc.c's kernel-side headers as C strings, generated as lib/cuda/meson.build does.
  python3 lib/cuda/embed_headers.py "$out/nvrtc_headers.h" \
    gclaunch/tma.cuh=include/gclaunch/tma.cuh \
    gclaunch/tmap_table.cuh=include/gclaunch/tmap_table.cuh \
    gclaunch/gclaunch_tmap_table.cuh=include/gclaunch/gclaunch_tmap_table.cuh || return 1
  "$cc" "${flags[@]}" -fPIC -shared -fvisibility=hidden -isystem "$cuda/include" \
    tests/fakecuda/*.c \
    -o "$out/libfakecuda.so" || return 1
  "$cc" "${flags[@]}" "${inc[@]}" -fPIC -shared -fvisibility=hidden -DGCL_BUILDING \
    lib/core/*.c lib/cuda/*.c -lffi -ldl -o "$out/libgclaunch.so" || return 1
  local p
  for p in tests/tsan/tsan_*.c; do
    "$cc" "${flags[@]}" -Iinclude -Itests/fakecuda -DFAKECUDA_PATH="\"$out/libfakecuda.so\"" "$p" \
      -L"$out" -lgclaunch -lfakecuda -Wl,-rpath,"$out" -o "$out/$(basename "$p" .c)" || return 1
  done
}

start=$SECONDS
if ! build >"$out/build.log" 2>&1; then
  echo "FAIL tsan build: see below"; tail -30 "$out/build.log"; exit 1
fi
echo "tsan: built in $((SECONDS - start)) s"
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
rc=0
for p in "$out"/tsan_*; do
  [[ -x $p && $p != *.c ]] || continue
  name=$(basename "$p") t0=$SECONDS
  timeout 300 "$p" >"$out/$name.log" 2>&1
  st=$?
  reports=$(grep -c '^WARNING: ThreadSanitizer' "$out/$name.log")
  if [[ $st == 0 && $reports == 0 ]]; then
    echo "ok   tsan $name ($((SECONDS - t0)) s, 0 reports): $(tail -1 "$out/$name.log")"
  elif [[ $st == 77 && $reports == 0 ]]; then
    echo "SKIP tsan $name: $(grep -m1 "^SKIP" "$out/$name.log" | sed "s/^SKIP [^:]*: //")"
  else
    echo "FAIL tsan $name: exit $st, $reports ThreadSanitizer reports"; head -60 "$out/$name.log"; rc=1
  fi
done
exit $rc
