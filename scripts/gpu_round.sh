#!/usr/bin/env bash
# One GPU runner call for a round's checks, most needed first, each step time-boxed so that a
# call cut short still returns the logs of what ran:
#   scripts/gpu_round.sh KIT.tar.gz|KIT_DIR [steps...]
# steps (default: probe ctest patchoff sanitize pyfuzz refresh python nvshmem):
#   probe     nvidia-smi, gclaunch info, NVSHMEM and NCCL as the Python image has them
#   ctest     the whole kit with GCL_REQUIRE_GPU=1 (a GPU runner: "no GPU" is a failure)
#   patchoff  the tensor-map suites again with GCL_TMAP_PATCH=0 (the driver path)
#   sanitize  compute-sanitizer (memcheck, defaults) over the graph and tensor-map GPU suites
#   pyfuzz    tests/python/fuzz_api.py --real, PYFUZZ_RUNS (2) x PYFUZZ_SECONDS (120), fresh seeds
#   refresh   bench_refresh (the tensor-map targets)
#   python    bench/bench_python.py beside bench_launch (Python's launch as a ratio to C's)
#   nvshmem   bench/nvshmem_bw.sh (one GPU: the PEs it starts share it)
#   descriptors  bench_descriptors, the placement study (T up to K = 4096)
# Logs go to $OUT/round/ and come back as one archive, $OUT/round.tar.gz, plus $OUT/summary.log
# (each step's summary lines). NVLink multicast stays off.
set -u
kit=${1:?usage: scripts/gpu_round.sh KIT.tar.gz|KIT_DIR [steps...]}
shift
steps=${*:-probe ctest patchoff sanitize pyfuzz refresh python nvshmem}
O=${OUT:-out}
mkdir -p "$O/round"; O=$(cd "$O" && pwd); L=$O/round
if [[ -f $kit ]]; then tar -xzf "$kit" -C "$(dirname "$kit")" && kit=$(dirname "$kit")/gclaunch-testkit; fi
K=$(cd "$kit" && pwd)
export GCL_REQUIRE_GPU=1 GCL_REQUIRE_NVRTC=1 GCL_PYTHON=${GCL_PYTHON:-$(command -v python3)} \
  NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
  NVSHMEM_REMOTE_TRANSPORT=none PYTHONUNBUFFERED=1
S=$O/summary.log
say() { echo "$*" | tee -a "$S"; }
pack() { tar -C "$O" -czf "$O/round.tar.gz" round; }
tmap='tmap|tensormap|table|tma'

