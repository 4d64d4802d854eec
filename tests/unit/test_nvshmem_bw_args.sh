#!/bin/sh
# bench_nvshmem_bw's command line on the CPU (issue 46): --help, every refusal (exit 2, one line
# naming the option, the value and what is expected), and the no-GPU path with the driver made
# unreachable (GCL_LIBCUDA points nowhere, so this runs the same on a GPU runner): exit 0 saying
# so, exit 1 under GCL_REQUIRE_GPU=1. Then bench/nvshmem_bw.sh's own checks that need no GPU; and
# the signatures the program declares (--signatures) against a cubin of bench/nvshmem_bw.cu built
# here with stand-in NVSHMEM headers (tests/unit/nvshmem_stub), through `gclaunch inspect
# --signature`: every offset and size as the device lays them out (exit 77 without nvcc).
# usage: test_nvshmem_bw_args.sh BENCH_EXE GCLAUNCH SOURCE_ROOT
exe=$1 gcl=$2 root=$3 sh_=$3/bench/nvshmem_bw.sh
fail() { echo "FAIL: $*"; exit 1; }
out=$("$exe" --help) || fail "--help exited $?"
echo "$out" | grep -q "^usage: bench_nvshmem_bw --cubin FILE" || fail "--help: $out"
echo "$out" | grep -q "the numbers are then local bandwidth" || fail "--help does not say one PE is local"
# refused ARGS... EXPECTED: exit 2 and EXPECTED in the first line of stderr.
refused() {
  want=$1
  shift
  err=$("$exe" "$@" 2>&1 >/dev/null)
  rc=$?
  [ $rc -eq 2 ] || fail "$* exited $rc, expected 2: $err"
  first=$(echo "$err" | head -1)
  case $first in *"$want"*) ;; *) fail "$*: '$first' lacks '$want'" ;; esac
  echo "$err" | grep -q "^usage:" || fail "$*: no usage after the refusal"
  echo "ok: $* -> $first"
}
refused "--cubin (missing): expected the device-linked cubin"
refused "--cubin (missing): expected a file" --cubin
refused "--pes 17: expected an integer in 1 ... 16" --cubin k --pes 17
refused "--pes 0: expected an integer in 1 ... 16" --cubin k --pes 0
refused "--pes 2x: expected an integer in 1 ... 16" --cubin k --pes 2x
refused "--reps 0: expected an integer in 1 ... 100000" --cubin k --reps 0
refused "--iters 1001: expected an integer in 1 ... 1000" --cubin k --iters 1001
refused "--warmup -1: expected an integer in 0 ... 100000" --cubin k --warmup -1
refused "--launches (missing): expected an integer" --cubin k --launches
refused "--bytes 64Q: expected a positive size" --cubin k --bytes 64Q
refused "--bytes 0: expected a positive size" --cubin k --bytes 0
refused "--bytes -8K: expected a positive size" --cubin k --bytes -8K
refused "--chunk 99999999999999999999: expected a positive size" --cubin k --chunk 99999999999999999999
refused "--bytes 12345: expected a multiple of 8K (one TMA tile) and of --chunk" --cubin k --bytes 12345
refused "--bytes 65536: expected a multiple of 8K (one TMA tile) and of --chunk" --cubin k --bytes 64K --chunk 48K
refused "--bytes 1099511627776: expected less than 1T" --cubin k --bytes 1024G
refused "--methods tma,dma: expected tma, get, put or copy" --cubin k --methods tma,dma
refused "--methods copy,copy: expected tma, get, put or copy" --cubin k --methods copy,copy
refused "--methods get,: expected tma, get, put or copy" --cubin k --methods get,
refused "--methods (missing): expected tma" --cubin k --methods
refused "argument --bogus: expected one of the options below" --cubin k --bogus
# Valid arguments, no driver: a plain skip, never a pass under GCL_REQUIRE_GPU=1. Both set
# GCL_REQUIRE_GPU themselves: a GPU runner exports GCL_REQUIRE_GPU=1 to every test (issue 55).
out=$(GCL_LIBCUDA=/nonexistent/libcuda.so.1 GCL_REQUIRE_GPU=0 "$exe" --cubin k --bytes 8K --chunk 8K --pes 1) ||
  fail "no GPU: exit $? (expected 0): $out"
[ "$out" = "bench_nvshmem_bw: skipped, no usable GPU" ] || fail "no GPU: '$out'"
out=$(GCL_LIBCUDA=/nonexistent/libcuda.so.1 GCL_REQUIRE_GPU=1 "$exe" --cubin k)
[ $? -eq 1 ] || fail "no GPU under GCL_REQUIRE_GPU=1: not exit 1: $out"
[ "$out" = "bench_nvshmem_bw: FAIL (GCL_REQUIRE_GPU=1): no usable GPU" ] || fail "no GPU, required: '$out'"
echo "ok: no GPU -> skipped (exit 0; 1 under GCL_REQUIRE_GPU=1)"
# Two PEs on the fake driver's one device (FAKECUDA_LIB from the build): both processes start
# on GPU 0 and the output says so; with no NVSHMEM to open, each PE fails by name and the run
# exits 1 (tests/common/pe_spawn.c ends the PE waiting for the id).
if [ -n "${FAKECUDA_LIB:-}" ]; then
  out=$(GCL_LIBCUDA=$FAKECUDA_LIB FAKECUDA_DEVICES=1 GCL_NVSHMEM_PATH=/nonexistent/libnvshmem_host.so.3 \
        "$exe" --cubin k 2>&1)
  [ $? -eq 1 ] || fail "2 PEs on one GPU without NVSHMEM: not exit 1: $out"
  echo "$out" | grep -qx "bench_nvshmem_bw: 2 PEs on 1 GPU (2 processes share GPU 0, time-sliced)" ||
    fail "the default on one GPU is not 2 PEs sharing it: $out"
  echo "$out" | grep -q "PE 0: gcl_pe_unique_id_create: .*not found" || fail "PE 0's failure unnamed: $out"
  echo "$out" | grep -q "FAILED" || fail "no FAILED line: $out"
  echo "ok: one GPU -> 2 PEs sharing it, said; without NVSHMEM each PE fails by name"
