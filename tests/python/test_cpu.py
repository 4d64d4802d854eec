"""gclaunch on the CPU, no driver: layouts against the cubins, every setter kind and its bytes,
bad input of every kind (message, status, nothing changed), DLPack ownership and deleters,
reference counts over 100k calls, inspect."""
import ctypes as C
import gc
import os
import struct
import sys
import tracemalloc
import unittest

import gcltest as T
import gclaunch as g

try:
    import numpy as np
except ImportError:  # numpy is optional: its tests skip
    np = None

SIG_ARGS8 = "i32 a, i32 b, f32 c, f32 d, const f32* p0, f32* p1, u64 n, i32 idx"
SIG_MAPS = "grid_constant tensormap[{n}] maps, const void* work, u32 n_work"
SIG_GLOBALS = "grid_constant struct{{tensormap[{n}] maps, const void* work, u32 n_work}} g"
# (image, kernel, signature): layouts that must equal what the compiler wrote into the cubin.
CUBIN_CASES = [
    ("launchcfg.sm_90.cubin", "bench_args8", SIG_ARGS8),
    ("launchcfg.sm_90.cubin", "bench_maps16", "grid_constant tensormap[16] m, i32 idx, u64* out"),
    ("launchcfg.sm_90.cubin", "bench_maps240", "grid_constant tensormap[240] m, i32 idx, u64* out"),
    ("megakernel.sm_90.cubin", "megakernel_copy_16", SIG_MAPS.format(n=16)),
    ("megakernel.sm_90.cubin", "megakernel_copy_255", SIG_MAPS.format(n=255)),
    ("megakernel.sm_90.cubin", "megakernel_copy_a64_16",
     "grid_constant tensormap align(64)[16] maps, const void* work, u32 n_work"),
    ("megakernel.sm_90.cubin", "megakernel_globals_16", SIG_GLOBALS.format(n=16)),
]
NESTED = ("grid_constant struct{tensormap[3] loads, struct{ptr p, u32 n}[4] segs, f32 scale, "
          "struct{i8, u16 h} pair} g, bool flag, f16 h16, bf16 hb, f64 d, u8 small")
SCALARS = [  # (type, struct format, lo, hi, a value)
    ("bool", "?", 0, 1, True), ("i8", "b", -128, 127, -5), ("u8", "B", 0, 255, 200),
    ("i16", "h", -2**15, 2**15 - 1, -300), ("u16", "H", 0, 2**16 - 1, 60000),
    ("i32", "i", -2**31, 2**31 - 1, -70000), ("u32", "I", 0, 2**32 - 1, 4000000000),
    ("i64", "q", -2**63, 2**63 - 1, -2**40), ("u64", "Q", 0, 2**64 - 1, 2**63 + 5),
]
FLOATS = [("f32", "f", 1.5), ("f64", "d", -2.25), ("f16", "e", 0.333251953125)]


def bf16_bits(x):
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16


def full_args(lay, fill=0):
    """Args with every parameter set to bytes of `fill`."""
    a = g.Args(lay)
    for p in lay.params:
        a[p.index] = bytes([fill]) * p.size
    return a


class LayoutTest(unittest.TestCase):
    def test_layouts_equal_the_cubins(self):
        for image, name, sig in CUBIN_CASES:
            with self.subTest(kernel=name):
                ks = {k["name"]: k for k in g.inspect(T.kernel(image))}
                k = ks[name]
                lay = g.Layout(sig, 90)
                self.assertEqual(lay.size, k["param_bytes"])
                self.assertEqual([(p.offset, p.size) for p in lay.params],
                                 [(p["offset"], p["size"]) for p in k["params"]])

    def test_params_and_fields(self):
        lay = g.Layout(NESTED, 90)
        p = lay.params[0]
        self.assertEqual((p.index, p.name, p.offset, p.kind), (0, "g", 112, "struct"))
        self.assertTrue(p.grid_constant)
        self.assertEqual(tuple(p)[:2], (0, "g"))  # a named tuple
        self.assertEqual(len(lay), 6)
        f = lay.field("g.segs[2].n")
        self.assertEqual((f.path, f.param, f.kind, f.dtype, f.size), ("g.segs[2].n", 0, "scalar", "u32", 4))
        self.assertEqual(f.offset, 112 + 384 + 2 * 16 + 8)
        self.assertEqual(lay.field("g.pair.1").path, "g.pair.h")
        self.assertEqual(lay.field(0).path, "g")
        self.assertEqual(lay.field("g.loads").count, 3)
        self.assertEqual(lay.field("g.loads").elem_kind, "tensormap")
        leaves = lay.leaves()
        self.assertEqual([x.path for x in leaves[:4]], ["g.loads[0]", "g.loads[1]", "g.loads[2]", "g.segs[0].p"])
        self.assertEqual(leaves[-1].path, "small")
        self.assertEqual(sorted(x.offset for x in leaves), [x.offset for x in leaves])
        self.assertIn("struct{", lay.signature)
        self.assertEqual(lay.sm, 90)

    def test_other_architectures(self):
        self.assertEqual(g.Layout("grid_constant tensormap m", 90).params[0].offset, 112)
        self.assertEqual(g.Layout("grid_constant tensormap m", 80).params[0].offset, 32)
        self.assertEqual(g.Layout("grid_constant tensormap m", 100).params[0].offset, 0)

    def test_bad_signatures_and_paths(self):
        cases = [(lambda: g.Layout("f32 x,", 90), "GCL_ERROR_PARSE", "col 7"),
                 (lambda: g.Layout("u32 n", 12), "GCL_ERROR_INVALID_ARGUMENT", "sm"),
                 (lambda: g.Layout("bytes(40000) b", 90), "GCL_ERROR_LAYOUT_TOO_LARGE", "bytes"),
                 (lambda: g.Layout(NESTED, 90).field("g.nope"), "GCL_ERROR_NOT_FOUND", "nope"),
                 (lambda: g.Layout(NESTED, 90).field("g.loads[3]"), "GCL_ERROR_INVALID_ARGUMENT", "g.loads[3]"),
                 (lambda: g.Layout(NESTED, 90).field("g..x"), "GCL_ERROR_INVALID_ARGUMENT", "col"),
                 (lambda: g.Layout(NESTED, 90).field(9), "GCL_ERROR_INVALID_ARGUMENT", "9")]
        for fn, status, words in cases:
            with self.subTest(status=status, words=words):
                with self.assertRaises(g.Error) as cm:
                    fn()
                self.assertEqual(cm.exception.status, status)
                self.assertEqual(cm.exception.code, getattr(g, status))
                self.assertIn(words, str(cm.exception))
        with self.assertRaises(TypeError):
            g.Layout(5, 90)
        with self.assertRaises(TypeError):
            g.Layout(NESTED, 90).field(1.0)


