#!/bin/sh
# Recorded driver verdicts as an oracle without a GPU (issue 36): each line of tests/unit/recorded/
# is one tensor-map encode of driver 580 on the H200 with its CUresult; gcl_tensormap_check must
# accept exactly the ones the driver encoded (A = 0, B = 0).
#   test_tmap_recorded.sh LIBGCLAUNCH SOURCE_ROOT
lib=$1 src=$2
py=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }
# A sanitizer build's library (-Db_sanitize=address,undefined) loads into python only after its
# runtimes: preload the ones it links, as .ci/run does for the Python suites.
pre=$(ldd "$lib" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ {print $3}' | tr '\n' ' ')
if [ -n "$pre" ]; then
  export LD_PRELOAD="$pre${LD_PRELOAD:+ $LD_PRELOAD}"
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
fi
"$py" "$src/bench/experiments/tmap_replay.py" "$lib" \
  "$src/tests/unit/recorded/tmapdiff_sample_h200_driver580.csv.xz" \
  "$src/tests/unit/recorded/im2col_probe_h200_driver580.csv.xz"
