#!/bin/sh
# tests/common holds every helper the suites share (issue 56), as a rule that ends in "ok" or
# the offending files:
#   - tests/unit holds test programs only (test_*.c, unit_main.c, their scripts and data): no
#     header or helper .c there, which another suite would have to reach into;
#   - one random generator: tests/common/test_rng.h (test_rng_next); no rand()/srand() and no
#     other generator's constants in tests/ or bench/ (bench/experiments: programs kept as they
#     were run, not built);
#   - one lookup of a program's own folder: tests/common/testpaths.h (bench/exedir.h uses it);
#   - the bench and the tool include no private file of lib/: the bench's one internal interface
#     is lib/cuda/driver.h (meson's gclaunch_driver_dep: the resolved driver table), the tool's
#     none (the public API only: gcl_arch_query); nothing includes a file by a ../ path into lib/
#     or tests/, nor compiles a lib/ source in;
#   - the tool's own functions do not carry the library's gcl_ prefix.
#   test_support.sh SOURCE_ROOT
root=${1:?usage: test_support.sh SOURCE_ROOT}
cd "$root" || exit 1
failed=0
fail() { echo "FAIL: $*"; failed=1; }

helpers=$(find tests/unit -maxdepth 1 -type f \( -name '*.h' -o -name '*.c' \) \
          ! -name 'test_*.c' ! -name 'unit_main.c' | sort)
[ -z "$helpers" ] || fail "helpers in tests/unit (move them to tests/common):" $helpers

generators=$(grep -rlnE '\bs?rand\(|6364136223846793005|1664525u?|0xbf58476d1ce4e5b9|2685821657736338717|\^= *[a-z_>-]+ *<< *13' \
               tests bench --include='*.c' --include='*.h' | grep -v '^bench/experiments/' |
             grep -v '^tests/common/test_rng.h$' | sort)
[ -z "$generators" ] || fail "random generators besides tests/common/test_rng.h:" $generators

exe=$(grep -rln 'readlink("/proc/self/exe"' tests bench --include='*.c' --include='*.h' |
      grep -v '^tests/common/testpaths.h$' | sort)
[ -z "$exe" ] || fail "the program's folder looked up besides tests/common/testpaths.h:" $exe

private=$(ls lib/core/*.h lib/cuda/*.h | sed 's|.*/||' | grep -v '^driver.h$')
reach=$( (grep -rnE '#include "\.\./(lib|tests)/' bench tools --include='*.c' --include='*.h' | grep -v '^bench/experiments/'
          for h in $private; do grep -rn "#include \"$h\"" bench tools --include='*.c' --include='*.h' | grep -v '^bench/experiments/'; done
          grep -rn '#include "driver.h"' tools --include='*.c' --include='*.h'
          grep -n "lib/" bench/meson.build tools/meson.build | grep -v '^ *#' | grep "files(") | sort -u)
[ -z "$reach" ] || fail "the bench or the tool reaches into lib/ (or tests/ by path):" "$reach"

prefixed=$(grep -nE '^[A-Za-z_][A-Za-z0-9_ *]*\bgcl_[a-z0-9_]+\(' tools/*.c | grep -vE ';[[:space:]]*$')
[ -z "$prefixed" ] || fail "tool functions with the library's gcl_ prefix:" "$prefixed"

[ $failed -eq 0 ] && echo "ok: tests/unit holds test programs only; one random generator; one program-folder lookup; the bench and the tool use the public API (and the bench lib/cuda/driver.h); no gcl_ function in the tool"
exit $failed
