#!/usr/bin/env bash
# Runs the GPU side of gclaunch on a GPU runner. Takes the relocatable test kit (tests/kit/: built
# on a CPU runner with `ninja -C build testkit`; the runner needs no Criterion, no build tools, no
# LD_LIBRARY_PATH) or a build directory of this checkout. Writes logs and CSVs under $OUT
# (default ./out).
#   scripts/h200.sh KIT|BUILD [stages...]   stages: ctest demo torch bench tiles descriptors
#                                           sanitize cli persistent tmaps wheel nvshmem pyfuzz
#                                           (default: all but descriptors, tmaps, wheel, nvshmem,
#                                           pyfuzz)
# KIT is build/gclaunch-testkit.tar.gz (unpacked here into ./gclaunch-testkit) or the unpacked
# gclaunch-testkit folder; the kit carries this script too (gclaunch-testkit/src/scripts/h200.sh).
set -uo pipefail
build=${1:?usage: scripts/h200.sh KIT|BUILD [stages...]}
shift
stages=${*:-ctest demo torch bench tiles sanitize cli persistent}
out=${OUT:-out}
mkdir -p "$out"
if [[ -f $build && $build == *.tar.gz ]]; then
  tar -xzf "$build" && build=gclaunch-testkit
fi
# The repository's files the stages read (tests/, bench/*.py): the kit's copy, or this checkout.
if [[ -d $build/src/tests && -d $build/libs ]]; then src=$build/src
else src=$(cd "$(dirname "$0")/.." && pwd)
fi
export PYTHONUNBUFFERED=1
# A GPU runner has a device and the toolkit: "no GPU" and "no NVRTC" skips are failures here
# (tests/common/suite.h, tests/gpu/gpu_main.c), so a broken loader cannot pass as skipped suites.
export GCL_REQUIRE_GPU=1 GCL_REQUIRE_NVRTC=1

