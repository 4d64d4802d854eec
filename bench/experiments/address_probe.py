#!/usr/bin/env python3
"""Where the driver's encode stops accepting a global address (issue 36): the highest 16-byte
aligned address cuTensorMapEncodeTiled / Im2col take, and whether it depends on the tensor's
extent, rank, element type, interleave or mode. Prints one line per question.

    python3 address_probe.py

Needs libcuda.so.1 and a current context (no memory: the encode reads only its arguments)."""
import ctypes as C

cuda = C.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
_dev, _ctx = C.c_int(), C.c_void_p()
assert cuda.cuDeviceGet(C.byref(_dev), 0) == 0
assert cuda.cuDevicePrimaryCtxRetain(C.byref(_ctx), _dev) == 0
assert cuda.cuCtxSetCurrent(_ctx) == 0
U64x5, U32x5, I32x3 = C.c_uint64 * 5, C.c_uint32 * 5, C.c_int32 * 3
tm = (C.c_uint8 * 128)()
EB = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}


def strides_of(dims, eb):
    s, acc = [], eb
    for d in dims[:-1]:
        acc *= d
        s.append(acc)
    return s


def tiled(addr, dims, typ=7, il=0, box=None, strides=None):
    eb = EB[typ]
    strides = strides if strides is not None else strides_of(dims, eb)
    box = box or [min(d, 8) for d in dims]
    if (box[0] * eb) % 16:
        box[0] = 16 // eb
    return cuda.cuTensorMapEncodeTiled(tm, typ, len(dims), C.c_void_p(addr), U64x5(*dims),
                                       U64x5(*strides), U32x5(*box), U32x5(*[1] * 5), il, 0, 0, 0)


def im2col(addr, dims, typ=7, il=0):
    eb = EB[typ]
    r = len(dims)
    return cuda.cuTensorMapEncodeIm2col(tm, typ, r, C.c_void_p(addr), U64x5(*dims),
                                        U64x5(*strides_of(dims, eb)), I32x3(*[0] * 3),
                                        I32x3(*[0] * 3), 16 // eb * 2, 8, U32x5(*[1] * 5), il,
                                        0, 0, 0)


def highest(f, align=16):
    """The highest aligned address f accepts, assuming acceptance is monotone (checked around)."""
    lo, hi = 0, (1 << 64) - align
    if f(lo) != 0:
        return None
    if f(hi) == 0:
        return hi
    while hi - lo > align:  # f(lo) == 0, f(hi) != 0
        mid = (lo + hi) // 2 // align * align
        if mid == lo:
            break
        if f(mid) == 0:
            lo = mid
        else:
            hi = mid
    return lo


def extent(dims, strides, eb):
    return (dims[-1] - 1) * strides[-1] + dims[0] * eb if len(dims) > 1 else dims[0] * eb


print(f"== address 0 (a template map): tiled {tiled(0, [64])}, im2col {im2col(0, [64, 8, 2])}, "
      f"address 16: tiled {tiled(16, [64])}")
print("== each power of two: rank-1 f32 [64], box 8 (tiled)")
row = []
for k in range(4, 64):
    a = 1 << k
    row.append(f"2^{k}:{tiled(a, [64])}/{tiled(a - 16 if a > 16 else a, [64])}")
print(" ".join(row))
print("== the highest accepted address, by extent (tiled f32 rank 2 [64, n], dense)")
for e in (0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40):
    n = max(1, (1 << e) // 256)
    dims = [64, n]
    h = highest(lambda a: tiled(a, dims))
    ext = extent(dims, strides_of(dims, 4), 4)
    print(f"n={n} extent={ext:#x} highest={h if h is None else hex(h)}"
          + ("" if h is None else f" highest+extent={h + ext:#x} last_byte={h + ext - 1:#x}"))
print("== by stride alone (rank 2 [64, 2], row stride 2^s)")
for s in (8, 16, 24, 32, 36, 39):
    h = highest(lambda a: tiled(a, [64, 2], strides=[1 << s]))
    print(f"stride=2^{s} highest={h if h is None else hex(h)}")
print("== by rank, type, interleave, mode")
cases = [("tiled r1 u8", lambda a: tiled(a, [256], typ=0)),
         ("tiled r3 f16", lambda a: tiled(a, [64, 4, 4], typ=6)),
         ("tiled r5 f64", lambda a: tiled(a, [8, 2, 2, 2, 2], typ=8)),
         ("tiled r3 f32 il16", lambda a: tiled(a, [4, 8, 8], il=1, box=[4, 8, 8])),
         ("tiled r3 f32 il32", lambda a: tiled(a, [8, 8, 8], il=2, box=[8, 8, 8])),
         ("im2col r3 f32", lambda a: im2col(a, [64, 8, 2])),
         ("im2col r4 f16", lambda a: im2col(a, [64, 8, 8, 2], typ=6)),
         ("im2col r5 f32", lambda a: im2col(a, [64, 4, 4, 4, 2])),
         ("im2col r4 f32 il16", lambda a: im2col(a, [4, 8, 8, 2], il=1))]
for name, f in cases:
    al = 32 if "il32" in name else 16
    h = highest(f, al)
    print(f"{name}: highest={h if h is None else hex(h)}")
print("== monotone? random aligned addresses above and below the rank-1 bound")
import random
rng = random.Random(1)
h = highest(lambda a: tiled(a, [64]))
bad = 0
for _ in range(20000):
    a = rng.randrange(0, 1 << 64) // 16 * 16
    want = 0 if a <= h else 1
    if (tiled(a, [64]) == 0) != (a <= h):
        bad += 1
        if bad < 5:
            print(f"  exception {a:#x} rc {tiled(a, [64])}")
print(f"rank-1 bound {h:#x}: {bad} exceptions in 20000 random addresses")
print("== cuTensorMapReplaceAddress: the same bound?")
for base in ((1 << 57) - 16, 1 << 20):
    assert tiled(base, [64]) == 0
    row = []
    for a in (0, (1 << 57) - 16, 1 << 57, (1 << 57) + 16, 1 << 63, (1 << 64) - 16):
        assert tiled(base, [64]) == 0
        row.append(f"{a:#x}:{cuda.cuTensorMapReplaceAddress(tm, C.c_void_p(a))}")
    print(f"encoded at {base:#x}, replaced to " + " ".join(row))