fi
# The wrapper: --help goes to the program before any wheel or GPU is looked for; a missing
# program is refused.
out=$(sh "$sh_" "$exe" --help) || fail "nvshmem_bw.sh --help exited $?"
echo "$out" | grep -q "^usage: bench_nvshmem_bw" || fail "nvshmem_bw.sh --help: $out"
out=$(sh "$sh_" /nonexistent/bench_nvshmem_bw 2>&1)
[ $? -eq 2 ] || fail "nvshmem_bw.sh with a missing program: not exit 2: $out"
echo "ok: nvshmem_bw.sh --help, missing program"
# Signatures against the device's parameter records.
nvcc=$(command -v nvcc || echo "${CUDA_PATH:-/usr/local/cuda}/bin/nvcc")
[ -x "$nvcc" ] || { echo "SKIP: no nvcc to build bench/nvshmem_bw.cu (the checks above passed)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-bw-sig.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# Built by scripts/nvshmem_device.sh, the one build of NVSHMEM device code, against a stand-in
# NVSHMEM root: the stub headers, a libnvshmem_device.a of stub.cu, and the fake host library as
# lib/libnvshmem_host.so.3 (where gclaunch info says NVSHMEM is, the script looks beside it).
stub=$root/tests/unit/nvshmem_stub
mkdir -p "$tmp/nv/include" "$tmp/nv/lib"
cp "$stub/nvshmem.h" "$stub/nvshmemx.h" "$tmp/nv/include/"
"$nvcc" -arch=sm_90 -rdc=true -dc -I"$stub" "$stub/stub.cu" -o "$tmp/stub.o" &&
  ar rcs "$tmp/nv/lib/libnvshmem_device.a" "$tmp/stub.o" || fail "building the stand-in device library"
if [ -n "${FAKENVSHMEM_LIB:-}" ]; then
  ln -s "$(cd "$(dirname "$FAKENVSHMEM_LIB")" && pwd -P)/$(basename "$FAKENVSHMEM_LIB")" \
    "$tmp/nv/lib/libnvshmem_host.so.3"
  out=$(GCL_NVSHMEM_PATH= NVSHMEM_HOME="$tmp/nv" GCL_PYTHON=/nonexistent PATH=/usr/bin:/bin \
        GCL_NVSHMEM_ARCH=90 sh "$root/scripts/nvshmem_device.sh" "$gcl" "$root/bench/nvshmem_bw.cu" "$tmp/bw.cubin" 2>"$tmp/err") ||
    fail "scripts/nvshmem_device.sh exited $?: $out $(cat "$tmp/err")"
  [ "$out" = "GCL_NVSHMEM_PATH=$tmp/nv/lib/libnvshmem_host.so.3" ] || fail "nvshmem_device.sh printed '$out'"
  echo "ok: scripts/nvshmem_device.sh found NVSHMEM through gclaunch info (NVSHMEM_HOME) and built the cubin"
  rm -f "$tmp/nv/lib/libnvshmem_device.a"
  out=$(NVSHMEM_HOME="$tmp/nv" GCL_PYTHON=/nonexistent PATH=/usr/bin:/bin sh "$root/scripts/nvshmem_device.sh" "$gcl" --where 2>&1)
  [ $? -eq 77 ] && echo "$out" | grep -q "has no lib/libnvshmem_device.a" || fail "no device library: '$out'"
  echo "ok: nvshmem_device.sh without a device library beside the host one -> skipped, saying so"
else
  "$nvcc" -arch=sm_90 -rdc=true -dc -I"$stub" "$root/bench/nvshmem_bw.cu" -o "$tmp/bw.o" &&
    "$nvcc" -arch=sm_90 -dlink -cubin "$tmp/bw.o" "$tmp/stub.o" -o "$tmp/bw.cubin" ||
    fail "building bench/nvshmem_bw.cu with the stand-in headers"
fi
"$exe" --signatures >"$tmp/sigs" || fail "--signatures exited $?"
[ "$(wc -l <"$tmp/sigs")" -eq 4 ] || fail "--signatures: $(cat "$tmp/sigs")"
while IFS='|' read -r k sig; do
  out=$("$gcl" inspect "$tmp/bw.cubin" --kernel "$k" --signature "$sig" 2>&1) ||
    fail "$k: the cubin disagrees with '$sig': $out"
  echo "$out" | grep -q "1 shown" || fail "$k: not in the cubin: $out"
  echo "ok: $k matches '$sig'"
done <"$tmp/sigs"
# A wrong one is refused (the check can fail): launch_probe's idx declared 64-bit.
"$gcl" inspect "$tmp/bw.cubin" --kernel launch_probe --signature "i32* out, i64 idx" >/dev/null 2>&1 &&
  fail "a wrong signature passed gclaunch inspect"
echo "ok: a wrong signature is refused"
