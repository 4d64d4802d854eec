#!/usr/bin/env bash
# issue 26 on the H200: the Python suites (GCL_REQUIRE_GPU=1), the example, and the benchmark.
#   scripts/h200_py.sh [KIT|BUILD] [bench]   KIT: the test kit (tests/kit/; a .tar.gz is unpacked
#                                            here) or a build directory (default: build)
b=build
if [[ ${1:-} == *.tar.gz && -f $1 ]]; then tar -xzf "$1" && b=gclaunch-testkit && shift
elif [[ -n ${1:-} && -d $1 ]]; then b=$1 && shift
fi
b=$(cd "$b" && pwd)
if [[ -d $b/src/tests && -d $b/libs ]]; then src=$b/src; else src=$(cd "$(dirname "$0")/.." && pwd); fi
export GCL_REQUIRE_GPU=1 PYTHONUNBUFFERED=1 GCL_PYTHON=$(command -v python3)
export PYTHONPATH=$b/python:$src/tests/python GCL_BUILD_DIR=$b
o=${OUT:-out}; mkdir -p "$o"
[ "${1:-}" = bench ] || { nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv
  python3 -c 'import sys, gclaunch, torch; print(sys.version); print(gclaunch.__file__, gclaunch.__version__, torch.__version__)'
  timeout 170 ctest --test-dir "$b" -L python -V 2>&1 | grep -vE '^[0-9]+: test_.*(ok|skipped.*)$' | tail -80
  echo "ctest exit ${PIPESTATUS[0]}"
  timeout 30 python3 "$src/examples/python_megakernel.py" "$b"; echo "example exit $?"; } > "$o/tests.log" 2>&1
{ timeout 60 "$b/bench/bench_launch" --runs 1 --reps 31 --csv "$o/launch.csv"
  timeout 120 python3 "$src/bench/bench_python.py" "$b" --runs 3 --launch-csv "$o/launch.csv" --csv "$o/python.csv"
  echo "bench_python exit $?"
  echo "== the same through __dlpack__ calls (GCL_DLPACK_C_API=0: the C exchange API off)"
  GCL_DLPACK_C_API=0 timeout 60 python3 "$src/tests/python/test_gpu.py" 2>&1 | tail -3
  GCL_DLPACK_C_API=0 timeout 60 python3 "$src/bench/bench_python.py" "$b" --maps-only
  echo "== bench_refresh (the C calls per map, same call)"
  timeout 60 "$b/bench/bench_refresh" --reps 11 --csv "$o/refresh.csv"; } > "$o/bench.log" 2>&1
[ -f "$o/tests.log" ] && tail -40 "$o/tests.log"; tail -60 "$o/bench.log"