class SetterTest(unittest.TestCase):
    def test_every_scalar(self):
        for t, fmt, lo, hi, v in SCALARS:
            with self.subTest(type=t):
                lay = g.Layout(f"{t} x", 90)
                a = g.Args(lay)
                for value in (lo, hi, v):
                    a["x"] = value
                    self.assertEqual(a.buffer(), struct.pack("<" + fmt, value))
                for bad in (lo - 1, hi + 1):
                    with self.assertRaises(g.RangeError) as cm:
                        a["x"] = bad
                    self.assertIsInstance(cm.exception, OverflowError)
                    self.assertIsInstance(cm.exception, g.Error)
                    self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_ARGUMENT")
                    self.assertIn("out of range for " + t, str(cm.exception))
                    self.assertEqual(a.buffer(), struct.pack("<" + fmt, value))  # unchanged
                for bad in (1.5, "1", None, [1]):
                    with self.assertRaises(TypeError):
                        a["x"] = bad
                    self.assertEqual(a.buffer(), struct.pack("<" + fmt, value))

    def test_floats(self):
        for t, fmt, v in FLOATS:
            with self.subTest(type=t):
                a = g.Args(g.Layout(f"{t} x", 90))
                a[0] = v
                self.assertEqual(a.buffer(), struct.pack("<" + fmt, v))
                a[0] = 3  # ints convert
                self.assertEqual(a.buffer(), struct.pack("<" + fmt, 3.0))
                with self.assertRaises(TypeError):
                    a[0] = "1.0"
        a = g.Args(g.Layout("bf16 x", 90))
        a[0] = 1.7
        self.assertEqual(a.buffer(), struct.pack("<H", bf16_bits(1.7)))

    def test_nested_fields_and_buffer(self):
        lay = g.Layout(NESTED, 90)
        a = g.Args(lay)
        a["g.loads"] = bytes(range(128)) * 3
        for i in range(4):
            a[f"g.segs[{i}].p"] = 0x1000 * (i + 1)
            a[f"g.segs[{i}].n"] = i + 7
        a["g.scale"] = 0.5
        with self.assertRaises(g.Error) as cm:
            a.buffer()
        self.assertEqual(cm.exception.status, "GCL_ERROR_UNSET_ARGUMENT")
        self.assertIn("g.pair.0", str(cm.exception))
        a["g.pair"] = b"\x05\x00\x34\x12"
        a["flag"], a["h16"], a["hb"], a["d"], a["small"] = True, 1.0, 2.0, 4.0, 9
        buf = a.buffer()
        self.assertEqual(len(buf), lay.size)
        self.assertEqual(buf[112:112 + 384], bytes(range(128)) * 3)
        seg2 = lay.field("g.segs[2]").offset
        self.assertEqual(struct.unpack_from("<QI", buf, seg2), (0x3000, 9))
        self.assertEqual(struct.unpack_from("<H", buf, lay.field("g.pair.h").offset)[0], 0x1234)
        self.assertEqual(struct.unpack_from("<d", buf, lay.field("d").offset)[0], 4.0)
        self.assertTrue(a.is_set("g") and a.is_set(0) and a.is_set("g.segs[3].n"))

    def test_bytes_like_into_anything(self):
        lay = g.Layout("struct{u32 a, u32 b} s, grid_constant tensormap m, u16[3] arr", 90)
        a = g.Args(lay)
        a["s"] = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
        a["m"] = memoryview(bytes(range(128)))
        a["arr"] = struct.pack("<3H", 1, 2, 3)
        before = a.buffer()
        for key, bad in (("s", b"123"), ("m", bytes(64)), ("arr", bytes(7))):
            with self.assertRaises(g.Error) as cm:
                a[key] = bad
            self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_ARGUMENT")
            self.assertEqual(a.buffer(), before)
        for key, bad in (("s", 5), ("s", [1, 2]), ("arr", (1, 2, 3.5)), ("m", 1.0)):
            with self.assertRaises(TypeError):
                a[key] = bad
        self.assertEqual(a.buffer(), before)
        if np is not None:
            a["s"] = np.array([7, 8], dtype=np.uint32)  # any buffer of the right size
            self.assertEqual(a.buffer()[lay.params[0].offset:][:8], struct.pack("<2I", 7, 8))

    def test_lists_into_arrays_of_scalars(self):
        lay = g.Layout("u16[3] a, struct{i8 x, f32[2] y} s", 90)
        a = g.Args(lay)
        a["a"], a["s.y"], a["s.x"] = [1, 2, 3], (0.5, 2), -1
        before = a.buffer()
        self.assertEqual(struct.unpack_from("<3H", before, 0), (1, 2, 3))
        self.assertEqual(struct.unpack_from("<2f", before, lay.field("s.y").offset), (0.5, 2.0))
        for bad, exc in (([1, 2, 70000], g.RangeError), ([1, 2], g.Error), ([1, "x", 3], TypeError),
                         ([1, b"ab", 3], TypeError), ([1.0, 2, 3], TypeError), (5, TypeError)):
            with self.assertRaises(exc):
                a["a"] = bad
            self.assertEqual(a.buffer(), before)  # all or nothing

    def test_pointer_int_and_alignment(self):
        a = g.Args(g.Layout("const f32* align(16) src, f32* dst", 90))
        a["src"], a["dst"] = 0x10000, 0x10004
        before = a.buffer()
        with self.assertRaises(g.Error) as cm:
            a["src"] = 0x10004
        self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_ARGUMENT")
        self.assertIn("16-byte aligned", str(cm.exception))
        self.assertEqual(a.buffer(), before)
        with self.assertRaises(g.RangeError):
            a["dst"] = -16
        for bad in (None, 1.0, "0x10", object()):
            with self.assertRaises(TypeError):
                a["dst"] = bad
        self.assertEqual(a.buffer(), before)

    def test_keys(self):
        a = g.Args(g.Layout("u32 a, u32 b", 90))
        a[-1] = 5  # the last parameter
        self.assertTrue(a.is_set("b"))
        with self.assertRaises(g.Error):
            a[2] = 1
        with self.assertRaises(TypeError):
            a[True] = 1
        with self.assertRaises(TypeError):
            del a["a"]
        with self.assertRaises(TypeError):
            g.Args(5)