for stage in $stages; do
  case $stage in
    ctest)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$out/ctest.log"
      "$build/tools/gclaunch" info 2>&1 | tee -a "$out/ctest.log"
      ctest --test-dir "$build" --output-on-failure 2>&1 | tee -a "$out/ctest.log" | tail -40
      ;;
    demo)
      { "$build/tools/gclaunch" demo; echo "demo exit $?"; } 2>&1 | tee "$out/demo.log" | tail -30
      ;;
    torch)
      { python3 "$src/tests/python/torch_interop.py" "$build/libgclaunch.so"; echo "torch_interop exit $?"; } 2>&1 | tee "$out/torch.log" | tail -30
      ;;
    bench)
      # Issue 16: everything measured in this one call, on this one machine; CSVs and the log go
      # into $out/bench/, then into one archive (few files come back from a runner):
      # $out/bench.log (also inside) and $out/bench.tar.gz.
      b=$out/bench
      mkdir -p "$b"
      { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
        echo "== bench_launch --runs 3 --decompose (launch cost: gcl_launch against the fastest raw path)"
        "$build/bench/bench_launch" --runs 3 --reps ${LAUNCH_REPS:-101} --decompose --csv "$b/launch.csv"
        echo "== bench/peers.py (same call as the launch table)"
        python3 "$src/bench/peers.py" "$build/kernels/launchcfg.sm_90.cubin" --runs 3 \
          --csv "$b/peers.csv" --launch-csv "$b/launch.csv"
        echo "== bench_refresh (encode / refresh / replace-address, relaunch loop)"
        "$build/bench/bench_refresh" --csv "$b/refresh.csv"
        echo "== bench_pack"
        "$build/bench/bench_pack"
        echo "== hot paths without PLT calls"
        sh "$src/tests/unit/test_hotpath.sh" "$build/libgclaunch.so"; } 2>&1 | tee "$b/bench.log" | tail -120
      cp "$b/bench.log" "$out/bench.log"
      tar -C "$out" -czf "$out/bench.tar.gz" bench && rm -rf "$b"
      ;;
    tiles)
      # Issue 16's bandwidth targets: what bounds the small tiles (bench_descriptors --probe: tile
      # bytes, row bytes and boxes per stage at K = 240; --sweep too with TILES_SWEEP=1) and the
      # demo's ring configurations, each verified. $out/tiles.log and $out/tiles.tar.gz.
      t=$out/tiles
      mkdir -p "$t"
      { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
        echo "== bench_descriptors --probe${TILES_SWEEP:+ --sweep}"
        "$build/bench/bench_descriptors" --probe ${TILES_SWEEP:+--sweep --csv "$t/descriptors.csv"} \
          --sweep-csv "$t/descriptors_probe.csv"
        echo "bench_descriptors exit $?"
        echo "== gclaunch demo, ring configurations (stages:blocks per SM; each verified)"
        for cfg in 8:1 10:1 12:1 13:1 6:2 4:3 3:4; do
          echo "-- --stages ${cfg%:*} --blocks-per-sm ${cfg#*:}"
          o=$("$build/tools/gclaunch" demo --stages "${cfg%:*}" --blocks-per-sm "${cfg#*:}" 2>&1)
          rc=$?
          printf '%s\n' "$o" | grep -E '^(ring|device|verify|time|memcpy|demo)'
          echo "demo exit $rc"
        done; } 2>&1 | tee "$t/tiles.log" | tail -80
      cp "$t/tiles.log" "$out/tiles.log"
      tar -C "$out" -czf "$out/tiles.tar.gz" tiles && rm -rf "$t"
      ;;
    descriptors)
      # Issue 27: where a megakernel's TMA descriptors should live. A smoke test of each placement
      # alone (time-boxed: a placement that hangs or fails is left out of the study and the log
      # says so), the whole study (table + relaunch, each copy verified) twice if time allows,
      # the SASS (cuobjdump) and the figures. $out/descriptors.log and $out/descriptors.tar.gz.
      d=$out/descriptors
      mkdir -p "$d"
      bd=$build/bench/bench_descriptors
      { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
        ok=
        for p in P S G G+prefetch D H; do
          echo "== smoke: $bd --quick --k 8,240 --reps 3 --placements $p"
          timeout 40 "$bd" --quick --k 8,240 --reps 3 --placements "$p"
          rc=$?; echo "smoke $p exit $rc"
          [[ $rc == 0 ]] && ok=${ok:+$ok,}$p
        done
        echo "placements that passed the smoke test: $ok"
        for run in 1 2; do
          [[ $run == 2 && $SECONDS -gt ${DESC_RUN2_BEFORE:-170} ]] && { echo "run 2 skipped (time)"; break; }
          echo "== run $run: $bd --reps ${DESC_REPS:-21} --placements $ok --csv table_run$run.csv --relaunch-csv relaunch_run$run.csv"
          timeout ${DESC_TIMEOUT:-150} "$bd" --reps ${DESC_REPS:-21} --placements "$ok" \
            --csv "$d/table_run$run.csv" --relaunch-csv "$d/relaunch_run$run.csv"
          echo "bench_descriptors run $run exit $?"
        done
        cuobjdump -sass "$build/bench/descbench.sm_90a.cubin" > "$d/descbench_sm90a.sass" 2>&1
        echo "cuobjdump exit $?"
        python3 "$src/bench/plot_descriptors.py" plot "$d/table_run1.csv" "$d/relaunch_run1.csv" "$d"
        echo "plot exit $?"; } 2>&1 | tee "$d/descriptors.log" | tail -200
      cp "$d/descriptors.log" "$out/descriptors.log"
      tar -C "$out" -czf "$out/descriptors.tar.gz" descriptors && rm -rf "$d"
      ;;
    sanitize)
      # Issue 25: every GPU suite and the demo under compute-sanitizer's defaults -- API errors
      # reported, as a user's `compute-sanitizer app` sees them -- and each must end in
      # "ERROR SUMMARY: 0 errors". Kernel lookups make no failing driver call (lib/cuda/kernel.c).
      # The tests that provoke driver errors on purpose are listed here by name, left out of those
      # runs (a Criterion --filter) and run on their own below: they must pass, and the API errors
      # they cause are listed as expected (on the H200, 2026-12-04: gpu_module's two give
      # INVALID_PTX and NOT_FOUND from cuLibraryGetKernel; gpu_launch's context test 201/400 from
      # cuLaunchKernelEx, 6 in all; gpu_tmap_diff's differential asks the driver to encode every
      # description, the ones gclaunch refuses included: thousands of INVALID_VALUE from
      # cuTensorMapEncodeIm2col/Tiled by design. gpu_tmap_refresh no longer probes: it encodes only
      # what gclaunch accepts, so it must make no failing driver call). gpu_tma_rule's fault test is left to ctest: under compute-sanitizer it
      # did not finish within 70 s and kept the output pipe open. memcheck on all, racecheck too (SANITIZE_RACECHECK=0
      # leaves it out) on the suites whose kernels share memory; SANITIZE_JOBS suites at a time
      # (one GPU is enough), each run capped at SANITIZE_TIMEOUT seconds.
      purposeful='module/bad_ptx_fails_with_the_jit_log|module/unknown_kernel_is_not_found|launch/the_launch_runs_in_the_kernels_context_whatever_is_current|tmap_diff_gpu/gclaunch_and_the_driver_agree_on_every_description'
      faulting='tma_rule/an_unaligned_innermost_coordinate_is_a_named_kernel_fault'
      one() { # suite tool filter log
        timeout ${SANITIZE_TIMEOUT:-150} compute-sanitizer --tool "$2" --target-processes all \
          --error-exitcode 99 "$1" --jobs 1 --filter "$3" >"$4" 2>&1
        echo "exit $?" >>"$4"
      }
      s_dir=$out/sanitize.d
      mkdir -p "$s_dir"
      runs=()
      for t in "$build"/tests/gpu_*; do
        [[ -x $t && ! -d $t ]] || continue
        tools=memcheck
        [[ ${SANITIZE_RACECHECK:-1} == 1 && $t != *concurrency* && $t != *dlpack* && $t != *smoke* ]] && tools="memcheck racecheck"
        for tool in $tools; do runs+=("$t $tool"); done
      done
      { timeout ${SANITIZE_TIMEOUT:-150} compute-sanitizer --error-exitcode 99 "$build/tools/gclaunch" demo
        echo "exit $?"; } >"$s_dir/demo.log" 2>&1 &
      n=1
      for r in "${runs[@]}"; do
        set -- $r
        one "$1" "$2" "!($purposeful|$faulting)" "$s_dir/$(basename "$1").$2.log" &
        if (( ++n >= ${SANITIZE_JOBS:-4} )); then wait -n; n=$((n - 1)); fi
      done
      wait
      { for f in "$s_dir"/gpu_*.log; do
          name=$(basename "$f" .log)
          echo "== compute-sanitizer (defaults) --tool ${name##*.} ${name%.*}"
          grep -E 'Program hit|ERROR SUMMARY|Synthesis|^exit' "$f" | sed -E 's/^=+ //' | sort | uniq -c
        done
        echo "== compute-sanitizer (defaults) gclaunch demo"
        grep -E 'Program hit|ERROR SUMMARY|^verify|^demo|^exit' "$s_dir/demo.log" | sed -E 's/^=+ //' | sort | uniq -c
        echo "== the purposeful tests, on their own (expected API errors listed)"
        for t in gpu_module gpu_launch gpu_tmap_diff; do
          echo "-- $t"
          timeout ${SANITIZE_TIMEOUT:-150} compute-sanitizer --tool memcheck --target-processes all \
            "$build/tests/$t" --jobs 1 --filter "@($purposeful)" >"$s_dir/$t.purposeful" 2>&1
          grep -E 'Program hit|ERROR SUMMARY|Synthesis' "$s_dir/$t.purposeful" | sed -E 's/^=+ //' | sort | uniq -c
        done; } 2>&1 | tee "$out/sanitize.log"
      rm -rf "$s_dir"
      ;;
    cli)
      # gclaunch run with scalars, buffers (an offset view) and tensor maps; the host values to
      # compare with are printed next to them.
      { g=$build/tools/gclaunch k=$build/kernels
        echo '$ gclaunch run smoke.sm_90.cubin saxpy ... (y = 2 x + y, x = iota offset view, y = zeros)'
        "$g" run "$k/smoke.sm_90.cubin" saxpy --grid 4 --block 256 \
          --signature "f32 a, const f32* align(16) x, f32* y, u64 n" \
          --arg f32:2 --arg x=buf:f32:1024@4=iota --arg y=buf:f32:1024 --arg u64:1024 --repeat 10
        echo "host: after 10 launches y = 10 * 2 x, sum(y) = 20 * sum(0..1023) = $((20 * 1023 * 1024 / 2))"
        python3 -c "
import struct
items = b''.join(struct.pack('<4I3i3i', 0, 1, 2, 16 * 16 * 4, 16 * (k % 4), 16 * (k // 4), 0,
                             16 * (k % 4), 16 * (k // 4), 0) for k in range(16))
open('/tmp/work.bin', 'wb').write(items)"
        echo '$ gclaunch run megakernel.sm_90.cubin megakernel_copy_16 ... (b = a through TMA, maps picked by run-time index)'
        "$g" run "$k/megakernel.sm_90.cubin" megakernel_copy_16 --grid 16 --block 32 \
          --signature "grid_constant tensormap[16] maps, const void* work, u32 n_work" \
          --arg "tmap:a,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b:box=16x16" --arg work=buf:u8:640=@/tmp/work.bin \
          --arg u32:16 --buffer a=buf:f32:64x64@4=rand --buffer b=buf:f32:64x64
        echo "host: b must equal a (same sum and FNV-1a hash)"; } 2>&1 | tee "$out/cli.log"
      ;;
    tmaps)
      # Issue 36: the tensor-map preflight against the driver, longer than gpu_tmap_diff: two
      # fresh-seeded runs of bench_tmap_diff (TMAP_COUNT descriptions each, 400,000 by default;
      # A and B must be 0), then the structured im2col probe (bench/experiments/im2col_probe.py,
      # its CSV replayed through gcl_tensormap_check is the check of any new im2col rule).
      # $out/tmaps.log and $out/tmaps.tar.gz.
      m=$out/tmaps
      mkdir -p "$m"
      { nvidia-smi --query-gpu=name,driver_version --format=csv 2>&1
        for run in 1 2; do
          echo "== bench_tmap_diff --count ${TMAP_COUNT:-400000} (run $run)"
          timeout 150 "$build/bench/bench_tmap_diff" --count "${TMAP_COUNT:-400000}" --show 4 \
            ${TMAP_DUMP:+--dump "$m/dump$run.csv"}
          echo "bench_tmap_diff exit $?"
        done
        echo "== im2col_probe.py"
        timeout 120 python3 "$src/bench/experiments/im2col_probe.py" "$m/probe.csv"
        echo "im2col_probe exit $?"; } 2>&1 | tee "$m/tmaps.log" | grep -vE '^(A|B) \(' | tail -60
      cp "$m/tmaps.log" "$out/tmaps.log"
      tar -C "$out" -czf "$out/tmaps.tar.gz" tmaps && rm -rf "$m"
      ;;
    wheel)
      # The installed wheel on the GPU: GCL_WHEEL (default: the one wheel under build/dist/, built on
      # a CPU runner with `python3 -m build --no-isolation --wheel --outdir build/dist .`) into a
      # fresh venv of this python3 that sees the runner's own site-packages (torch) through a .pth
      # file; then the Python GPU suite run from outside the source tree against the INSTALLED
      # package (checked: gclaunch.__file__ is in the venv), with the kit's kernels. $out/wheel.log.
      { whl=${GCL_WHEEL:-$(ls build/dist/gclaunch-*.whl 2>/dev/null | head -1)}
        kit=$(cd "$build" && pwd) tests=$(cd "$src/tests/python" && pwd) w=$(mktemp -d)
        if [[ ! -f $whl ]]; then echo "wheel: no wheel (GCL_WHEEL or build/dist/gclaunch-*.whl)"; false
        else
          python3 -m venv "$w/venv" &&
          python3 -c 'import site; print("\n".join(site.getsitepackages()))' \
            >"$("$w/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/runner.pth" &&
          "$w/venv/bin/python" -m pip install --no-index --no-deps -q "$whl" &&
          cd "$w" && env -u PYTHONPATH GCL_BUILD_DIR="$kit" GCL_PYTHON="$w/venv/bin/python" \
            "$w/venv/bin/python" "$tests/run_installed.py" "$w/venv" "$tests/test_gpu.py"
        fi
        echo "wheel exit $?"; } 2>&1 | tee "$out/wheel.log" | tail -30
      ;;
    pyfuzz)
      # Issue 50: the Python API fuzzer (tests/python/fuzz_api.py --real) against the real driver:
      # PYFUZZ_RUNS runs (2) of PYFUZZ_SECONDS (120) each, each with a fresh seed (printed; rerun
      # one with PYFUZZ_SEED=N). Every batch of cases runs in a forked child that measures free
      # device memory (cuMemGetInfo through ctypes on libcuda) after a warm-up and again after its
      # cases' objects are gone: a crash, a contract violation (a sequence step labelled ok that
      # was refused, misuse accepted, an exception outside the contract) or device memory grown
      # by more than GCL_FUZZ_LEAK_MB (16) fails the run. $out/pyfuzz.log; the last lines of each
      # run are the executions per target, the step outcomes, the memory deltas and ok|FAIL.
      { b=$(cd "$build" && pwd)
        nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv 2>&1
        for run in $(seq "${PYFUZZ_RUNS:-2}"); do
          echo "== fuzz_api.py --real --seconds ${PYFUZZ_SECONDS:-120} (run $run)"
          env -u GCL_LIBCUDA PYTHONPATH="$b/python:$src/tests/python" GCL_BUILD_DIR="$b" \
            timeout $(( ${PYFUZZ_SECONDS:-120} + 360 )) python3 "$src/tests/python/fuzz_api.py" --real \
            --no-save --seconds "${PYFUZZ_SECONDS:-120}" ${PYFUZZ_SEED:+--seed "$PYFUZZ_SEED"}
          echo "fuzz_api exit $?"
        done
        nvidia-smi --query-gpu=memory.used --format=csv 2>&1; } 2>&1 | tee "$out/pyfuzz.log" | grep -v '^    ' | tail -80
      ;;
    persistent) # examples/persistent.c: gclaunch.h only, no libcuda link (prints "persistent: OK ...")
      { readelf -d "$build/examples/example_persistent" | grep NEEDED
        "$build/examples/example_persistent" "$build/kernels/persistent.sm_90.cubin"
        echo "example_persistent exit $?"; } 2>&1 | tee "$out/persistent.log"
      ;;
    nvshmem)
      # Issue 46 (item 8 and the launch cost) and issue 49: bench_nvshmem_bw through
      # bench/nvshmem_bw.sh, which builds bench/nvshmem_bw.cu on this machine from the NVSHMEM wheel.
      # One PE (process) per GPU, two sharing the GPU when there is one (time-sliced processes,
      # said in the output): peer bandwidth through peer tensor maps picked by run-time index,
      # nvshmemx_getmem_block / putmem_block in a kernel and the copy engine on the same bytes,
      # every byte verified on every PE; then PE 0 times gcl_launch of an attached NVSHMEM kernel
      # against cuLaunchKernelEx (target <= 1.02x). A one-PE run follows (LOCAL numbers: one PE
      # reading itself, beside the peer ones). Extra options:
      # NVSHMEM_BW_ARGS (e.g. "--bytes 256M"). $out/nvshmem.log.
      { nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
        sh "$src/scripts/nvshmem_device.sh" "$build/tools/gclaunch" --where 2>&1
        echo "== bench/nvshmem_bw.sh, every GPU"
        NVSHMEM_DISABLE_NVLS=1 sh "$src/bench/nvshmem_bw.sh" "$build/bench/bench_nvshmem_bw" \
          --launch-reps 101 ${NVSHMEM_BW_ARGS:-}
        echo "nvshmem_bw exit $?"
        echo "== bench/nvshmem_bw.sh --pes 1 (local)"
        NVSHMEM_DISABLE_NVLS=1 sh "$src/bench/nvshmem_bw.sh" "$build/bench/bench_nvshmem_bw" \
          --pes 1 --launch-reps 0 ${NVSHMEM_BW_ARGS:-}
        echo "nvshmem_bw --pes 1 exit $?"; } 2>&1 | tee "$out/nvshmem.log" | tail -80
      ;;
    *) echo "unknown stage $stage" >&2 ;;
  esac
done
