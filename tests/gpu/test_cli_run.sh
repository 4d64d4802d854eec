#!/bin/sh
# gclaunch run on a GPU: results are checked against values computed here (python3), not against
# what the tool says about itself. Exits 77 (skipped) when there is no usable GPU.
#   test_cli_run.sh GCLAUNCH KERNEL_DIR
gclaunch=$1 kdir=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-cligpu.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "python3 is needed: skipped"; exit 77; }
seed=${GCL_TEST_SEED:-$(date +%s)}
echo "seed $seed"
failed=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failed=1; }

run() { # run NAME ARGS...: gclaunch run --json ... > $tmp/NAME.json; skips the test without a GPU
  name=$1; shift
  "$gclaunch" run "$@" --json >"$tmp/$name.json" 2>"$tmp/$name.err"
  rc=$?
  if [ $rc = 2 ] && grep -q "no GPU to run on" "$tmp/$name.err"; then
    cat "$tmp/$name.err"; exit 77
  fi
  [ $rc = 0 ] || { bad "$name: exit $rc"; cat "$tmp/$name.err" "$tmp/$name.json"; return 1; }
}

# Python checks: $1 the JSON result, then a script; "check(cond, what)" collects failures.
py() {
  json=$1; shift
  python3 - "$json" "$tmp" "$seed" <<PY
import json, struct, sys, random
r = json.load(open(sys.argv[1])); tmp = sys.argv[2]; seed = int(sys.argv[3])
def fnv(b):
    h = 0xcbf29ce484222325
    for x in b: h = ((h ^ x) * 0x100000001b3) & 0xffffffffffffffff
    return "0x%016x" % h
def buf(name): return [b for b in r["buffers"] if b["name"] == name][0]
def f32(v): return struct.unpack("<f", struct.pack("<f", v))[0]
bad = []
def check(c, what):
    if not c: bad.append(what)
$(cat)
assert r["launched"] is True and r["time_us"]["median"] > 0, r
# Each launch's events lie inside its host-clock interval, so the medians are ordered too.
assert 0 < r["kernel_us"]["median"] <= r["time_us"]["median"], (r["kernel_us"], r["time_us"])
if bad: print("\n".join(bad)); sys.exit(1)
PY
}

# 1. saxpy, x an offset view (byte_offset 16) of iota, y from a file of random floats:
#    y = 2 x + y, exact in f32 (2 x is exact, one rounding either way, FMA or not).
python3 -c "
import random, struct, sys
random.seed($seed)
open('$tmp/y0.bin', 'wb').write(struct.pack('<4096f', *[random.uniform(-1, 1) for _ in range(4096)]))"
sig="f32 a, const f32* align(16) x, f32* y, u64 n"
if run saxpy "$kdir/smoke.sm_90.cubin" saxpy --grid 16 --block 256 --signature "$sig" \
     --arg f32:2 --arg x=buf:f32:4096@4=iota --arg "y=buf:f32:4096=@$tmp/y0.bin" --arg u64:4096 \
     --out "y=$tmp/y.bin"; then
  py "$tmp/saxpy.json" <<'PY' && ok "saxpy with an offset view and a file input" || bad "saxpy results"
y0 = struct.unpack("<4096f", open(tmp + "/y0.bin", "rb").read())
want = [f32(2.0 * i + y0[i]) for i in range(4096)]
got = struct.unpack("<4096f", open(tmp + "/y.bin", "rb").read())
check(list(got) == want, "y.bin differs from 2 x + y0")
out = open(tmp + "/y.bin", "rb").read()
check(buf("y")["fnv1a"] == fnv(out), "fnv1a of y")
# The tool sums in double in index order and prints 17 digits, so the sums agree to the last
# bit unless its order changes; any order differs by at most n * eps * sum|y| (~5e-13 relative
# for n = 4096), far below 1e-9. An earlier run failed here on a 9-digit print (~1e-9 relative
# of 1.7e7, absolute ~0.01); y.bin above already checks every element exactly.
check(abs(buf("y")["sum"] - sum(want)) <= 1e-9 * max(1.0, sum(abs(v) for v in want)), "sum of y")
check(buf("x")["sum"] == sum(range(4096)) and buf("x")["first"][:3] == [0, 1, 2], "x untouched")
check(buf("x")["offset"] == 4 and buf("x")["shape"] == [4096], "x shape/offset")
PY
fi

# 2. --repeat: every launch is timed and runs the kernel again (y = 5 * 2x from zeros).
if run repeat "$kdir/smoke.fatbin" saxpy --grid 4 --block 256 --repeat 5 \
     --arg f32:2 --arg x=buf:f32:1024=iota --arg y=buf:f32:1024 --arg u64:1024; then
  py "$tmp/repeat.json" <<'PY' && ok "--repeat 5 (fatbin, no signature)" || bad "--repeat"
check(r["repeat"] == 5 and r["time_us"]["min"] <= r["time_us"]["median"] <= r["time_us"]["max"], "times")
check(buf("y")["sum"] == 10 * sum(range(1024)) and buf("y")["first"][:3] == [0, 10, 20], "y = 10 x")
PY
fi

# 3. hex bytes into a by-value struct{i32,f64,i8} (24 bytes) and i16: the kernel echoes them.
hexs=0100000000000000000000000000f83f7f00000000000000
if run hex "$kdir/echo.sm_90.cubin" echo_struct --grid 1 --block 1 \
     --arg hex:$hexs --arg i16:-2 --arg out=buf:u8:26 --out "out=$tmp/echo.bin"; then
  py "$tmp/hex.json" <<PY && ok "hex bytes into a struct parameter" || bad "hex echo"