class DLPackTest(unittest.TestCase):
    def setUp(self):
        self.p = T.Producer()
        self.mem = (C.c_float * 256)()
        self.base = C.addressof(self.mem)

    def tensor(self, versioned=True, **kw):
        kw.setdefault("shape", (16,))
        return (T.FakeTensor if versioned else T.LegacyTensor)(self.p, self.base, **kw)

    def test_versioned_and_legacy_into_pointers(self):
        lay = g.Layout("const f32* align(16) src, f32* dst", 90)
        for versioned in (True, False):
            with self.subTest(versioned=versioned):
                a = g.Args(lay)
                t = self.tensor(byte_offset=64, versioned=versioned)
                a["src"] = t
                a["dst"] = self.tensor(byte_offset=4, versioned=versioned)
                src, dst = struct.unpack("<QQ", a.buffer()[-16:] if lay.size == 16 else a.buffer())
                self.assertEqual(src, self.base + 64)
                self.assertEqual(dst, self.base + 4)
                self.assertEqual(t.calls[0]["max_version"], (1, 3) if versioned else None)
                self.assertEqual(t.calls[0]["stream"], -1)
                self.assertEqual(self.p.deleted, self.p.exported - 2 if versioned else self.p.exported - 2)
                del a
                gc.collect()
                self.assertEqual(self.p.deleted, self.p.exported)  # the args' tensors went
                self.p.deleted = self.p.exported = 0

    def test_refusals_run_the_deleter_and_change_nothing(self):
        a = g.Args(g.Layout("const f32* align(16) src, f32* dst", 90))
        a["src"], a["dst"] = 0x1000, 0x2000
        before = a.buffer()
        cases = [("src", self.tensor(byte_offset=4), "GCL_ERROR_TENSOR", "16"),
                 ("src", self.tensor(dtype=(T.KDLINT, 32)), "GCL_ERROR_TENSOR", "does not match the element type"),
                 ("dst", self.tensor(read_only=True), "GCL_ERROR_TENSOR", "read-only"),
                 ("src", self.tensor(device=(T.KDLCPU, 0)), "GCL_ERROR_TENSOR", "device type 1"),
                 ("src", self.tensor(major=2), "GCL_ERROR_TENSOR_VERSION", "2")]
        for key, t, status, words in cases:
            with self.subTest(status=status, words=words):
                n = self.p.deleted
                with self.assertRaises(g.Error) as cm:
                    a[key] = t
                self.assertEqual(cm.exception.status, status)
                self.assertIn(words, str(cm.exception))
                self.assertEqual(self.p.deleted, n + 1)  # exactly once, before the raise
                self.assertEqual(a.buffer(), before)
        a["src"] = self.tensor(read_only=True)  # read-only into const is fine

    def test_overwrite_releases_once(self):
        a = g.Args(g.Layout("f32* p", 90))
        for i in range(10):
            a["p"] = self.tensor()
            self.assertEqual(self.p.deleted, i)
        a["p"] = 0x100
        self.assertEqual(self.p.deleted, 10)

    def test_no_leak_over_100k_calls(self):
        a = g.Args(g.Layout("f32* p, u64 n", 90))
        t = self.tensor()
        a["p"] = t
        gc.collect()
        refs = sys.getrefcount(t)
        tracemalloc.start()
        a["p"] = t
        snap = tracemalloc.take_snapshot()
        for i in range(100_000):
            a["p"] = t
            a["n"] = i
        gc.collect()
        grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap, "filename"))
        tracemalloc.stop()
        self.assertEqual(sys.getrefcount(t), refs)
        self.assertEqual(self.p.deleted, self.p.exported - 1)  # all but the one held
        self.assertLess(grown, 64 * 1024, f"{grown} bytes grown over 100k sets")

    @unittest.skipIf(np is None, "numpy is not installed")
    def test_numpy_cpu_arrays_are_refused_and_released(self):
        a = g.Args(g.Layout("f32* p", 90))
        x = np.zeros(8, dtype=np.float32)
        refs = sys.getrefcount(x)
        for _ in range(1000):
            with self.assertRaises(g.Error) as cm:
                a["p"] = x
        self.assertEqual(cm.exception.status, "GCL_ERROR_TENSOR")
        self.assertIn("not CUDA memory", str(cm.exception))
        self.assertEqual(sys.getrefcount(x), refs)  # numpy's deleter ran every time

    def test_tensormap_descriptions_on_the_cpu(self):
        t = self.tensor(shape=(8, 16), strides=(32, 1), byte_offset=64)
        d = g.TensorMap(t, (4, 16)).describe()
        self.assertEqual(d["dims"], (16, 8))  # TMA order: innermost first
        self.assertEqual(d["box"], (16, 4))
        self.assertEqual(d["strides"], (128,))
        self.assertEqual(d["address"], self.base + 64)
        self.assertEqual(d["box_bytes"], 4 * 16 * 4)
        with self.assertRaises(g.Error) as cm:
            g.TensorMap(t, (4, 16, 2)).describe()
        self.assertIn("3 sizes for a tensor of 2", str(cm.exception))
        with self.assertRaises(g.Error) as cm:
            g.TensorMap(self.tensor(byte_offset=4), (4,)).describe()
        self.assertEqual(cm.exception.status, "GCL_ERROR_TENSOR")
        with self.assertRaises(g.Error):
            g.TensorMap(t, (4, 16), swizzle=48)
        with self.assertRaises(TypeError):
            g.TensorMap(5, (4,))
        self.assertEqual(self.p.deleted, self.p.exported)  # borrowed: released each time


