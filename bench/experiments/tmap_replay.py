#!/usr/bin/env python3
"""Replays the driver's verdicts of a `bench_tmap_diff --dump FILE` run through the current
gcl_tensormap_check, without a GPU: each dumped line holds the driver's arguments (TMA order) and
its CUresult; the line becomes a DLPack description again (shape reversed, strides in elements,
the data pointer at the dumped address) and is checked. Prints A (gclaunch accepts, the driver
refused) and B (gclaunch refuses, the driver encoded) by mode, with the first few of each: what a
new rule does to an old run, before the GPU confirms it.

    python3 bench/experiments/tmap_replay.py build/libgclaunch.so DUMP.csv [DUMP.csv ...]

A CSV of bench/experiments/im2col_probe.py replays the same way (its structured sweeps), .xz
compressed or not: tests/unit/recorded/ holds driver 580's. Exit status 1 when A or B is not 0.

Lines whose arguments no DLPack description gives (a stride that is not a whole number of
elements) are counted apart."""
import collections
import csv
import ctypes as C
import lzma
import os
import sys

RANK = 5


# The DLPack structs, written out once for the Python suites (tests/python/gcltest.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "python"))
from gcltest import DLDataType, DLDevice, DLTensor  # noqa: E402


class Im2col(C.Structure):
    _fields_ = [("pixels", C.c_uint32), ("channels", C.c_uint32), ("lower", C.c_int32 * 3),
                ("upper", C.c_int32 * 3)]


class Options(C.Structure):
    _fields_ = [("box", C.c_uint32 * RANK), ("element_strides", C.c_uint32 * RANK),
                ("interleave", C.c_int), ("swizzle", C.c_int), ("l2_promotion", C.c_int),
                ("oob_fill", C.c_int), ("store", C.c_int), ("im2col", Im2col),
                ("reserved", C.c_uint32 * 8)]


# CUtensorMapDataType -> a DLPack dtype gclaunch maps to it (code, bits)
DTYPE = {0: (1, 8), 1: (1, 16), 2: (1, 32), 3: (0, 32), 4: (1, 64), 5: (0, 64), 6: (2, 16),
         7: (2, 32), 8: (2, 64), 9: (4, 16)}


def rows(path):
    """The dump's lines, or im2col_probe.py's (family, dims, ... as space-separated lists, rc)
    in the dump's columns."""
    f = lzma.open(path, "rt") if path.endswith(".xz") else open(path)
    for n, r in enumerate(csv.DictReader(f)):
        if "family" not in r:
            yield r
            continue
        d = {"n": str(n), "type": r["type"], "rank": r["rank"], "address": str(0x7F0000000000),
             "im2col": "1", "driver_rc": r["rc"], "interleave": r["interleave"],
             "swizzle": r["swizzle"], "l2": "0", "oob": "0", "pixels": r["pixels"],
             "channels": r["channels"]}
        for key, col, width in (("d", "dims", 5), ("s", "strides", 4), ("e", "estrides", 5),
                                ("lo", "lower", 3), ("up", "upper", 3)):
            v = r[col].split()
            for i in range(width):
                d[f"{key}{i}"] = v[i] if i < len(v) else "0"
        for i in range(5):
            d[f"b{i}"] = "0"
        yield d


def main():
    path = sys.argv[1]
    lib = C.CDLL(os.path.abspath(path) if os.path.exists(path) else path)  # a file, else a name
    lib.gcl_tensormap_check.restype = C.c_int
    lib.gcl_last_error.restype = C.c_char_p
    tally = collections.Counter()
    shown = collections.Counter()
    for path in sys.argv[2:]:
        for r in rows(path):
            typ = int(r["type"])
            if typ not in DTYPE or not 1 <= int(r["rank"]) <= RANK:
                tally["no description"] += 1
                continue
            rank, (code, bits) = int(r["rank"]), DTYPE[typ]
            eb = bits // 8
            dims = [int(r[f"d{i}"]) for i in range(rank)]
            strides = [int(r[f"s{i}"]) for i in range(rank - 1)]
            if any(s % eb or s >= 1 << 63 for s in strides) or any(d >= 1 << 63 for d in dims):
                tally["no description"] += 1
                continue
            shape = (C.c_int64 * rank)(*reversed(dims))
            st = (C.c_int64 * rank)(*reversed([1] + [s // eb for s in strides]))
            t = DLTensor(int(r["address"]), DLDevice(2, 0), rank, DLDataType(code, bits, 1),
                         shape, st, 0)
            o = Options()
            for i in range(rank):
                o.box[i], o.element_strides[i] = int(r[f"b{i}"]), int(r[f"e{i}"])
            o.interleave, o.swizzle = int(r["interleave"]), int(r["swizzle"])
            o.l2_promotion, o.oob_fill = int(r["l2"]), int(r["oob"])
            mode = "im2col" if r["im2col"] == "1" else "tiled"
            if mode == "im2col":
                o.im2col.pixels, o.im2col.channels = int(r["pixels"]), int(r["channels"])
                for i in range(3):
                    o.im2col.lower[i], o.im2col.upper[i] = int(r[f"lo{i}"]), int(r[f"up{i}"])
            ok = lib.gcl_tensormap_check(C.byref(t), C.byref(o), None) == 0
            driver = r["driver_rc"] == "0"
            kind = "agree" if ok == driver else "A" if ok else "B"
            tally[(mode, kind)] += 1
            if kind != "agree" and shown[kind] < 5:
                shown[kind] += 1
                why = "" if ok else lib.gcl_last_error().decode()
                print(f"{kind} {mode} line {r['n']} ({path}): dims {dims} strides {strides} "
                      f"driver {r['driver_rc']} {why}")
    for k in sorted(tally, key=str):
        print(k, tally[k])
    a = sum(v for k, v in tally.items() if isinstance(k, tuple) and k[1] == "A")
    b = sum(v for k, v in tally.items() if isinstance(k, tuple) and k[1] == "B")
    print(f"replay: A = {a}, B = {b}")
    compared = sum(v for k, v in tally.items() if isinstance(k, tuple))
    if not compared:
        print("replay: nothing compared")
        return 1
    return 1 if a or b else 0


if __name__ == "__main__":
    sys.exit(main())
