#!/bin/sh
# tests/common holds every helper the suites share (issue 56), as a rule that ends in "ok" or
# the offending files:
#   - tests/unit holds test programs only (test_*.c, unit_main.c, their scripts and data): no
#     header or helper .c there, which another suite would have to reach into;
#   - one random generator: tests/common/test_rng.h (test_rng_next); no rand()/srand() and no
#     other generator's constants in tests/ or bench/ (bench/experiments: programs kept as they
#     were run, not built);
#   - one lookup of a program's own folder: tests/common/testpaths.h (bench/exedir.h uses it).
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

[ $failed -eq 0 ] && echo "ok: tests/unit holds test programs only; one random generator; one program-folder lookup"
exit $failed