class InspectTest(unittest.TestCase):
    def test_inspect(self):
        path = T.kernel("megakernel.sm_90.cubin")
        ks = g.inspect(path)
        self.assertEqual(ks, g.inspect(open(path, "rb").read()))
        self.assertEqual(ks, g.inspect(path, arch="sm_90"))
        k = next(k for k in ks if k["name"] == "megakernel_copy_16")
        self.assertEqual(k["params"][0], {"index": 0, "offset": 112, "size": 2048})
        ptx = g.inspect(T.kernel("megakernel.compute_90.ptx"), arch=90)
        self.assertTrue(any(p.get("kind") for k in ptx for p in k["params"]))
        fat = g.inspect(T.kernel("megakernel.fatbin"), arch=90)
        self.assertEqual([k["name"] for k in fat], [k["name"] for k in ks])

    def test_inspect_waits(self):
        # griddepcontrol.wait (for PDL launches): True / False from SASS and PTX, None unknown.
        for image in ("pdl.check.sm_90.cubin", "pdl.compute_90.ptx"):
            ks = {k["name"]: k["waits"] for k in g.inspect(T.kernel(image))}
            self.assertEqual(ks, {"pdl_producer": False, "pdl_waits": True,
                                  "pdl_nowait": False, "pdl_waits_api": True}, image)
        ptx = (b".version 8.0\n.target sm_90\n.address_size 64\n"
               b".func w() { griddepcontrol.wait; ret; }\n"
               b".visible .entry u(.param .u64 p) { call w; ret; }\n")
        self.assertIsNone(g.inspect(ptx)[0]["waits"])

    def test_inspect_errors(self):
        with self.assertRaises(g.Error) as cm:
            g.inspect("/nonexistent/k.cubin")
        self.assertEqual(cm.exception.status, "GCL_ERROR_IO")
        self.assertIn("/nonexistent/k.cubin", str(cm.exception))
        with self.assertRaises(g.Error) as cm:
            g.inspect(b"\x7fELF garbage")
        self.assertEqual(cm.exception.status, "GCL_ERROR_BAD_IMAGE")
        with self.assertRaises(TypeError):
            g.inspect(5)
        with self.assertRaises(g.Error):
            g.inspect(T.kernel("megakernel.sm_90.cubin"), arch="sm_x")

    def test_inspect_fifo(self):
        # issue 50: a FIFO is refused by name at once; open() without O_NONBLOCK waits for a
        # writer forever, so the call runs on a thread and one still waiting fails the test.
        import tempfile
        import threading
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "f.cubin")
            os.mkfifo(fifo)
            got = []

            def call():
                try:
                    g.inspect(fifo)
                except g.Error as e:
                    got.append(e)

            t = threading.Thread(target=call, daemon=True)
            t.start()
            t.join(20)
            self.assertFalse(t.is_alive(), "gclaunch.inspect(FIFO) still waits after 20 s")
            self.assertEqual(len(got), 1)
            self.assertEqual(got[0].status, "GCL_ERROR_IO")
            self.assertIn("a FIFO, not a regular file", str(got[0]))
            self.assertIn(fifo, str(got[0]))
            with self.assertRaises(g.Error) as cm:
                g.inspect(d)
            self.assertIn("a directory, not a regular file", str(cm.exception))

    def test_inspect_big_file(self):
        # issue 50: a sparse 2 GiB file is judged by its first bytes, not read whole: the peak
        # resident set (which a whole read raises by 2 GiB) grows by less than 256 MiB.
        import resource
        import shutil
        import tempfile
        peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
        with tempfile.TemporaryDirectory() as d:
            zero = os.path.join(d, "zero.cubin")
            with open(zero, "wb") as f:
                f.truncate(2 << 30)
            before = peak()
            with self.assertRaises(g.Error) as cm:
                g.inspect(zero)
            self.assertEqual(cm.exception.status, "GCL_ERROR_BAD_IMAGE")
            self.assertIn("is 2147483648 bytes: not a cubin or fatbin", str(cm.exception))
            tail = os.path.join(d, "tail.cubin")  # a real cubin, then 2 GiB of zeros
            shutil.copy(T.kernel("megakernel.sm_90.cubin"), tail)
            with open(tail, "r+b") as f:
                f.truncate(2 << 30)
            self.assertEqual(g.inspect(tail), g.inspect(T.kernel("megakernel.sm_90.cubin")))
            self.assertLess(peak() - before, 256 << 10, "a 2 GiB file was read whole")

    def test_version(self):
        lib = C.CDLL(os.path.join(T.build_dir(), "libgclaunch.so"))
        lib.gcl_version.restype = C.c_char_p
        self.assertEqual(g.__version__, lib.gcl_version().decode())
        self.assertEqual(g.status_name(7), "GCL_ERROR_TENSOR")


