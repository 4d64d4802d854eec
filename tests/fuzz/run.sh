#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for N seconds (default 60) on
# a scratch copy of its seed corpus, after replaying the saved regressions. Exits non-zero if a
# target crashed, leaked, tripped a sanitizer or failed to build; a crash's input is left in
# BUILD_DIR/artifacts (copy it to tests/fuzz/regressions/TARGET/ to keep it as a regression).
#   tests/fuzz/run.sh [SECONDS] [TARGET...]     env: BUILD_DIR (default build-fuzz)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(fuzz_signature fuzz_cubin fuzz_fatbin fuzz_ptx fuzz_ptx_ptxas fuzz_dlpack fuzz_path fuzz_file)
build=${BUILD_DIR:-build-fuzz}
declare -A corpus=([fuzz_signature]=signature [fuzz_cubin]=cubin [fuzz_fatbin]=fatbin
                   [fuzz_ptx]=ptx [fuzz_ptx_ptxas]=ptx [fuzz_dlpack]=dlpack [fuzz_path]=path
                   [fuzz_file]=file)
declare -A max_len=([fuzz_signature]=512 [fuzz_cubin]=16384 [fuzz_fatbin]=16384
                    [fuzz_ptx]=8192 [fuzz_ptx_ptxas]=8192 [fuzz_dlpack]=256 [fuzz_path]=512
                    [fuzz_file]=16384)

if [[ ! -f $build/build.ninja ]]; then
  out=$(CC=clang meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined \
        -Db_lundef=false 2>&1) || { echo "$out"; echo "FAIL fuzz build: meson setup"; exit 1; }
fi
out=$(ninja -C "$build" $(printf 'tests/fuzz/%s ' "${targets[@]}") 2>&1) ||
  { echo "$out" | tail -60; echo "FAIL fuzz build: ninja"; exit 1; }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
artifacts=$build/artifacts
mkdir -p "$artifacts"
rc=0
for t in "${targets[@]}"; do
  exe=$build/tests/fuzz/$t
  regress=$here/regressions/$t
  if [[ -d $regress ]] && compgen -G "$regress/*" >/dev/null; then
    if ! "$exe" "$regress"/* >"$artifacts/$t.regress.log" 2>&1; then
      echo "FAIL $t: a saved regression crashes again (log: $artifacts/$t.regress.log)"
      tail -30 "$artifacts/$t.regress.log"; rc=1; continue
    fi
  fi
  work=$(mktemp -d)
  cp "$here/corpus/${corpus[$t]}"/* "$work/"
  log=$artifacts/$t.log
  dict=(); [[ -f $here/dict/${corpus[$t]}.dict ]] && dict=(-dict="$here/dict/${corpus[$t]}.dict")
  if "$exe" "$work" "${dict[@]}" -max_total_time="$seconds" -max_len="${max_len[$t]}" -timeout=10 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$t-" >"$log" 2>&1; then
    echo "ok   $t: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') runs in ${seconds}s, corpus $(ls "$work" | wc -l)$(grep -hE '^fuzz_ptx_ptxas: ' "$log" | tail -1 | sed 's/^fuzz_ptx_ptxas:/;/')"
  else
    echo "FAIL $t (log: $log; inputs: $artifacts/$t-*)"
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5
    rc=1
  fi
  rm -rf "$work"
done
exit $rc
