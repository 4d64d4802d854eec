"""gclaunch's driver side on the CPU, against tests/fakecuda (GCL_LIBCUDA): contexts, modules,
kernels with and without signatures, launches (the bytes the fake driver received equal
args.buffer()), streams from ints and __cuda_stream__, values converted per launch, tensor maps
set from lists (parameters and struct members), refresh and repoint, and refusals."""
import ctypes as C
import gc
import os
import inspect
import struct
import sys
import unittest

import gcltest as T

FAKE = T.fake_driver()  # sets GCL_LIBCUDA before gclaunch opens a driver
import gclaunch as g  # noqa: E402

ARGS8 = "i32 a, i32 b, f32 c, f32 d, const f32* p0, f32* p1, u64 n, i32 idx"
MAPS16 = "grid_constant tensormap[16] maps, const void* work, u32 n_work"
GLOBALS16 = "grid_constant struct{tensormap[16] maps, const void* work, u32 n_work} g"


def declare_from_cubin(image, name):
    """The fake reports the offsets the compiler wrote into the cubin (as the driver would)."""
    k = next(k for k in g.inspect(T.kernel(image)) if k["name"] == name)
    T.declare(FAKE, name, [(p["offset"], p["size"]) for p in k["params"]])


class Stream:
    """An object with __cuda_stream__ (as torch, CuPy and cuda.core streams have)."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


class FakeDriverTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for image, name in (("launchcfg.sm_90.cubin", "bench_args8"),
                            ("megakernel.sm_90.cubin", "megakernel_copy_16"),
                            ("megakernel.sm_90.cubin", "megakernel_globals_16")):
            declare_from_cubin(image, name)
        cls.ctx = g.Context(0)
        cls.launchcfg = cls.ctx.load(T.kernel("launchcfg.sm_90.cubin"))
        cls.mega = cls.ctx.load(open(T.kernel("megakernel.sm_90.cubin"), "rb").read())

    def setUp(self):
        self.p = T.Producer()
        self.mem = (C.c_float * 65536)()
        self.base = (C.addressof(self.mem) + 255) & ~255

    def test_context(self):
        self.assertEqual((self.ctx.device, self.ctx.sm), (0, 90))
        self.assertIn("Fake", self.ctx.name)
        self.assertNotEqual(self.ctx.handle, 0)
        self.ctx.synchronize()

    def test_launch_prepared_args(self):
        k = self.launchcfg.kernel("bench_args8", ARGS8)
        self.assertEqual(k.name, "bench_args8")
        a = k.args()
        for i, v in enumerate([1, -2, 3.5, 4.0, 0x1000, 0x2000, 2**40, 7]):
            a[i] = v
        n = FAKE.fakecuda_launch_count()
        k.launch((3, 2), 64, a, shared=1024, stream=None)
        rec = T.last_launch(FAKE)
        self.assertEqual(FAKE.fakecuda_launch_count(), n + 1)
        self.assertEqual(bytes(rec.params[:rec.param_bytes]), a.buffer())
        self.assertEqual((list(rec.grid), list(rec.block), rec.shared_bytes), ([3, 2, 1], [64, 1, 1], 1024))
        k.launch(1, (32, 2, 2), a, cluster=(1, 1, 1), cooperative=True)
        rec = T.last_launch(FAKE)
        self.assertEqual((list(rec.block), rec.cooperative), ([32, 2, 2], 1))

    def test_launch_values_equal_prepared_args(self):
        k = self.launchcfg.kernel("bench_args8", ARGS8)
        values = [5, 6, 0.25, -1.0, 0x3000, 0x4000, 99, -3]
        k.launch(1, 32, values)
        first = bytes(T.last_launch(FAKE).params[:k.layout.size])
        a = g.Args(k.layout)
        for i, v in enumerate(values):
            a[i] = v
        self.assertEqual(first, a.buffer())
        k.launch(grid=1, block=32, args=tuple(values))
        self.assertEqual(bytes(T.last_launch(FAKE).params[:k.layout.size]), a.buffer())

    def test_launch_values_written_directly_equal_the_setters(self):
        """values.c: after the first launch of values, plain values go straight into the bytes;
        every launch's bytes equal an Args set through the setters, and a value the setters refuse
        is refused (nothing launched) whichever path it would take."""
        k = self.launchcfg.kernel("bench_args8", ARGS8)
        buf = self.ctx.alloc(256)
        seq = [[1, 2, 3.0, 4.0, 0x1000, 0x2000, 5, 6],
               [-2**31, 2**31 - 1, 1e38, -0.0, 0x10, 2**64 - 4, 2**64 - 1, -1],
               [7, 8, 2, 3, buf, buf, 0, 9],  # ints into floats, Buffers into pointers
               [7, 8, float("inf"), float("nan"), self.tensor(0), 0x40, 1, 2],  # a tensor: the table
               [9, 9, 9.5, 9.25, 0x80, 0x90, 9, 9]]
        for values in seq * 2:
            k.launch(1, 32, values)
            a = k.args()
            for i, v in enumerate(values):
                a[i] = v
            with self.subTest(values=values):
                self.assertEqual(bytes(T.last_launch(FAKE).params[:k.layout.size]), a.buffer())
        n = FAKE.fakecuda_launch_count()
        good = [1, 2, 3.0, 4.0, 0x1000, 0x2000, 5, 6]
        for i, bad, err in ((0, 2**31, g.RangeError), (1, 1.5, TypeError), (2, 1e39, g.RangeError),
                            (3, "x", TypeError), (4, -1, g.RangeError), (4, 0x1001, g.Error),
                            (6, 2**64, g.RangeError), (7, True, None)):
            values = list(good)
            values[i] = bad
            with self.subTest(index=i, value=bad):
                k.launch(1, 32, good)  # every parameter plain: the next values go direct
                if err is None:
                    k.launch(1, 32, values)  # a bool into i32 is an int (as args[i] = True)
                    continue
                n = FAKE.fakecuda_launch_count()
                with self.assertRaises(err):
                    k.launch(1, 32, values)
                self.assertEqual(FAKE.fakecuda_launch_count(), n)
        buf.close()
        with self.assertRaises(g.Error):  # a closed Buffer where an open one went direct
            k.launch(1, 32, [7, 8, 2, 3, buf, 0x40, 0, 9])
        gc.collect()
        self.assertEqual(self.p.deleted, self.p.exported)

    def test_launch_refusals(self):
        k = self.launchcfg.kernel("bench_args8", ARGS8)
        n = FAKE.fakecuda_launch_count()
        a = k.args()
        with self.assertRaises(g.Error) as cm:
            k.launch(1, 32, a)
        self.assertEqual(cm.exception.status, "GCL_ERROR_UNSET_ARGUMENT")
        for i in range(8):
            a[i] = 16 * (i + 1)
        with self.assertRaises(g.Error) as cm:
            k.launch(0, 32, a)
        self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_CONFIG")
        self.assertIn("grid", str(cm.exception))
        for bad in (lambda: k.launch(1, 32, [1, 2]), lambda: k.launch(1.0, 32, a),
                    lambda: k.launch(1, 32, a, stream="s"), lambda: k.launch(1, 32, 5),
                    lambda: k.launch(1, 32, a, bogus=1), lambda: k.launch(1, 32)):
            with self.assertRaises(TypeError):
                bad()
        with self.assertRaises(g.RangeError):
            k.launch(-1, 32, a)
        with self.assertRaises(g.Error):  # a bad value among the values: nothing launched
            k.launch(1, 32, [1, 2, 3.0, 4.0, 0x10, 0x20, -1, 0])
        other = g.Args(g.Layout("u32 x", 90))
        other[0] = 1
        with self.assertRaises(g.Error):
            k.launch(1, 32, other)
        self.assertEqual(FAKE.fakecuda_launch_count(), n)

    def test_streams(self):
        # a real (fake) CUstream, made through the C library loaded with ctypes: it opens the same
        # fake driver instance, so the handle is one of the context's streams
        lib = C.CDLL(os.path.join(T.build_dir(), "libgclaunch.so"))
        lib.gcl_stream_handle.restype = C.c_void_p
        lib.gcl_stream_handle.argtypes = [C.c_void_p]
        ctx, st = C.c_void_p(), C.c_void_p()
        self.assertEqual(lib.gcl_context_create(0, C.byref(ctx)), 0)
        self.assertEqual(lib.gcl_stream_create(ctx, 0, C.byref(st)), 0)
        handle = lib.gcl_stream_handle(st)
        k = self.launchcfg.kernel("bench_args8", ARGS8)
        a = k.args()
        for i in range(8):
            a[i] = 16
        try:
            k.launch(1, 32, a, stream=handle)
            self.assertEqual(T.last_launch(FAKE).stream, handle)
            k.launch(1, 32, a, stream=Stream(handle))
            self.assertEqual(T.last_launch(FAKE).stream, handle)
            k.launch(1, 32, a, stream=None)
            self.assertIsNone(T.last_launch(FAKE).stream)
            with self.assertRaises(TypeError):  # __cuda_stream__ must give (version, handle)
                k.launch(1, 32, a, stream=type("S", (), {"__cuda_stream__": lambda self: 5})())
        finally:
            lib.gcl_stream_destroy(st)
            lib.gcl_context_destroy(ctx)

    def test_stream_handles_that_are_no_stream(self):
        k = self.launchcfg.kernel("bench_args8", ARGS8)
        a = k.args()
        for i in range(8):
            a[i] = 16
        junk = C.create_string_buffer(64)  # mapped memory that holds no stream
        cases = [(-1, g.RangeError), (-5, g.RangeError), (-2**63, g.RangeError), (2**64, g.RangeError),
                 (3, g.Error), (12345, g.Error), (4095, g.Error), (2**63, g.Error),
                 (0x7FFF_FFFF_F000, g.Error), (C.addressof(junk), g.Error)]
        n = T.launch_count(FAKE) if hasattr(T, "launch_count") else None
        for h, err in cases:
            for stream in (h, Stream(h)):
                with self.subTest(handle=h, wrapped=not isinstance(stream, int)):
                    with self.assertRaises(err) as cm:
                        k.launch(1, 32, a, stream=stream)
                    self.assertIn("stream", str(cm.exception))
        if n is not None:
            self.assertEqual(T.launch_count(FAKE), n)
        for ok in (0, 1, 2, None):  # the default, legacy and per-thread streams
            k.launch(1, 32, a, stream=ok)

    def test_launch_ints_out_of_range(self):
        k = self.launchcfg.kernel("bench_args8", ARGS8)
        a = k.args()
        for i in range(8):
            a[i] = 16
        for kw in ({"shared": -1}, {"shared": 2**40}, {"grid": -1}, {"block": (32, 2**32)},
                   {"cluster": (-1,)}, {"grid": (1, 2**64)}):
            with self.subTest(**{k_: str(v) for k_, v in kw.items()}):
                args = {"grid": 1, "block": 32, **kw}
                with self.assertRaises(g.RangeError):
                    k.launch(args.pop("grid"), args.pop("block"), a, **args)
        with self.assertRaises(TypeError):
            k.launch(1, 32, a, shared=1.5)

    def test_args_keep_map_tensors_alive(self):
        import weakref
        k = self.mega.kernel("megakernel_copy_16", MAPS16)
        a = k.args()
        ts = [self.tensor(256 * i) for i in range(16)]
        refs = [weakref.ref(t) for t in ts]
        a["maps"] = [g.TensorMap(t, (8, 16)) for t in ts]
        a["work"], a["n_work"] = 0x100, 0
        c = a.clone()
        del ts
        gc.collect()
        self.assertTrue(all(r() is not None for r in refs))
        a.repoint("maps[3]", [0x10000])  # an int address: the old tensor is no longer kept by a
        del a
        gc.collect()
        self.assertTrue(all(r() is not None for r in refs))  # the clone still points at all 16
        k.launch(1, 32, c)
        del c
        gc.collect()
        self.assertTrue(all(r() is None for r in refs))
        self.assertEqual(self.p.deleted, self.p.exported)  # borrowed views: each deleted once

    def test_read_only_tensor_refused_for_a_store_map(self):
        # issue 50: a tensor its producer flags read-only (DLPACK_FLAG_BITMASK_READ_ONLY) is
        # refused for a store map by name, as for a non-const pointer; loads over it are fine.
        k = self.mega.kernel("megakernel_copy_16", MAPS16)
        a = k.args()
        a["maps"] = [g.TensorMap(self.tensor(256 * i), (8, 16)) for i in range(16)]
        ro = self.tensor(4096, read_only=True)
        with self.assertRaises(g.Error) as cm:
            a["maps[5]"] = [g.TensorMap(self.tensor(8192), (8, 16), store=True),
                            g.TensorMap(ro, (8, 16), store=True)]
        self.assertEqual(cm.exception.status, "GCL_ERROR_TENSOR")
        self.assertIn("maps[6]", str(cm.exception))
        self.assertIn("tensor is read-only (DLPack flags 0x1) but options.store is set",
                      str(cm.exception))
        a["work"], a["n_work"] = 0x100, 0
        self.check_maps(k, a, k.layout.field("maps").offset, [256 * i for i in range(16)])  # nothing changed
        a["maps[5]"] = [g.TensorMap(self.tensor(8192), (8, 16), store=True),
                        g.TensorMap(ro, (8, 16))]  # a load map over it
        self.check_maps(k, a, k.layout.field("maps").offset, [256 * i for i in range(5)] + [8192, 4096] +
                        [256 * i for i in range(7, 16)])
        gc.collect()

    def test_read_only_refused_after_a_writable_store_map(self):
        # issue 53: a store map set over a writable tensor, then the same shape read-only (same
        # address, or moved): refused, not re-pointed, with the patch on and off (this file runs
        # both ways: python_fakecuda and python_fakecuda_nopatch); the refresh form too.
        k = self.mega.kernel("megakernel_copy_16", MAPS16)
        a = k.args()
        a["maps"] = [g.TensorMap(self.tensor(256 * i), (8, 16), store=True) for i in range(16)]
        a["work"], a["n_work"] = 0x100, 0
        off = k.layout.field("maps").offset
        for where in (256 * 6, 8192):  # the same address, then moved
            ro = self.tensor(where, read_only=True)
            for setter in (lambda m: a.__setitem__("maps[6]", m), lambda m: a.refresh("maps[6]", [m])):
                with self.assertRaises(g.Error) as cm:
                    setter(g.TensorMap(ro, (8, 16), store=True))
                self.assertEqual(cm.exception.status, "GCL_ERROR_TENSOR")
                self.assertIn("parameter 0 'maps' field 'maps[6]': tensor is read-only (DLPack flags "
                              "0x1) but options.store is set", str(cm.exception))
                self.check_maps(k, a, off, [256 * i for i in range(16)])  # nothing changed
        a["maps[6]"] = g.TensorMap(self.tensor(8192), (8, 16), store=True)  # writable: re-pointed
        self.check_maps(k, a, off, [256 * i for i in range(6)] + [8192] + [256 * i for i in range(7, 16)])
        gc.collect()

    def test_tensormap_table_shares_the_args_methods(self):
        # issue 53: TensorMapTable and Args write maps through one method set (the library's
        # gcl_tensormaps_set / _repoint over slots), with the same arguments and refusals.
        shared = ("set_tensormaps", "refresh", "repoint", "set_peer_tensormaps")
        for name in shared:
            self.assertEqual(inspect.signature(getattr(g.Args, name)).parameters.keys(),
                             inspect.signature(getattr(g.TensorMapTable, name)).parameters.keys())
        t = g.TensorMapTable(4, context=self.ctx)
        self.assertEqual((len(t), t.dirty, t.context), (4, 0, self.ctx))
        self.assertEqual(t.address % 128, 0)
        t.set_tensormaps(1, [g.TensorMap(self.tensor(256 * i), (8, 16), store=True) for i in range(2)])
        self.assertEqual(t.dirty, 2)
        k = self.mega.kernel("megakernel_copy_16", MAPS16)
        a = k.args()
        a.set_tensormaps("maps[1]", [g.TensorMap(self.tensor(256 * i), (8, 16), store=True) for i in range(2)])
        for i in (1, 2):  # the same bytes in the table's host copy and in the args
            self.assertEqual(t.map(i), a[f"maps[{i}]"])
        self.assertEqual(self.map_address(t.map(2), 0), self.base + 256)
        for owner, where, who in ((t, 2, "gcl_tensormap_table entry 2"),
                                  (a, "maps[2]", "field 'maps[2]'")):  # read-only under a store map
            with self.assertRaises(g.Error) as cm:
                owner.set_tensormaps(where, g.TensorMap(self.tensor(256, read_only=True), (8, 16), store=True))
            self.assertEqual(cm.exception.status, "GCL_ERROR_TENSOR")
            self.assertIn(who + ": tensor is read-only (DLPack flags 0x1) but options.store is set",
                          str(cm.exception))
        self.assertEqual(self.map_address(t.map(2), 0), self.base + 256)  # nothing changed
        t.upload()
        self.assertEqual(t.dirty, 0)
        t.repoint(1, [self.base + 4096, self.base + 8192])
        self.assertEqual(self.map_address(t.map(1), 0), self.base + 4096)
        self.assertEqual(t.dirty, 2)
        with self.assertRaises(g.Error) as cm:
            t.repoint(3, [self.base + 16, self.base + 32])  # past the table
        self.assertIn("the table has 4 maps", str(cm.exception))
        with self.assertRaises(g.Error) as cm:
            t.repoint(0, [self.base])  # never set
        self.assertEqual(cm.exception.status, "GCL_ERROR_UNSET_ARGUMENT")
        t.close()
        with self.assertRaises(g.Error):
            t.set_tensormaps(0, g.TensorMap(self.tensor(0), (8, 16)))
        gc.collect()

    def test_signature_mismatch_and_untyped_kernels(self):
        with self.assertRaises(g.Error) as cm:
            self.launchcfg.kernel("bench_args8", "u64 a, u64 b")
        self.assertEqual(cm.exception.status, "GCL_ERROR_SIGNATURE_MISMATCH")
        with self.assertRaises(g.Error) as cm:
            self.launchcfg.kernel("no_such_kernel")
        self.assertEqual(cm.exception.status, "GCL_ERROR_NOT_FOUND")
        k = self.launchcfg.kernel("bench_args8")  # untyped: ints by width, bytes
        self.assertEqual([p.kind for p in k.layout.params], ["bytes"] * 8)
        k.launch(1, 32, [1, -2, struct.pack("<f", 1.0), b"\0\0\0\0", 0x10, 0x20, 2**64 - 1, -1])
        rec = T.last_launch(FAKE)
        self.assertEqual(struct.unpack_from("<ii", bytes(rec.params), 0), (1, -2))
        with self.assertRaises(g.RangeError):
            k.launch(1, 32, [2**32, 0, b"\0" * 4, b"\0" * 4, 0, 0, 0, 0])
        with self.assertRaises(TypeError):
            k.launch(1, 32, [1.0, 0, b"\0" * 4, b"\0" * 4, 0, 0, 0, 0])

    def tensor(self, offset, rows=8, cols=16, **kw):
        return T.FakeTensor(self.p, self.base, shape=(rows, cols), strides=(64, 1),
                            byte_offset=offset, **kw)

    def map_address(self, buf, off):
        return struct.unpack_from("<Q", buf, off)[0]

    def check_maps(self, k, a, maps_at, offsets):
        k.launch(1, 32, a)
        buf = bytes(T.last_launch(FAKE).params[:k.layout.size])
        self.assertEqual(buf, a.buffer())
        for i, off in enumerate(offsets):
            self.assertEqual(self.map_address(buf, maps_at + 128 * i), self.base + off, f"map {i}")
            self.assertEqual(struct.unpack_from("<2I", buf, maps_at + 128 * i + 88), (16, 8))  # box, TMA order

    def test_tensormap_arrays(self):
        offsets = [256 * i for i in range(16)]
        for name, sig, key in (("megakernel_copy_16", MAPS16, "maps"),
                               ("megakernel_globals_16", GLOBALS16, "g.maps")):
            with self.subTest(kernel=name):
                k = self.mega.kernel(name, sig)
                a = k.args()
                a[key] = [g.TensorMap(self.tensor(o), (8, 16)) for o in offsets]
                prefix = "g." if key == "g.maps" else ""
                a[prefix + "work"] = self.base
                a[prefix + "n_work"] = 1
                maps_at = k.layout.field(key).offset
                self.check_maps(k, a, maps_at, offsets)
                # one element, then from an element on
                a[key + "[3]"] = g.TensorMap(self.tensor(4096), (8, 16))
                a[key + "[14]"] = [g.TensorMap(self.tensor(8192), (8, 16)), g.TensorMap(self.tensor(8448), (8, 16))]
                offsets2 = offsets[:3] + [4096] + offsets[4:14] + [8192, 8448]
                self.check_maps(k, a, maps_at, offsets2)
                # refresh: only addresses changed; repoint: addresses from ints and tensors
                a.refresh(key, [g.TensorMap(self.tensor(o + 512), (8, 16)) for o in offsets])
                self.check_maps(k, a, maps_at, [o + 512 for o in offsets])
                a.repoint(key + "[2]", [self.base + 1024, self.tensor(2048)])
                self.check_maps(k, a, maps_at, [512, 768, 1024, 2048] + [o + 512 for o in offsets[4:]])
                self.assertEqual(self.p.deleted, self.p.exported)  # every borrowed tensor released

    def test_graph_replays_repointed_maps(self):
        # docs/graphs.md: re-point through Args.repoint, then Graph.set_args, then Graph.launch; a
        # replay before set_args still has the maps of the capture (the node holds a copy).
        offsets = [256 * i for i in range(16)]
        s = self.ctx.create_stream()
        for name, sig, key in (("megakernel_copy_16", MAPS16, "maps"),
                               ("megakernel_globals_16", GLOBALS16, "g.maps")):
            with self.subTest(kernel=name):
                k = self.mega.kernel(name, sig)
                a = k.args()
                a[key] = [g.TensorMap(self.tensor(o), (8, 16)) for o in offsets]
                prefix = "g." if key == "g.maps" else ""
                a[prefix + "work"], a[prefix + "n_work"] = self.base, 1
                maps_at = k.layout.field(key).offset
                with s.capture() as graph:
                    k.launch(1, 32, a, stream=s)
                for r in range(1, 5):
                    shift = 4096 * (r % 2)
                    a.repoint(key + "[0]", [self.base + o + shift for o in offsets])
                    graph.launch(s)  # not set yet: the previous maps
                    before = bytes(T.last_launch(FAKE).params[:k.layout.size])
                    prev = 4096 * ((r - 1) % 2)
                    self.assertEqual(self.map_address(before, maps_at), self.base + prev, f"replay {r}")
                    graph.set_args(0, k, a)
                    graph.launch(s)
                    buf = bytes(T.last_launch(FAKE).params[:k.layout.size])
                    self.assertEqual(buf, a.buffer(), f"replay {r}")
                    for i, o in enumerate(offsets):
                        self.assertEqual(self.map_address(buf, maps_at + 128 * i), self.base + o + shift)
                graph.close()

    def test_repoint_from_host_arrays_of_addresses(self):
        """repoint takes a host array of 64-bit addresses (array.array, memoryview, a CPU
        __dlpack__ tensor) as one block, the same as the list of ints."""
        import array
        k = self.mega.kernel("megakernel_copy_16", MAPS16)
        a = k.args()
        a["maps"] = [g.TensorMap(self.tensor(256 * i), (8, 16)) for i in range(16)]
        a["work"], a["n_work"] = self.base, 1
        maps_at = k.layout.field("maps").offset
        new = [256 * ((i + 3) % 16) for i in range(16)]
        addrs = [self.base + o for o in new]
        host = array.array("Q", addrs)  # a CPU tensor of uint64 (kDLCPU = 1, kDLUInt = 1)
        forms = [array.array("Q", addrs), memoryview(array.array("q", addrs)),
                 T.FakeTensor(self.p, host.buffer_info()[0], shape=(16,), dtype=(1, 64), device=(1, 0)),
                 memoryview(array.array("Q", [x for x in addrs for _ in (0, 1)]))[::2]]  # strided: copied in order
        for form in forms:
            with self.subTest(form=type(form).__name__):
                a.repoint("maps", [self.base] * 16)  # somewhere else first
                a.repoint("maps", form)
                self.check_maps(k, a, maps_at, new)
        a.repoint("maps[4]", array.array("Q", addrs[4:6]))  # from an element on
        self.check_maps(k, a, maps_at, new)
        before = a.buffer()
        for bad, err in ((array.array("I", [1, 2]), g.Error), (b"\0" * 16, g.Error),
                         (array.array("q", [self.base, -16]), g.RangeError),
                         (array.array("Q", [self.base + 8]), g.Error), ("maps", TypeError)):
            with self.subTest(bad=bad):
                with self.assertRaises(err):
                    a.repoint("maps", bad)
                self.assertEqual(a.buffer(), before)
        gc.collect()
        self.assertEqual(self.p.deleted, self.p.exported)

    def test_tensormap_refusals_change_nothing(self):
        k = self.mega.kernel("megakernel_copy_16", MAPS16)
        a = k.args()
        a["maps"] = [g.TensorMap(self.tensor(256 * i), (8, 16)) for i in range(16)]
        a["work"], a["n_work"] = self.base, 1
        before = a.buffer()
        bad_lists = [
            ([g.TensorMap(self.tensor(0), (8, 16))] * 15 + [g.TensorMap(self.tensor(4), (8, 16))], "GCL_ERROR_TENSOR"),
            ([g.TensorMap(self.tensor(0), (8, 16))] * 15 + [g.TensorMap(self.tensor(0), (8, 16, 1))], "GCL_ERROR_INVALID_ARGUMENT"),
            ([g.TensorMap(self.tensor(0, cols=6), (8, 6), store=True)] * 16, "GCL_ERROR_TENSOR"),
            ([g.TensorMap(self.tensor(0), (8, 16))] * 3, "GCL_ERROR_INVALID_ARGUMENT"),
        ]
        for maps, status in bad_lists:
            with self.subTest(status=status):
                with self.assertRaises(g.Error) as cm:
                    a["maps"] = maps
                self.assertEqual(cm.exception.status, status)
                self.assertEqual(a.buffer(), before)
        with self.assertRaises(TypeError):
            a["maps"] = [1] * 16
        with self.assertRaises(TypeError):
            a["maps[0]"] = self.tensor(0)
        with self.assertRaises(g.Error) as cm:
            a["maps[15]"] = [g.TensorMap(self.tensor(0), (8, 16))] * 2  # past the end
        self.assertEqual(a.buffer(), before)
        with self.assertRaises(g.Error):
            a.repoint("maps[0]", [self.base + 8])  # not 16-byte aligned
        self.assertEqual(a.buffer(), before)
        with self.assertRaises(g.Error) as cm:
            a.repoint("maps[0]", [1 << 57])  # past the driver's bound (measured, driver 580)
        self.assertIn("address 0x200000000000000: TMA needs a nonzero 16-byte aligned global "
                      "address below 2^57", str(cm.exception))
        self.assertEqual(a.buffer(), before)
        gc.collect()
        self.assertEqual(self.p.deleted, self.p.exported)

    def test_tensormap_rules_refuse_before_the_driver(self):
        # Issue 36: each rule refuses with gclaunch.TensorError naming the DLPack dimension or
        # option, the value and the limit, and no encode reaches the driver.
        k = self.mega.kernel("megakernel_copy_16", MAPS16)
        a = k.args()
        FAKE.fakecuda_calls.restype = C.c_long
        enc = lambda: FAKE.fakecuda_calls(b"cuTensorMapEncodeTiled") + FAKE.fakecuda_calls(b"cuTensorMapEncodeIm2col")
        cases = [
            (g.TensorMap(self.tensor(4), (8, 16)), "is not 16-byte aligned"),
            (g.TensorMap(self.tensor(0), (8, 3)), "box[0] (dimension 1) = 3 elements of 4 bytes = 12 bytes"),
            (g.TensorMap(self.tensor(0), (8, 64), swizzle=128), "exceeds the 128-byte swizzle span"),
            (g.TensorMap(self.tensor(0), (300, 16)), "box[1] (dimension 0) = 300"),
            (g.TensorMap(self.tensor(0), (8, 16), element_strides=(9, 1)), "element_strides[1] (dimension 0) = 9"),
            (g.TensorMap(self.tensor(0), (8, 16), oob_nan=True, interleave=1), "interleave 1 needs rank >= 3"),
            (g.TensorMap(self.tensor((1 << 57) - self.base), (8, 16)),
             "= 0x200000000000000: the driver encodes global addresses below 2^57"),
        ]
        for tm, text in cases:
            with self.subTest(text=text):
                before = enc()
                with self.assertRaises(g.TensorError) as cm:
                    a["maps[0]"] = tm
                self.assertIsInstance(cm.exception, g.Error)
                self.assertEqual(cm.exception.status, "GCL_ERROR_TENSOR")
                self.assertIn("parameter 0 'maps' field 'maps[0]'", str(cm.exception))
                self.assertIn(text, str(cm.exception))
                self.assertEqual(enc(), before, "the driver was called")
                with self.assertRaises(g.TensorError) as cm2:
                    tm.describe()  # gcl_tensormap_check: the same rule, the same words
                self.assertIn(text, str(cm2.exception))
        # NULL data is encoded as the driver encodes it (a template map): the address is the offset.
        null = g.TensorMap(T.FakeTensor(self.p, 0, shape=(8, 16), strides=(64, 1), byte_offset=256), (8, 16))
        self.assertEqual(null.describe()["address"], 256)
        before = enc()
        a["maps[0]"] = null
        self.assertEqual(enc(), before + 1)
        self.assertTrue(a.is_set("maps[0]"))

    def test_im2col_maps(self):
        # im2col=(pixels, channels) instead of a box: cuTensorMapEncodeIm2col with the corners
        # innermost first (W, H), as the C options and run's tmap: spec; the same named refusals
        # before the driver (issue 36), and the usage errors of the keywords.
        k = self.mega.kernel("megakernel_copy_16", MAPS16)
        a = k.args()
        FAKE.fakecuda_calls.restype = C.c_long
        calls = lambda name: FAKE.fakecuda_calls(name)
        nhwc = T.FakeTensor(self.p, self.base, shape=(2, 8, 8, 16))  # N, H, W, C float32
        tm = g.TensorMap(nhwc, im2col=(64, 16), lower=(-1, -2), upper=(1, 0))
        self.assertIsNone(tm.box)
        self.assertIn("im2col=(64, 16) lower=(-1, -2, 0) upper=(1, 0, 0)", repr(tm))
        d = tm.describe()
        self.assertEqual(d["im2col"], {"pixels": 64, "channels": 16, "lower": (-1, -2), "upper": (1, 0)})
        self.assertEqual(d["dims"], (16, 8, 8, 2))
        self.assertEqual(d["box_bytes"], 64 * 16 * 4)
        before = calls(b"cuTensorMapEncodeIm2col")
        a["maps[0]"] = tm
        self.assertEqual(calls(b"cuTensorMapEncodeIm2col"), before + 1)
        self.assertTrue(a.is_set("maps[0]"))
        a["maps[1]"] = [tm] * 15
        a["work"], a["n_work"] = 0x100, 0
        self.assertEqual(self.map_address(a.buffer(), k.layout.field("maps[0]").offset), self.base)
        refusals = [
            (dict(im2col=(64, 16), lower=(3, 0), upper=(-5, 0)),
             "im2col bounding box along W is empty: dimension 2 has size 8, and size + upper[0] - "
             "lower[0] = 8 + -5 - 3 = 0; expected at least 1"),
            (dict(im2col=(64, 16), lower=(0, 200)), "im2col.lower[1] (H, dimension 1) = 200: expected -128 ... 127"),
            (dict(im2col=(1025, 16)), "im2col.pixels = 1025: expected 1 ... 1024"),
            (dict(im2col=(64, 6)), "im2col.channels (dimension 3) = 6 elements of 4 bytes = 24 bytes"),
            (dict(im2col=(1024, 64)), "im2col.pixels x channels = 1024 x 64 elements of 4 bytes = 262144 bytes"),
        ]
        buf = a.buffer()
        for kw, text in refusals:
            with self.subTest(text=text):
                before = calls(b"cuTensorMapEncodeIm2col")
                bad = g.TensorMap(nhwc, **kw)
                with self.assertRaises(g.TensorError) as cm:
                    a["maps[0]"] = bad
                self.assertIn(text, str(cm.exception))
                self.assertEqual(calls(b"cuTensorMapEncodeIm2col"), before, "the driver was called")
                self.assertEqual(a.buffer(), buf)  # nothing changed
                with self.assertRaises(g.TensorError) as cm2:
                    bad.describe()
                self.assertIn(text, str(cm2.exception))
        usage = [
            (lambda: g.TensorMap(nhwc), "give a box, or im2col=(pixels, channels)"),
            (lambda: g.TensorMap(nhwc, (1, 8, 8, 16), im2col=(64, 16)), "box and im2col exclude each other"),
            (lambda: g.TensorMap(nhwc, (1, 8, 8, 16), lower=(0,)), "im2col corners need im2col=(pixels, channels)"),
            (lambda: g.TensorMap(nhwc, im2col=(64,)), "TensorMap im2col: expected 2 ints, got 1"),
            (lambda: g.TensorMap(nhwc, im2col=(0, 16)), "pixels = 0: expected 1 ... 1024"),
            (lambda: g.TensorMap(nhwc, im2col=(64, 16), lower=(0, 0, 0, 0)), "TensorMap lower: expected 1 to 3 ints, got 4"),
        ]
        for make, text in usage:
            with self.subTest(text=text):
                with self.assertRaises(g.Error) as cm:
                    make()
                self.assertIn(text, str(cm.exception))
        with self.assertRaises(g.RangeError):
            g.TensorMap(nhwc, im2col=(64, 16), upper=(2**31,))
        with self.assertRaises(TypeError):
            g.TensorMap(nhwc, im2col="64x16")
        e = g.TensorMap(nhwc, im2col=(64, 16), element_strides=(1, 2, 1))
        with self.assertRaises(g.Error) as cm:
            e.describe()
        self.assertIn("element_strides: 3 values for a tensor of 4 dimensions", str(cm.exception))

    def test_tensormaps_into_cpu_made_args(self):
        # Args of a Layout (no kernel): maps are encoded in the tensor's device's default context
        lay = g.Layout(MAPS16, 90)
        a = g.Args(lay)
        a["maps[0]"] = g.TensorMap(self.tensor(512), (8, 16))
        self.assertTrue(a.is_set("maps[0]"))
        self.assertFalse(a.is_set("maps[1]"))
        a["maps[1]"] = [g.TensorMap(self.tensor(768), (8, 16))] * 15
        a["work"], a["n_work"] = 0x100, 0
        self.assertEqual(self.map_address(a.buffer(), lay.field("maps[0]").offset), self.base + 512)
        self.assertEqual(self.map_address(a.buffer(), lay.field("maps[15]").offset), self.base + 768)

    def test_compile(self):
        src = 'extern "C" __global__ void scale(float *x, float a, unsigned n) { if (threadIdx.x < n) x[threadIdx.x] *= a; }'
        T.declare(FAKE, "scale", [(0, 8), (8, 4), (12, 4)])
        try:
            mod = self.ctx.compile(src, name="scale.cu", options=("-lineinfo",))
        except g.Error as e:
            if e.status == "GCL_ERROR_NO_NVRTC":
                T.skip_unless_required(self, "GCL_REQUIRE_NVRTC", f"NVRTC: {e}")
            raise
        k = mod.kernel("scale", "f32* x, f32 a, u32 n")
        k.launch(1, 32, [0x1000, 2.0, 32])
        self.assertEqual(struct.unpack_from("<QfI", bytes(T.last_launch(FAKE).params)), (0x1000, 2.0, 32))
        with self.assertRaises(g.Error) as cm:
            self.ctx.compile("this is not CUDA", name="bad.cu")
        self.assertEqual(cm.exception.status, "GCL_ERROR_COMPILE")
        self.assertIn("bad.cu", str(cm.exception))
        with self.assertRaises(TypeError):
            self.ctx.compile(src, options=[1])
        with self.assertRaises(TypeError):
            self.ctx.compile(b"bytes")

    def test_objects_and_lifetimes(self):
        live = FAKE.fakecuda_live(b"library")
        ctx = g.Context(0)
        mod = ctx.load(T.kernel("launchcfg.sm_90.cubin"))
        k = mod.kernel("bench_args8", ARGS8)
        lay = k.layout
        del ctx, mod, k
        gc.collect()
        self.assertEqual(lay.size, 44)  # the layout keeps its module alive
        self.assertEqual(FAKE.fakecuda_live(b"library"), live + 1)
        del lay
        gc.collect()
        self.assertEqual(FAKE.fakecuda_live(b"library"), live)
        with self.assertRaises(TypeError):
            g.Kernel()
        with self.assertRaises(g.Error):
            g.Context(5)

    def test_launch_hot_path_does_not_leak(self):
        k = self.launchcfg.kernel("bench_args8", ARGS8)
        a = k.args()
        for i in range(8):
            a[i] = 16
        s = Stream(0)
        refs = (sys.getrefcount(a), sys.getrefcount(s))
        for i in range(20000):
            k.launch(1, 32, a)
            a[7] = i
            k.launch((1, 1), (32,), [1, 2, 3.0, 4.0, 16, 32, 5, i], stream=s)
        self.assertEqual((sys.getrefcount(a), sys.getrefcount(s)), refs)


if __name__ == "__main__":
    T.main()