class SafetyTest(unittest.TestCase):
    """Every bad input is a gclaunch.Error subclass (RangeError for every int out of range) or a
    TypeError, and changes nothing; args[path] reads back what was set."""

    def assert_range(self, fn, *words):
        with self.assertRaises(g.RangeError) as cm:
            fn()
        self.assertIsInstance(cm.exception, g.Error)
        self.assertIsInstance(cm.exception, OverflowError)
        self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_ARGUMENT")
        for w in words:
            self.assertIn(w, str(cm.exception))
        self.assertNotIn("18446744073709551615", str(cm.exception))
        return cm.exception

    def test_ints_out_of_range_anywhere(self):
        p = T.Producer()
        mem = (C.c_float * 256)()
        t = T.FakeTensor(p, C.addressof(mem), (16, 16))
        lay = g.Layout("u32 a, f32* p", 90)
        a = g.Args(lay)
        for bad in (2**40, -1, 2**64, -2**63):
            with self.subTest(bad=bad):
                self.assert_range(lambda: g.Layout("u32 a", bad), "sm", str(bad))
                self.assert_range(lambda: g.Context(bad), "device", str(bad))
                self.assert_range(lambda: g.inspect(b"", arch=bad), "arch")
                self.assert_range(lambda: g.status_name(bad * 2**40), "code")
                self.assert_range(lambda: g.TensorMap(t, (bad, 16)), "box[0]")
                self.assert_range(lambda: g.TensorMap(t, bad), "box")
                self.assert_range(lambda: g.TensorMap(t, (16, 16), element_strides=(1, bad)), "element_strides[1]")
                self.assert_range(lambda: g.TensorMap(t, (16, 16), swizzle=bad), "swizzle")
                self.assert_range(lambda: g.TensorMap(t, (16, 16), l2=bad), "l2")
                self.assert_range(lambda: g.TensorMap(t, (16, 16), interleave=bad), "interleave")
        self.assert_range(lambda: g.TensorMap(t, (16, 16), swizzle=5), "swizzle")
        for i in (-3, 2, -2**63, 2**63, -2**200):
            with self.subTest(index=i):
                self.assert_range(lambda: a.__setitem__(i, 1), str(i))
                self.assert_range(lambda: lay.field(i), str(i))
                self.assert_range(lambda: a.is_set(i), str(i))
        self.assertEqual(lay.field(-2).path, "a")  # in range: from the end
        self.assertEqual(lay.field(-1).path, "p")
        self.assert_range(lambda: g.Layout("u32 a", 90).field(-2**63), "-9223372036854775808")
        self.assert_range(lambda: a.__setitem__("a", 2**2000), "u32")

    def test_floats_that_overflow_their_type(self):
        lay = g.Layout("f32 a, f16 h, bf16 b, f64 d", 90)
        a = g.Args(lay)
        a["a"], a["h"], a["b"], a["d"] = 1.0, 1.0, 1.0, 1.0
        before = a.buffer()
        for key, big in (("a", 1e39), ("a", 2**2000), ("h", 65520.0), ("h", 1e6), ("b", 3.4e38 * 1.0001),
                         ("a", -1e39), ("d", 2**2000)):
            with self.subTest(key=key, value=big):
                self.assert_range(lambda: a.__setitem__(key, big))
                self.assertEqual(a.buffer(), before)
        a["h"] = 65504.0  # the largest f16
        a["a"] = 3.4e38
        for key in "ahbd":  # inf and nan given as such are kept
            a[key] = float("inf")
            self.assertEqual(a[key], float("inf"))
            a[key] = float("-inf")
            a[key] = float("nan")
            self.assertNotEqual(a[key], a[key])

    def test_text_arguments(self):
        for bad in ("u32 a\x00", "\udcff", "u32 \ud800a"):
            with self.subTest(bad=bad):
                with self.assertRaises(g.Error) as cm:
                    g.Layout(bad, 90)
                self.assertNotIsInstance(cm.exception, (ValueError, UnicodeError))
        lay = g.Layout("u32 a, struct{u8 x} s", 90)
        a = g.Args(lay)
        for path in ("a\x00b", "s.\udcff", "\ud800"):
            with self.subTest(path=path):
                with self.assertRaises(g.Error):
                    a[path] = 1
                with self.assertRaises(g.Error):
                    lay.field(path)
        for bad in ("/dev/null\x00", "\udcff/x"):
            with self.assertRaises(g.Error):
                g.inspect(bad)
        with self.assertRaises(g.Error):
            g.inspect(b"", arch="sm_9\x000")
        # messages stay text whatever the input: non-ASCII in signatures and long paths
        for sig in ("é", "u32 é", "u32 a" + "é" * 300, "\xff\xfe", "struct{u8 é} s"):
            with self.subTest(sig=sig):
                try:
                    g.Layout(sig, 90)
                except g.Error as e:
                    str(e).encode("utf-8")
        with self.assertRaises(g.Error) as cm:
            g.Layout("u8 x", 90).field("a" * 199 + "é")
        str(cm.exception).encode("utf-8")

    def test_refresh_and_repoint_need_a_tensormap_field(self):
        a = g.Args(g.Layout("u32 n, grid_constant tensormap m", 90))
        a["n"] = 5
        for call in (lambda: a.refresh("n", []), lambda: a.repoint("n", []),
                     lambda: a.refresh("n", [object()]), lambda: a.repoint(0, 0x1000)):
            with self.assertRaises(g.Error) as cm:
                call()
            self.assertEqual(cm.exception.status, "GCL_ERROR_TYPE_MISMATCH")
            self.assertIn("'n'", str(cm.exception))
        self.assertEqual(a["n"], 5)

    def test_read_back(self):
        lay = g.Layout(NESTED, 90)
        a = g.Args(lay)
        with self.assertRaises(g.Error) as cm:
            a["flag"]
        self.assertEqual(cm.exception.status, "GCL_ERROR_UNSET_ARGUMENT")
        a["flag"], a["h16"], a["hb"], a["d"], a["small"] = True, 0.5, 1.5, -2.25, 200
        a["g.scale"], a["g.segs[2].p"], a["g.segs[2].n"], a["g.pair.h"] = 0.25, 0x3000, 9, 0x1234
        a["g.pair.0"] = -5
        self.assertEqual((a["flag"], a["h16"], a["hb"], a["d"], a["small"]), (True, 0.5, 1.5, -2.25, 200))
        self.assertEqual((a["g.scale"], a["g.segs[2].p"], a["g.segs[2].n"]), (0.25, 0x3000, 9))
        self.assertEqual((a["g.pair.h"], a["g.pair.0"]), (0x1234, -5))
        self.assertEqual(a["g.pair"], a.buffer.__self__["g.pair"])
        self.assertEqual(len(a["g.pair"]), lay.field("g.pair").size)  # a struct: its bytes
        for ty, fmt, lo, hi, v in SCALARS:
            b = g.Args(g.Layout(f"{ty} x", 90))
            for x in (lo, hi, v):
                b["x"] = x
                self.assertEqual(b["x"], bool(x) if ty == "bool" else x)
        c = g.Args(g.Layout("u16[3] a, grid_constant tensormap[2] m", 90))
        c["a"] = [1, 2, 3]
        self.assertEqual(c["a"], [1, 2, 3])
        c["m"] = bytes(range(128)) * 2
        self.assertEqual(c["m"], [bytes(range(128))] * 2)
        self.assertEqual(c["m[1]"], bytes(range(128)))
        self.assertEqual(c[0], [1, 2, 3])


