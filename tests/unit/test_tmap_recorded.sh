#!/bin/sh
# Recorded driver verdicts as an oracle without a GPU (issue 36): each line of tests/unit/recorded/
# is one tensor-map encode of driver 580 on the H200 or H100 with its CUresult; gcl_tensormap_check must
# accept exactly the ones the driver encoded (A = 0, B = 0).
#   test_tmap_recorded.sh LIBGCLAUNCH SOURCE_ROOT
lib=$1 src=$2
# The interpreter the Python suites use ($GCL_PYTHON), else the system's (not a pyenv shim: a
# shell script), else python3 on PATH.
py=${GCL_PYTHON:-}
[ -n "$py" ] || { [ -x /usr/bin/python3 ] && py=/usr/bin/python3; }
[ -n "$py" ] || py=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }
# A sanitizer build's library (-Db_sanitize=address,undefined) loads into python only after its
# runtimes: preload the ones it links into python alone, as .ci/run does for the Python suites,
# and leave the interpreter's own leaks unreported (the options given last win).
pre=$(ldd "$lib" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ {print $3}' | tr '\n' ' ')
set -- env
if [ -n "$pre" ]; then
  set -- env LD_PRELOAD="$pre${LD_PRELOAD:+ $LD_PRELOAD}" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:abort_on_error=1" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1"
fi
"$@" "$py" "$src/bench/experiments/tmap_replay.py" "$lib" \
  "$src/tests/unit/recorded/tmapdiff_sample_h200_driver580.csv.xz" \
  "$src/tests/unit/recorded/im2col_probe_h200_driver580.csv.xz" \
  "$src/tests/unit/recorded/im2col_interleave_h100_driver580.csv.xz" \
  "$src/tests/unit/recorded/tmapdiff_address_h100_driver580.csv.xz"
