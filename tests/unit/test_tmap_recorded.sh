#!/bin/sh
# Recorded driver verdicts as an oracle without a GPU (issue 36): each line of tests/unit/recorded/
# is one tensor-map encode of driver 580 on the H200 with its CUresult; gcl_tensormap_check must
# accept exactly the ones the driver encoded (A = 0, B = 0).
#   test_tmap_recorded.sh LIBGCLAUNCH SOURCE_ROOT
lib=$1 src=$2
py=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }
"$py" "$src/bench/experiments/tmap_replay.py" "$lib" \
  "$src/tests/unit/recorded/tmapdiff_sample_h200_driver580.csv.xz" \
  "$src/tests/unit/recorded/im2col_probe_h200_driver580.csv.xz"