class KeepAliveTest(unittest.TestCase):
    """Args, their clones and TensorMaps keep every tensor they point at alive while they can be
    launched; every deleter runs exactly once."""

    def setUp(self):
        self.p = T.Producer()
        self.mem = (C.c_float * 4096)()
        self.base = (C.addressof(self.mem) + 255) & ~255

    def test_pointer_producers_live_with_args_and_clones(self):
        import weakref
        a = g.Args(g.Layout("const f32* align(16) src, u32 n", 90))
        t = T.FakeTensor(self.p, self.base, (16,))
        w = weakref.ref(t)
        a["src"], a["n"] = t, 1
        del t
        gc.collect()
        self.assertIsNotNone(w())  # the args keep it
        c = a.clone()
        del a
        gc.collect()
        self.assertIsNotNone(w())  # the clone keeps it
        self.assertEqual(self.p.deleted, 1)  # the original's deleter ran once, with the original
        self.assertEqual(c.buffer()[:8], struct.pack("<Q", self.base))
        del c
        gc.collect()
        self.assertIsNone(w())
        self.assertEqual(self.p.deleted, 1)

    def test_overwrite_lets_go(self):
        import weakref
        a = g.Args(g.Layout("f32* p", 90))
        t = T.FakeTensor(self.p, self.base, (16,))
        w = weakref.ref(t)
        a["p"] = t
        del t
        a["p"] = 0x1000
        gc.collect()
        self.assertIsNone(w())
        self.assertEqual(self.p.deleted, 1)
        a["p"] = T.FakeTensor(self.p, self.base, (16,))
        a["p"] = bytes(8)
        gc.collect()
        self.assertEqual(self.p.deleted, 2)
        self.assertEqual(a["p"], 0)

    def test_tensormap_holds_its_tensor(self):
        import weakref
        t = T.FakeTensor(self.p, self.base, (8, 16), strides=(64, 1))
        w = weakref.ref(t)
        tm = g.TensorMap(t, (8, 16))
        del t
        gc.collect()
        self.assertIs(tm.tensor, w())
        del tm
        gc.collect()
        self.assertIsNone(w())


EXT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "ext")


def public_callables():
    """(name, callable) for every public callable of the package: functions, classes, and every
    method of every class (the runtime objects too, as they are added to __all__)."""
    import inspect as pyinspect
    out = []
    for name in g.__all__:
        obj = getattr(g, name)
        if not callable(obj) or isinstance(obj, type) and issubclass(obj, BaseException):
            continue
        out.append((name, obj))
        if isinstance(obj, type) and obj.__module__ == "gclaunch" and not hasattr(obj, "_fields"):
            for attr, m in vars(obj).items():
                if not attr.startswith("_") and (pyinspect.ismethoddescriptor(m) or callable(m)):
                    out.append((f"{name}.{attr}", getattr(obj, attr)))
    return out