check(open(tmp + "/echo.bin", "rb").read() == bytes.fromhex("$hexs") + struct.pack("<h", -2), "echo bytes")
PY
fi

# 4. tensor maps into the elements of a tensormap[4] (echo kernel): a,b,a,b -> elements 0 and 2
#    are equal, 1 and 3 are equal, 0 and 1 differ; the f32 after the array is where the kernel
#    reads it.
msig="grid_constant tensormap[4] m, f32 f, u8* out"
if run maps4 "$kdir/echo.sm_90.cubin" echo_maps4 --grid 1 --block 1 --signature "$msig" \
     --arg tmap:a,b,a,b:box=16x16 --arg f32:1.5 --arg out=buf:u8:516 --out "out=$tmp/maps.bin" \
     --buffer a=buf:f32:64x64=iota --buffer b=buf:f32:64x64@4; then
  py "$tmp/maps4.json" <<'PY' && ok "tmap list into a tensormap[4]" || bad "tmap elements"
m = open(tmp + "/maps.bin", "rb").read()
e = [m[128 * i:128 * i + 128] for i in range(4)]
check(e[0] == e[2] and e[1] == e[3] and e[0] != e[1], "elements 0/2 and 1/3 equal, 0/1 differ")
check(any(e[0]) and any(e[1]), "descriptors are not zero")
check(m[512:516] == struct.pack("<f", 1.5), "f after the array")
PY
fi

# 5. TMA copies through a grid-constant tensormap[16] picked by run-time index (megakernel):
#    16 boxes of 16x16 f32 from a (an offset view, byte_offset 16) to b; b must equal a.
#    A work item is kernels/megakernel.cu's WorkItem, 40 bytes: u32 src, dst, rank, bytes (the
#    box's transaction bytes, 16 * 16 * 4), i32 sc[3] (source box coordinates, innermost first),
#    i32 dc[3] (destination). (A 32-byte packing here once shifted every item after the first, so
#    the kernel read map indices like 1024 out of tensormap[16]: CUDA_ERROR_ILLEGAL_INSTRUCTION.)
#    b's rows are 64 f32 = 256 bytes, a multiple of 16, as a TMA store destination needs.
python3 -c "
import struct
items = b''.join(struct.pack('<4I3i3i', 0, 1, 2, 16 * 16 * 4, 16 * (k % 4), 16 * (k // 4), 0,
                             16 * (k % 4), 16 * (k // 4), 0) for k in range(16))
assert len(items) == 16 * 40
open('$tmp/work.bin', 'wb').write(items)"
maps=a,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b
if run mega "$kdir/megakernel.sm_90.cubin" megakernel_copy_16 --grid 16 --block 32 \
     --signature "grid_constant tensormap[16] maps, const void* work, u32 n_work" \
     --arg "tmap:$maps:box=16x16" --arg "work=buf:u8:640=@$tmp/work.bin" --arg u32:16 \
     --buffer a=buf:f32:64x64@4=rand --buffer b=buf:f32:64x64 --out "a=$tmp/a.bin" --out "b=$tmp/b.bin"; then
  py "$tmp/mega.json" <<'PY' && ok "TMA copy via tmap: specs" || bad "TMA copy"
a = open(tmp + "/a.bin", "rb").read(); b = open(tmp + "/b.bin", "rb").read()
check(len(a) == 16384 and a == b, "b == a after the copy")
check(buf("b")["fnv1a"] == fnv(a) and buf("a")["fnv1a"] == fnv(a), "fnv1a of a and b")
check(len(set(a)) > 16, "a holds random data")
PY
fi
# 5b. The same copy through ONE grid-constant globals struct (megakernel_globals_16), every member
#     set by a field spec (--arg PATH=SPEC): g.maps (a tmap list over the array), g.work, g.n_work.
if run gmega "$kdir/megakernel.sm_90.cubin" megakernel_globals_16 --grid 16 --block 32 \
     --signature "grid_constant struct{tensormap[16] maps, const void* work, u32 n_work} g" \
     --arg "g.maps=tmap:$maps:box=16x16" --arg "g.work=buf:u8:640=@$tmp/work.bin" --arg g.n_work=u32:16 \
     --buffer a=buf:f32:64x64@4=rand --buffer b=buf:f32:64x64 --out "a=$tmp/ga.bin" --out "b=$tmp/gb.bin"; then
  py "$tmp/gmega.json" <<'PY' && ok "TMA copy through a globals struct set by field specs" || bad "globals copy"
a = open(tmp + "/ga.bin", "rb").read(); b = open(tmp + "/gb.bin", "rb").read()
check(len(a) == 16384 and a == b, "b == a after the copy")
check(len(set(a)) > 16, "a holds random data")
PY
fi
# 6. CUDA source with a C++ template kernel, named by its demangled name: the offline check finds
#    the mangled name (_Z2tkILi3EEvPfj) and the GPU launch must use it. p[i] = 3 + i for i < n.
cat >"$tmp/tk.cu" <<'CU'
template <int N> __global__ void tk(float *p, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = N + i;
}
template __global__ void tk<3>(float *, unsigned);
CU
if run tk "$tmp/tk.cu" 'tk<3>' --grid 2 --block 64 --signature "f32* p, u32 n" \
     --arg p=buf:f32:100 --arg u32:100 --out "p=$tmp/p.bin"; then
  py "$tmp/tk.json" <<'PY' && ok "template kernel from .cu by its demangled name" || bad "template kernel"
p = struct.unpack("<100f", open(tmp + "/p.bin", "rb").read())
check(all(p[i] == 3 + i for i in range(100)), "p[i] == 3 + i")
PY
fi
exit $failed