for step in $steps; do
  say "== $step ($(date -u +%T), ${SECONDS}s)"
  case $step in
    probe)
      { nvidia-smi; "$K/tools/gclaunch" info
        python3 - <<'EOF'
import importlib, os, sys
print(sys.version)
for name in ("nvidia.nvshmem", "nvidia.nccl", "torch", "cuda.core", "cupy"):
    try:
        m = importlib.import_module(name)
        p = list(getattr(m, "__path__", [])) or [getattr(m, "__file__", "")]
        print(name, getattr(m, "__version__", ""), p)
        for root in p:
            for d, _, fs in os.walk(root):
                for f in fs:
                    if f.endswith((".so", ".so.3", ".so.2", ".a")) or f.startswith(("nccl_device", "nvshmem_version", "nccl.h")):
                        print("   ", os.path.join(d, f))
    except Exception as e:
        print(name, "not importable:", e)
EOF
      } >"$L/probe.log" 2>&1
      grep -iE 'nvshmem|nccl|H100|H200|Driver Version' "$L/probe.log" | head -20 | tee -a "$S"
      ;;
    ctest)
      (cd / && timeout ${CTEST_TIMEOUT:-330} ctest --test-dir "$K" -j${CTEST_JOBS:-6} --output-on-failure \
        --timeout 240) >"$L/ctest.log" 2>&1
      grep -E 'tests passed|\*\*\*Failed|Not Run|Timeout|\(Skipped\)|Exception' "$L/ctest.log" | tail -30 | tee -a "$S"
      ;;
    patchoff)
      (cd / && GCL_TMAP_PATCH=0 timeout ${PATCHOFF_TIMEOUT:-150} ctest --test-dir "$K" -j6 -R "$tmap" \
        --output-on-failure) >"$L/patchoff.log" 2>&1
      grep -E 'tests passed|\*\*\*Failed|Not Run|Timeout' "$L/patchoff.log" | tail -12 | tee -a "$S"
      ;;
    sanitize)
      for t in ${SANITIZE_TESTS:-gpu_graph_repoint gpu_tmap_patch gpu_tmap_table gpu_tmap_refresh gpu_tmap_admit gpu_launch}; do
        [[ -x $K/tests/$t ]] || { say "$t: not in the kit"; continue; }
        timeout ${SANITIZE_TIMEOUT:-120} compute-sanitizer --error-exitcode 99 "$K/tests/$t" --jobs 1 \
          >"$L/sanitize.$t.log" 2>&1
        rc=$?; api=$(grep -c 'Program hit' "$L/sanitize.$t.log")
        # "Program hit" lines are driver calls that returned an error (API errors): the summary
        # counts them with memory errors. gpu_graph_repoint (a raw cuMemFree in a capture) and
        # gpu_launch (launches with no or another context current) make them on purpose.
        say "$t: exit $rc $(grep -E 'ERROR SUMMARY' "$L/sanitize.$t.log" | tail -1), of them API errors: $api"
      done
      ;;
    pyfuzz)
      for run in $(seq "${PYFUZZ_RUNS:-2}"); do
        env -u GCL_LIBCUDA PYTHONPATH="$K/python:$K/src/tests/python" GCL_BUILD_DIR="$K" \
          timeout $(( ${PYFUZZ_SECONDS:-120} + 120 )) python3 "$K/src/tests/python/fuzz_api.py" --real \
          --no-save --seconds "${PYFUZZ_SECONDS:-120}" >"$L/pyfuzz$run.log" 2>&1
        say "fuzz run $run exit $?: $(grep -iE 'seed' "$L/pyfuzz$run.log" | head -1)"
        grep -v '^    ' "$L/pyfuzz$run.log" | tail -8 | tee -a "$S"
      done
      ;;
    refresh)
      timeout 150 "$K/bench/bench_refresh" --csv "$L/refresh.csv" >"$L/refresh.log" 2>&1
      say "bench_refresh exit $?"
      grep -iE 'target|path|ratio|x raw|median' "$L/refresh.log" | head -40 | tee -a "$S"
      ;;
    python)
      { timeout 60 "$K/bench/bench_launch" --runs 1 --reps 31 --csv "$L/launch.csv"
        PYTHONPATH=$K/python:$K/src/tests/python GCL_BUILD_DIR=$K timeout 150 \
          python3 "$K/src/bench/bench_python.py" "$K" --runs 3 --launch-csv "$L/launch.csv" --csv "$L/python.csv"
        echo "bench_python exit $?"; } >"$L/python.log" 2>&1
      tail -30 "$L/python.log" | tee -a "$S"
      ;;
    nvshmem)
      (OUT=$L/nv timeout ${NVSHMEM_TIMEOUT:-150} bash "$K/src/scripts/h200.sh" "$K" nvshmem) >/dev/null 2>&1
      cp "$L/nv/nvshmem.log" "$L/" 2>/dev/null; tail -16 "$L/nvshmem.log" 2>/dev/null | tee -a "$S"
      ;;
    descriptors)
      timeout ${DESC_TIMEOUT:-200} "$K/bench/bench_descriptors" ${DESC_ARGS-} --reps ${DESC_REPS:-11} \
        --k ${DESC_K:-8,64,240,1024,4096} --placements ${DESC_PLACEMENTS:-P,G,D,C,T} \
        --csv "$L/placement.csv" --relaunch-csv "$L/placement_relaunch.csv" >"$L/descriptors.log" 2>&1
      say "bench_descriptors exit $?"; tail -40 "$L/descriptors.log" | tee -a "$S"
      ;;
    *) say "unknown step $step" ;;
  esac
  pack
done
say "== done (${SECONDS}s)"
pack