class ExtensionTest(unittest.TestCase):
    """The extension as CPython wants one: signatures, NamedTuples, module state, GC, layering."""

    def test_every_callable_has_a_signature(self):
        import inspect as pyinspect
        seen = public_callables()
        self.assertGreater(len(seen), 20)
        for name, obj in seen:
            with self.subTest(callable=name):
                sig = pyinspect.signature(obj)
                self.assertIsNotNone(sig)
        self.assertEqual(str(pyinspect.signature(g.Layout)), "(signature, sm)")
        self.assertEqual(list(pyinspect.signature(g.Kernel.launch).parameters)[:4],
                         ["self", "grid", "block", "args_or_values"])
        self.assertEqual(str(pyinspect.signature(g.inspect)), "(path_or_bytes, arch=None)")

    def test_keywords_follow_the_signatures(self):
        # every keyword a text signature names is accepted by the parser (and nothing else is)
        lay = g.Layout(signature="u32 n", sm=90)
        self.assertEqual(lay.size, 4)
        a = g.Args(layout=lay)
        a.refresh  # bound
        with self.assertRaises(TypeError) as cm:
            g.Layout("u32 n", 90, 1)
        self.assertIn("positional", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            g.Layout("u32 n", smm=90)
        self.assertIn("smm", str(cm.exception))
        with self.assertRaises(TypeError):
            g.Layout("u32 n", 90, sm=90)
        with self.assertRaises(TypeError):
            g.Layout("u32 n")
        with self.assertRaises(TypeError):
            g.inspect(path_or_bytes=b"", nope=1)

    def test_param_and_field_are_named_tuples(self):
        lay = g.Layout("struct{u32 a, f32* p} s, u8 x", 90)
        p = lay.params[0]
        self.assertEqual(p._asdict(), {"index": 0, "name": "s", "offset": 0, "size": 16,
                                       "align": 8, "kind": "struct"})
        self.assertEqual(g.Param._fields, ("index", "name", "offset", "size", "align", "kind"))
        self.assertIsInstance(p, tuple)
        self.assertEqual(len(p), 6)
        self.assertEqual((p.dtype, p.count, p.grid_constant), (None, 0, False))
        f = lay.field("s.p")
        self.assertEqual(f._asdict()["path"], "s.p")
        self.assertEqual((f.kind, f.dtype, f.offset), ("pointer", "f32", 8))
        self.assertEqual(type(f).__module__, "gclaunch")
        self.assertEqual(f._replace(offset=1).offset, 1)

    def test_module_state_per_instance(self):
        # multi-phase init: a second instance of the module has its own types and errors
        import importlib.util
        spec = importlib.util.find_spec("gclaunch._gclaunch")
        m2 = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m2)
        self.assertIsNot(m2.Layout, g.Layout)
        self.assertIsNot(m2.Error, g.Error)
        lay2 = m2.Layout("u32 n", 90)
        with self.assertRaises(m2.Error):
            m2.Layout("u33 n", 90)
        with self.assertRaises(TypeError):  # a Layout of another instance is not this one's
            g.Args(lay2)
        a2 = m2.Args(lay2)
        a2["n"] = 7
        self.assertEqual(a2.buffer(), struct.pack("<I", 7))
        del a2, lay2, m2
        gc.collect()

    def test_gc_tracks_and_collects_cycles(self):
        import weakref
        p = T.Producer()
        mem = (C.c_float * 1024)()
        base = (C.addressof(mem) + 255) & ~255
        lay = g.Layout("f32* p, u32 n", 90)
        for obj in (lay, g.Args(lay), g.TensorMap(T.FakeTensor(p, base, (8, 16)), (8, 16))):
            self.assertTrue(gc.is_tracked(obj), type(obj).__name__)

        class Holder(T.FakeTensor):
            pass
        t = Holder(p, base, (16,))
        a = g.Args(lay)
        a["p"] = t
        t.args = a  # a cycle: args -> keep -> t -> args
        w = weakref.ref(t)
        del a, t
        gc.collect()
        self.assertIsNone(w())
        self.assertEqual(p.deleted, 1)

    def test_no_function_over_60_lines(self):
        """python/ext: every function fits in 60 lines (funclen.py: signature to closing brace)."""
        import funclen
        files = [os.path.join(EXT_DIR, f) for f in sorted(os.listdir(EXT_DIR)) if f.endswith(".c")]
        found = [f for p in files for f in funclen.functions(p)]
        self.assertGreater(len(found), 200)  # the definitions were found
        self.assertIn("gclpy_kernel_launch", {name for _, name, _ in found})
        for n, name, path in found:
            with self.subTest(function=name):
                self.assertLessEqual(n, 60, f"{name} ({os.path.basename(path)}) has {n} lines")

    def test_files_have_no_call_cycle(self):
        """python/ext: a file calls only gclpy_ functions of files of a lower layer (the order in
        gclpy.h's comment), so the files form no include or call cycle."""
        import re
        header = open(os.path.join(EXT_DIR, "gclpy.h")).read()
        level, cur = {}, None
        for line in header.split("*/")[0].splitlines():
            m = re.match(r"\s*\*\s+(?:L(\d+)\s+)?(\w+\.c)\s", line)
            if m:
                cur = int(m.group(1)) if m.group(1) else cur
                level[m.group(2)] = cur
        files = sorted(f for f in os.listdir(EXT_DIR) if f.endswith(".c"))
        self.assertEqual(sorted(level), files, "every file has a layer in gclpy.h")
        defined = {}
        for f in files:
            for name in re.findall(r"^[A-Za-z][^;\n(]*\b(gclpy_\w+)\(", open(os.path.join(EXT_DIR, f)).read(), re.M):
                defined.setdefault(name, f)
        for f in files:
            text = open(os.path.join(EXT_DIR, f)).read()
            for name in set(re.findall(r"\b(gclpy_\w+)\s*\(", text)):
                owner = defined.get(name)
                if owner and owner != f:
                    with self.subTest(caller=f, callee=name):
                        self.assertLess(level[owner], level[f], f"{f} calls {name} of {owner}")

    # Conversions of Python values that may appear outside the converter layer (argkinds.c) and
    # the field table (convert.c, values.c): (file, the text of the call), each with its reason.
    CONVERSIONS_ALLOWED = {
        ("addresses.c", "PyUnicode_AsUTF8AndSize(fmt"),  # a memoryview's own format string
        ("addresses.c", "PyLong_AsLong(size)"),  # ... and its itemsize
        ("dlpack.c", "PyLong_AsVoidPtr(v)"),  # the producer's exchange-API capsule address
        ("state.c", "PyUnicode_AsUTF8AndSize(name"),  # a type's __name__ for messages
        ("tensormap.c", "PyLong_AsSize_t(k)"),  # keys of the keep dict (ours)
    }

    def test_arguments_convert_in_the_converter_layer(self):
        """python/ext: every argument converts through argkinds.c (the parser names a converter per
        parameter, CPython's O&): no other file converts a Python value by hand (PyArg_Parse*,
        PyNumber_Index, PyLong_As*, PyObject_IsTrue, PyFloat_AsDouble, PyUnicode_AsUTF8*) but the
        field table (convert.c, values.c) and the reads listed in CONVERSIONS_ALLOWED; no other
        file defines a converter (gclpy_to_*); every gclpy_parse names a gclpy_params table."""
        import re
        layer = {"argkinds.c", "convert.c", "values.c"}  # parse.c converts nothing itself
        call = re.compile(r"\b(PyArg_Parse\w*|PyArg_UnpackTuple|PyNumber_Index|PyLong_As\w+|"
                          r"PyObject_IsTrue|PyFloat_AsDouble|PyUnicode_AsUTF8\w*|gclpy_long_arg)"
                          r"\s*\([^;]{0,40}")
        files = sorted(f for f in os.listdir(EXT_DIR) if f.endswith(".c"))
        seen = set()
        for f in files:
            text = open(os.path.join(EXT_DIR, f)).read()
            for m in call.finditer(text):
                allowed = [a for a in self.CONVERSIONS_ALLOWED if a[0] == f and m.group(0).startswith(
                    a[1].split("(")[0]) and a[1] in m.group(0)]
                seen.update(allowed)
                with self.subTest(file=f, call=m.group(0)):
                    self.assertTrue(f in layer or allowed, f"{f} converts by hand: {m.group(0)!r}")
            if f != "argkinds.c":
                with self.subTest(file=f):
                    self.assertNotRegex(text, r"(?m)^int gclpy_to_\w+\(", f"{f} defines a converter")
            for m in re.finditer(r"\bgclpy_parse(?:_tuple)?\(([^;]*?)\)\s*<", text):
                with self.subTest(file=f, parse=m.group(1)[:60]):
                    self.assertRegex(m.group(1), r"&\w*params|\bp\b", "a gclpy_params table")
        self.assertEqual(seen, self.CONVERSIONS_ALLOWED, "an allowed read is gone: drop it")

    def test_the_parser_releases_what_it_converted(self):
        """An argument refused after one that holds something (an image's bytes): the parser
        released the earlier one (CPython's O& with Py_CLEANUP_SUPPORTED)."""
        data = bytes(bytearray(b"not an image at all"))
        before = sys.getrefcount(data)
        for _ in range(100):
            with self.assertRaises(g.RangeError) as cm:
                g.inspect(data, arch=2000)
        self.assertEqual(str(cm.exception), "inspect: arch = 2000 is out of range (0 ... 1000)")
        self.assertEqual(sys.getrefcount(data), before)

    def test_one_message_shape(self):
        """Ints out of range, wrong types: '<fn>: <name> = <v> is out of range (lo ... hi)' and
        '<fn>: <name> takes <forms>, got <type>' wherever the argument is."""
        for fn, words in ((lambda: g.Layout("u32 a", -1), "Layout: sm = -1 is out of range (0 ... 2147483647)"),
                          (lambda: g.Context(-2), "Context: device = -2 is out of range (0 ... 2147483647)"),
                          (lambda: g.status_name(2**40), "status_name: code = 1099511627776 is out of range "
                                                          "(-2147483648 ... 2147483647)")):
            with self.assertRaises(g.RangeError) as cm:
                fn()
            self.assertEqual(str(cm.exception), words)
        for fn, words in ((lambda: g.Layout("u32 a", 9.0), "Layout: sm takes an int, got float"),
                          (lambda: g.Layout(b"u32 a", 90), "Layout: signature takes a str, got bytes"),
                          (lambda: g.inspect(b"", arch=1.5), "inspect: arch takes an int or a str ('sm_90'), got float")):
            with self.assertRaises(TypeError) as cm:
                fn()
            self.assertEqual(str(cm.exception), words)


if __name__ == "__main__":
    T.main()
