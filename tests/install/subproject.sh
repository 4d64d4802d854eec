#!/usr/bin/env bash
# gclaunch as a meson subproject: a small consumer project with this checkout in its
# subprojects/gclaunch uses dependency('gclaunch'), includes <gclaunch/gclaunch.h>, builds and runs
# tests/install/consumer.c (a signature's sm_90 layout); the subproject build must compile no
# kernel (no nvcc), no test, no benchmark and no example. One PASS:/FAIL: line per check.
#   tests/install/subproject.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-subproject.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() { echo "subproject: $passed passed, $failed failed"; exit $((failed > 0)); }

app=$tmp/app
mkdir -p "$app/subprojects"
ln -s "$src" "$app/subprojects/gclaunch"
cp "$here/consumer.c" "$app/app.c"
cat >"$app/meson.build" <<'MESON'
project('gclaunch_consumer', 'c', default_options: ['c_std=c11', 'warning_level=3', 'werror=true'])
gclaunch = dependency('gclaunch')
executable('app', 'app.c', dependencies: gclaunch)
MESON

if meson setup "$app/build" "$app" >"$tmp/setup.log" 2>&1; then
  pass "meson setup: dependency('gclaunch') resolves to the subproject"
else
  tail -30 "$tmp/setup.log"; fail "meson setup of a project with subprojects/gclaunch"; finish
fi
if ninja -C "$app/build" >"$tmp/build.log" 2>&1; then pass "ninja: the consumer and gclaunch build"
else tail -30 "$tmp/build.log"; fail "ninja: the consumer does not build"; finish; fi

# Nothing but the library and the tool: no nvcc command, no kernel/test/benchmark/example target.
if grep -q 'nvcc' <(ninja -C "$app/build" -t commands); then
  fail "the subproject build runs nvcc: $(ninja -C "$app/build" -t commands | grep -c nvcc) commands"
else pass "the subproject build runs no nvcc"; fi
targets=$(meson introspect "$app/build" --targets | python3 -c '
import json, sys
print(" ".join(t["name"] for t in json.load(sys.stdin)))')
extra=$(tr ' ' '\n' <<<"$targets" | grep -E '^(unit_|gpu_|bench_|example_|fuzz_)|cubin|ptx|fatbin' | tr '\n' ' ')
if [[ -z $extra ]]; then pass "no kernel, test, benchmark or example targets (targets: $targets)"
else fail "the subproject builds $extra"; fi

expected="gclaunch $(meson introspect "$app/build" --projectinfo | python3 -c '
import json, sys
print([s["version"] for s in json.load(sys.stdin)["subprojects"] if s["name"] == "gclaunch"][0])') sm_90
param 0 maps offset 112 size 256 align 128
param 1 src offset 368 size 8 align 8
param 2 dst offset 376 size 8 align 8
param 3 n offset 384 size 8 align 8
param 4 tile offset 392 size 12 align 4
bytes 404"
if out=$("$app/build/app" 2>&1) && [[ $out == "$expected" ]]; then
  pass "the consumer runs and prints the sm_90 layout"
else fail "the consumer's output:"; diff <(echo "$expected") <(echo "$out"); fi

# The uninstalled pkg-config file points at include/ (where <gclaunch/gclaunch.h> is).
pcdir=$app/build/meson-uninstalled
if [[ -f $pcdir/gclaunch-uninstalled.pc ]] &&
   cc -std=c11 $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags gclaunch) -fsyntax-only "$app/app.c" 2>"$tmp/pc.log"; then
  pass "the uninstalled gclaunch.pc's Cflags find <gclaunch/gclaunch.h>"
else cat "$tmp/pc.log" 2>/dev/null; fail "the uninstalled gclaunch.pc does not find the header"; fi
finish
