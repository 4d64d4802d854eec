#!/usr/bin/env python3
"""Structured sweeps of cuTensorMapEncodeIm2col's verdicts, for finding the rules the driver
applies beyond its documentation (issue 36). Random descriptions (bench_tmap_diff --dump) show
that a rule exists; these sweeps vary one or two arguments at a time around a description the
driver encodes, so that the boundary can be read off.

    python3 im2col_probe.py OUT.csv [FAMILY ...]

Writes one CSV line per call: family, the driver's arguments (TMA order: dimension 0 is the
channels, the last one the batch), and the CUresult. Needs libcuda.so.1 (a GPU machine); no
memory: encoding reads only its arguments (it does need a current context)."""
import ctypes as C
import csv
import itertools
import sys

cuda = C.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
_dev, _ctx = C.c_int(), C.c_void_p()  # the encode refuses without a current context (201)
assert cuda.cuDeviceGet(C.byref(_dev), 0) == 0
assert cuda.cuDevicePrimaryCtxRetain(C.byref(_ctx), _dev) == 0
assert cuda.cuCtxSetCurrent(_ctx) == 0
enc = cuda.cuTensorMapEncodeIm2col
enc.restype = C.c_int
U64x5, U32x5, I32x3 = C.c_uint64 * 5, C.c_uint32 * 5, C.c_int32 * 3
EB = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}
ADDRESS = 0x7F0000000000
out = csv.writer(open(sys.argv[1], "w", newline=""))
out.writerow(["family", "type", "rank", "dims", "strides", "estrides", "lower", "upper",
              "channels", "pixels", "interleave", "swizzle", "rc"])
tm = (C.c_uint8 * 128)()


def probe(family, dims, lower, upper, channels=16, pixels=32, estr=None, typ=7, il=0, sw=0,
          strides=None, address=ADDRESS):
    rank = len(dims)
    eb = EB[typ]
    if strides is None:  # dense, row-major
        strides, acc = [], eb
        for d in dims[:-1]:
            acc *= d
            strides.append(acc)
    estr = estr or [1] * rank
    rc = enc(tm, typ, rank, C.c_void_p(address), U64x5(*dims), U64x5(*strides),
             I32x3(*lower), I32x3(*upper), channels, pixels, U32x5(*estr), il, sw, 0, 0)
    out.writerow([family, typ, rank, " ".join(map(str, dims)), " ".join(map(str, strides)),
                  " ".join(map(str, estr)), " ".join(map(str, lower)),
                  " ".join(map(str, upper)), channels, pixels, il, sw, rc])
    return rc


def f_rank3():  # corners x spatial size x traversal stride
    for w, e1, lo, up in itertools.product((1, 2, 3, 4, 5, 8, 13), (1, 2, 3, 4),
                                            range(-20, 21), range(-20, 21)):
        probe("rank3", [64, w, 2], [lo], [up], estr=[1, e1, 1])


def f_rank3_pixels():  # corners x pixels x batch
    for w, n, px, lo, up in itertools.product((1, 3, 8), (1, 3), (1, 7, 32, 256, 1024),
                                              range(-10, 11), range(-10, 11)):
        probe("rank3_pixels", [64, w, n], [lo], [up], pixels=px)


def f_rank3_other_strides():  # do the channel and batch traversal strides matter?
    for w, e0, e2, lo, up in itertools.product((1, 3, 8), (1, 2, 5), (1, 3), range(-10, 11),
                                               range(-10, 11)):
        probe("rank3_estr", [64, w, 2], [lo], [up], estr=[e0, 1, e2])


def f_rank3_edges():  # the corner limits
    vals = (-32769, -32768, -32767, -1000, -1, 0, 1, 1000, 32766, 32767, 32768)
    for w, lo, up in itertools.product((1, 10, 40000, 70000), vals, vals):
        probe("rank3_edges", [64, w, 2], [lo], [up])


def f_rank4():
    c = (-6, -3, -1, 0, 1, 3, 6)
    for w, h, e1, e2 in itertools.product((1, 3, 8), (1, 3, 8), (1, 2, 3), (1, 2, 3)):
        for lo0, up0, lo1, up1 in itertools.product(c, c, c, c):
            probe("rank4", [64, w, h, 2], [lo0, lo1], [up0, up1], estr=[1, e1, e2, 1])


def f_rank5():
    c = (-5, -1, 0, 2)
    for w, h, d, e in itertools.product((1, 4), (1, 4), (1, 4), (1, 2)):
        for lo in itertools.product(c, c, c):
            for up in itertools.product(c, c, c):
                probe("rank5", [64, w, h, d, 2], list(lo), list(up), estr=[1, e, e, e, 1])


def f_big():  # huge sizes in every position
    sizes = (1 << 16, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, 1 << 33)
    cs = (-32768, -3, 0, 3, 32767)
    for pos, big, lo, up, e in itertools.product(range(3), sizes, cs, cs, (1, 3)):
        dims = [16, 5, 2]
        dims[pos] = big
        probe("big3", dims, [lo], [up], estr=[1, e, 1])
    cs = (-128, -3, 0, 3, 127)
    for pos, big, lo, up in itertools.product(range(4), sizes, cs, cs):
        dims = [16, 5, 6, 2]
        dims[pos] = big
        probe("big4", dims, [lo, 1], [up, -1])
        probe("big4", dims, [1, lo], [-1, up])


def f_channels():  # channels x C x channel traversal stride x type
    for typ, c0, e0 in itertools.product((0, 6, 7, 8), (1, 4, 16, 17, 64, 256, 1000), (1, 2, 3, 8)):
        eb = EB[typ]
        for ch in range(16 // eb, 257, 16 // eb):
            probe("channels", [c0, 5, 2], [0], [0], channels=ch, estr=[e0, 1, 1], typ=typ)


def f_layout():  # interleave x swizzle x channels x type
    for typ, il, sw in itertools.product((0, 6, 7, 8), (0, 1, 2), (0, 1, 2, 3)):
        eb = EB[typ]
        for ch in range(16 // eb, 257, 16 // eb):
            for c0 in (ch, 64, 256):
                probe("layout", [c0, 5, 2], [-1], [1], channels=ch, typ=typ, il=il, sw=sw,
                      address=ADDRESS)


def f_strides():  # permuted and padded strides
    for s0, s1, lo, up in itertools.product((256, 272, 512, 4096, 16), (256, 512, 2048, 16, 1 << 20),
                                            (-4, 0, 4), (-4, 0, 4)):
        probe("strides", [64, 8, 2], [lo], [up], strides=[s0, s1])


def f_interleave():  # which dimension each corner is measured against with interleave
    for il, c0, w, lo, up in itertools.product((1, 2), (8, 16, 24), (1, 3, 8), range(-12, 13),
                                               range(-12, 13)):
        probe("interleave3", [c0, w, 2], [lo], [up], channels=8, il=il)
    c = (-6, -2, 0, 2, 6)
    for il, c0, w, h in itertools.product((1, 2), (8, 16), (1, 4, 8), (1, 4)):
        for lo0, up0, lo1, up1 in itertools.product(c, c, c, c):
            probe("interleave4", [c0, w, h, 2], [lo0, lo1], [up0, up1], channels=8, il=il)


FAMILIES = {k[2:]: v for k, v in dict(globals()).items() if k.startswith("f_")}
for name in sys.argv[2:] or FAMILIES:
    FAMILIES[name]()
