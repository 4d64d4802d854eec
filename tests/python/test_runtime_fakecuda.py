"""The runtime in Python against tests/fakecuda (GCL_LIBCUDA): Stream (created, wrapped from a
handle or a __cuda_stream__ object, __cuda_stream__, record/wait/synchronize, priorities), Event
(record, query, elapsed milliseconds), Graph (capture, kernel_count, set_args, launch), Buffer
(alloc, copies sync and on a stream, fill, views, __dlpack__, __cuda_array_interface__, as a
pointer argument kept alive by Args), occupancy and persistent_config, kernel attributes, devices,
the pdl= and priority= launch keywords; bad inputs raise gclaunch.Error subclasses (RangeError for
ints out of range) or TypeError, and change nothing.

The fake's device memory is host memory: buffers are read back with ctypes at their address."""
import ctypes as C
import gc
import os
import struct
import sys
import unittest

import gcltest as T

FAKE = T.fake_driver()  # sets GCL_LIBCUDA before gclaunch opens a driver
import gclaunch as g  # noqa: E402

ARGS8 = "i32 a, i32 b, f32 c, f32 d, const f32* p0, f32* p1, u64 n, i32 idx"
VALUES8 = [1, -2, 3.5, 4.0, 0x1000, 0x2000, 2**40, 7]

# Own function objects (pythonapi[...] makes a new one; pythonapi.NAME is shared with gcltest,
# whose capsule destructors pass raw pointers: py_object argtypes there break them).
_capsule_ptr = C.pythonapi["PyCapsule_GetPointer"]
_capsule_ptr.restype = C.c_void_p
_capsule_ptr.argtypes = [C.py_object, C.c_char_p]
_capsule_name = C.pythonapi["PyCapsule_GetName"]
_capsule_name.restype = C.c_char_p
_capsule_name.argtypes = [C.py_object]


class ForeignStream:
    """A stream object of another library: only __cuda_stream__ (as torch/CuPy/cuda.core)."""

    def __init__(self, handle):
        self.handle = handle
        self.deleted = None

    def __cuda_stream__(self):
        return (0, self.handle)

    def __del__(self):
        if self.deleted is not None:
            self.deleted.append(True)


def torch_named_stream(name, asked, gone=None, slots=False):
    """A stream type with torch's names (torch.cuda.streams.<name>), which launch remembers an
    object of: its cuda_stream property appends the handle to asked when read, and __del__ appends
    it to gone (when given). slots: no weak references."""
    def cuda_stream(self):
        asked.append(self.h)
        return self.h

    def init(self, h):
        self.h = h

    body = {"__init__": init, "cuda_stream": property(cuda_stream), "__module__": "torch.cuda.streams",
            "__qualname__": name}
    if slots:
        body["__slots__"] = ("h",)
    if gone is not None:
        body["__del__"] = lambda self: gone.append(self.h)
    return type(name, (), body)


def live(kind):
    return FAKE.fakecuda_live(kind.encode())


def calls(entry):
    return FAKE.fakecuda_calls(entry.encode())


class RuntimeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        k = next(k for k in g.inspect(T.kernel("launchcfg.sm_90.cubin")) if k["name"] == "bench_args8")
        T.declare(FAKE, "bench_args8", [(p["offset"], p["size"]) for p in k["params"]])
        cls.ctx = g.Context(0)
        cls.mod = cls.ctx.load(T.kernel("launchcfg.sm_90.cubin"))
        cls.k = cls.mod.kernel("bench_args8", ARGS8)

    def args(self, values=VALUES8):
        a = self.k.args()
        for i, v in enumerate(values):
            a[i] = v
        return a

    def last(self):
        return T.last_launch(FAKE)

    def params(self):
        return bytes(self.last().params[:self.k.layout.size])

    # --- contexts and devices -----------------------------------------------------------------
    def test_context_is_one_per_device(self):
        self.assertIs(g.Context(0), self.ctx)
        self.assertIs(g.Context(), self.ctx)

    def test_devices(self):
        self.assertEqual(g.device_count(), 1)
        info = g.device_info(0)
        self.assertIsInstance(info, g.DeviceInfo)
        self.assertEqual((info.device, info.sm, info.multiprocessors), (0, 90, 132))
        self.assertIn("Fake", info.name)
        self.assertGreater(info.total_memory, 0)
        self.assertGreater(info.max_threads_per_block, 0)
        self.assertEqual(info._asdict()["name"], info.name)
        self.assertEqual(g.device_info(), info)
        with self.assertRaises(g.Error):
            g.device_info(5)
        with self.assertRaises(g.RangeError):
            g.device_info(-1)
        with self.assertRaises(g.RangeError):
            g.device_info(2**40)
        with self.assertRaises(TypeError):
            g.device_info("0")

    # --- streams --------------------------------------------------------------------------------
    def test_stream_create_and_launch(self):
        n = live("stream")
        s = self.ctx.create_stream()
        self.assertEqual(live("stream"), n + 1)
        self.assertEqual((s.priority, s.context, s.closed, s.is_capturing), (0, self.ctx, False, False))
        self.assertNotEqual(s.handle, 0)
        self.assertEqual(s.__cuda_stream__(), (0, s.handle))
        hi = self.ctx.create_stream(priority=-5)
        self.assertEqual(hi.priority, -5)
        self.assertEqual(g.Stream(self.ctx, -2).priority, -2)
        self.assertEqual(g.Stream().context, self.ctx)
        a = self.args()
        self.k.launch(1, 32, a, stream=s)
        self.assertEqual(self.last().stream, s.handle)
        self.k.launch(1, 32, a, stream=ForeignStream(hi.handle))  # any __cuda_stream__ object
        self.assertEqual(self.last().stream, hi.handle)
        s.synchronize()
        s.close()
        self.assertTrue(s.closed)
        self.assertEqual(live("stream"), n + 1 + (1 if hi else 0) - 1)
        with self.assertRaises(g.Error) as cm:
            self.k.launch(1, 32, a, stream=s)
        self.assertIn("closed", str(cm.exception))
        for call in (s.synchronize, s.record, s.__cuda_stream__, s.begin_capture):
            with self.assertRaises(g.Error):
                call()
        with self.ctx.create_stream() as t:
            self.assertFalse(t.closed)
        self.assertTrue(t.closed)

    def test_stream_priority_refused_with_the_range(self):
        n = live("stream")
        for bad in (1, -6):
            with self.assertRaises(g.Error) as cm:
                self.ctx.create_stream(priority=bad)
            self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_ARGUMENT")
            self.assertIn("-5 (highest) ... 0 (lowest)", str(cm.exception))
        with self.assertRaises(g.RangeError):
            self.ctx.create_stream(priority=2**40)
        with self.assertRaises(TypeError):
            self.ctx.create_stream(priority=1.0)
        with self.assertRaises(TypeError):
            g.Stream(context=5)
        self.assertEqual(live("stream"), n)

    def test_from_handle(self):
        own = self.ctx.create_stream(priority=-3)
        n = live("stream")
        w = g.Stream.from_handle(own.handle)
        self.assertEqual((w.handle, w.priority), (own.handle, -3))  # the driver's priority
        self.assertIs(g.Stream.from_handle(own), own)
        f = ForeignStream(own.handle)
        wf = g.Stream.from_handle(f, context=self.ctx)
        self.assertEqual(wf.handle, own.handle)
        self.assertEqual(live("stream"), n)  # wrappers create no stream
        refs = sys.getrefcount(f)
        del wf
        self.assertEqual(sys.getrefcount(f), refs - 1)  # it kept the object alive
        legacy = type("TorchOld", (), {"cuda_stream": own.handle})()  # torch before the protocol
        self.assertEqual(g.Stream.from_handle(legacy).handle, own.handle)
        self.assertEqual(g.Stream.from_handle(0).handle, 0)  # the default stream
        w.close()
        self.assertEqual(live("stream"), n)  # closing a wrapper leaves the stream alone
        own.synchronize()
        not_a_stream = (C.c_uint32 * 16)()  # live memory that holds no stream
        with self.assertRaises(g.Error) as cm:
            g.Stream.from_handle(C.addressof(not_a_stream))
        self.assertEqual(cm.exception.status, "GCL_ERROR_DRIVER")
        self.assertIn("handle", str(cm.exception))
        with self.assertRaises(g.RangeError):
            g.Stream.from_handle(-5)
        for bad in ("s", 1.5, None, type("S", (), {"__cuda_stream__": lambda self: 5})()):
            with self.assertRaises(TypeError):
                g.Stream.from_handle(bad)

    def test_stream_wrapping_its_owner_is_collected(self):
        # a cycle through the wrapped object: only a GC-tracked Stream lets it go
        own = self.ctx.create_stream()
        gone = []
        f = ForeignStream(own.handle)
        f.deleted = gone
        f.wrapper = g.Stream.from_handle(f)
        del f
        gc.collect()
        self.assertEqual(gone, [True])

    # --- events ---------------------------------------------------------------------------------
    def test_events(self):
        s = self.ctx.create_stream()
        n = live("event")
        start = s.record()
        self.assertIsInstance(start, g.Event)
        self.k.launch(1, 32, self.args(), stream=s)
        stop = g.Event(self.ctx)
        self.assertIs(stop.record(s), stop)
        self.assertEqual(live("event"), n + 2)
        ms = stop - start
        self.assertIsInstance(ms, float)
        self.assertGreaterEqual(ms, 0.0)
        self.assertLess(ms, 60_000.0)  # milliseconds, not microseconds of a long wait
        self.assertEqual(start.elapsed_ms(stop), stop - start)
        self.assertTrue(stop.is_done)
        stop.synchronize()
        self.assertIs(s.record(stop), stop)
        e = self.ctx.create_event()
        e.record()  # the default stream
        e.record(ForeignStream(s.handle))
        e.record(s.handle)
        fresh = self.ctx.create_event()
        with self.assertRaises(g.Error):
            fresh - start  # never recorded
        with self.assertRaises(TypeError):
            stop - 1.0
        with self.assertRaises(TypeError):
            s.record(5)
        with self.assertRaises(TypeError):
            e.record("s")
        FAKE.fakecuda_fail_once(b"cuEventQuery", 600, 0)  # CUDA_ERROR_NOT_READY
        self.assertFalse(stop.is_done)
        del start, stop, e, fresh
        gc.collect()
        self.assertEqual(live("event"), n)

    def test_wait(self):
        a, b = self.ctx.create_stream(), self.ctx.create_stream()
        n = calls("cuStreamWaitEvent")
        a.wait(b.record())
        a.wait(b)
        a.wait(ForeignStream(b.handle))
        self.assertEqual(calls("cuStreamWaitEvent"), n + 3)
        for bad in (1.5, None, "x"):
            with self.assertRaises(TypeError):
                a.wait(bad)
        self.assertEqual(calls("cuStreamWaitEvent"), n + 3)

    # --- graphs ---------------------------------------------------------------------------------
    def test_graph_captures_a_tensormap_table(self):
        # issue 53: tables from Python, captured in graphs (gcl_graph_capture_table): every replay
        # uploads the maps the graph took; set_table takes new ones after a re-point.
        b = self.ctx.alloc(1 << 16)
        p = T.Producer()
        t = g.TensorMapTable(3, context=self.ctx)
        x = T.FakeTensor(p, b.ptr, shape=(16, 64), strides=(64, 1))
        t.set_tensormaps(0, [g.TensorMap(x, (8, 32))] * 3)
        s = self.ctx.create_stream()
        with s.capture() as graph:
            s.capture_table(t)
            self.k.launch(1, 32, self.args(), stream=s)
        self.assertEqual(graph.kernels, (self.k,))  # the table is kept, not listed
        graph.launch(s)
        t.repoint(1, [b.ptr + 4096])
        graph.set_table(t)
        graph.launch(s)
        s.synchronize()
        other = g.TensorMapTable(1, context=self.ctx)
        with self.assertRaises(g.Error) as cm:
            graph.set_table(other)  # never captured into this graph
        self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_ARGUMENT")
        with self.assertRaises(g.Error):
            s.capture_table(t)  # not capturing
        with self.assertRaises(TypeError):
            graph.set_table(b)
        del graph
        gc.collect()
        t.close(), other.close(), s.close(), b.close()

    def test_graph_capture_set_args_launch(self):
        s = self.ctx.create_stream()
        a0, a1 = self.args([1, 2, 1.0, 2.0, 16, 32, 3, 4]), self.args([5, 6, 5.0, 6.0, 48, 64, 7, 8])
        launches = FAKE.fakecuda_launch_count()
        execs = live("exec")
        with s.capture() as graph:
            self.assertTrue(s.is_capturing)
            self.k.launch(1, 32, a0, stream=s)
            self.k.launch(2, 64, a1, stream=s)
        self.assertFalse(s.is_capturing)
        self.assertEqual(FAKE.fakecuda_launch_count(), launches)  # captured, not run
        self.assertEqual(graph.kernel_count, 2)
        self.assertEqual(graph.kernels, (self.k, self.k))
        self.assertEqual(live("exec"), execs + 1)
        graph.launch(s)
        self.assertEqual(FAKE.fakecuda_launch_count(), launches + 2)
        self.assertEqual(self.params(), a1.buffer())
        a2 = self.args([9, 10, 9.0, 10.0, 80, 96, 11, 12])
        graph.set_args(1, self.k, a2)
        graph.launch(stream=s)
        self.assertEqual(self.params(), a2.buffer())
        self.assertEqual(list(self.last().grid), [2, 1, 1])  # the node's grid is kept
        graph.set_args(1, self.k, [13, 14, 1.5, 2.5, 112, 128, 15, 16])  # values
        graph.launch()
        self.assertEqual(struct.unpack_from("<ii", self.params()), (13, 14))
        before = self.params()
        with self.assertRaises(g.Error):
            graph.set_args(2, self.k, a2)  # no node 2
        with self.assertRaises(g.RangeError):
            graph.set_args(-1, self.k, a2)
        with self.assertRaises(TypeError):
            graph.set_args(0, "k", a2)
        with self.assertRaises(g.Error):
            graph.set_args(0, self.k, self.k.args())  # unset
        graph.launch(s)
        self.assertEqual(self.params(), before)  # refusals changed nothing
        graph.close()
        with self.assertRaises(g.Error):
            graph.launch(s)
        with self.assertRaises(g.Error):
            graph.kernel_count
        self.assertEqual(live("exec"), execs)

    def test_graph_with_a_pdl_pair(self):
        """A PDL launch after a kernel is captured with a programmatic edge (edge data: the old
        cuGraphGetEdges refuses such a graph with LOSSY_QUERY, issue 55); the graph is made,
        updated and replayed with the edge and the PDL launch kept."""
        s = self.ctx.create_stream()
        a0, a1 = self.args([1, 2, 1.0, 2.0, 16, 32, 3, 4]), self.args([5, 6, 5.0, 6.0, 48, 64, 7, 8])
        with s.capture() as graph:
            self.k.launch(1, 32, a0, stream=s)
            self.k.launch(2, 64, a1, stream=s, pdl="unchecked")
        self.assertEqual(graph.kernel_count, 2)
        for r in range(3):
            a2 = self.args([9 + r, 10, 9.0, 10.0, 80, 96, 11, 12])
            graph.set_args(1, self.k, a2)
            graph.set_args(0, self.k, [r, 1, 1.0, 1.0, 16, 32, 3, 4])
            graph.launch(s)
            s.synchronize()
            self.assertEqual(FAKE.fakecuda_programmatic_edges(), 1)
            self.assertEqual((self.last().programmatic, self.params()), (1, a2.buffer()))
        graph.close()

    def test_graph_begin_end_and_refusals(self):
        s = self.ctx.create_stream()
        with self.assertRaises(g.Error):
            s.end_capture()  # never begun
        s.begin_capture()
        with self.assertRaises(g.Error):
            s.begin_capture()  # already capturing
        with self.assertRaises(g.Error):
            s.synchronize()  # the library refuses before the driver would break the capture
        self.k.launch(1, 32, self.args(), stream=s)
        graph = s.end_capture()
        self.assertEqual(graph.kernel_count, 1)
        s.begin_capture()
        with self.assertRaises(g.Error):
            s.end_capture()  # no kernel launched: no graph
        self.assertFalse(s.is_capturing)
        graphs = live("graph")
        with self.assertRaises(ZeroDivisionError):
            with s.capture():
                self.k.launch(1, 32, self.args(), stream=s)
                1 / 0  # the capture is ended and dropped, the exception goes on
        self.assertFalse(s.is_capturing)
        self.assertEqual(live("graph"), graphs)
        s.synchronize()  # usable again
        pending = s.capture()
        with self.assertRaises(g.Error):
            pending.launch(s)  # not captured yet

    def test_graph_inside_the_with_block(self):
        """docs/python.md: inside `with s.capture() as graph` the graph is being captured."""
        s = self.ctx.create_stream()
        n = FAKE.fakecuda_launch_count()
        with s.capture() as graph:
            self.k.launch(1, 32, self.args(), stream=s)
            self.assertEqual(FAKE.fakecuda_launch_count(), n)  # recorded, not run
            self.assertTrue(s.is_capturing)
            self.assertEqual(graph.kernels, ())
            for use in (lambda: graph.kernel_count, lambda: graph.launch(s), graph.close,
                        lambda: graph.set_args(0, self.k, self.args()), s.synchronize, s.begin_capture):
                with self.assertRaises(g.Error) as cm:
                    use()
                self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_ARGUMENT")
        self.assertEqual((graph.kernel_count, graph.kernels), (1, (self.k,)))
        with self.assertRaises(g.Error):
            graph.__enter__()  # entered once
        a = self.args()
        a[7] = 99
        graph.set_args(0, self.k, a)
        graph.launch(s)
        s.synchronize()
        self.assertEqual(self.params(), a.buffer())  # the replay saw the new arguments
        with self.assertRaises(g.Error):
            with s.capture() as empty:
                pass  # no kernel: refused as the block ends
        self.assertIn("closed", repr(empty))

    # --- buffers --------------------------------------------------------------------------------
    def host(self, buf, n=None):
        return C.string_at(buf.ptr, buf.size if n is None else n)

    def test_buffer_copies(self):
        mem = live("memory")
        b = self.ctx.alloc(256)
        self.assertEqual((b.size, b.dtype, b.shape, b.device, b.context), (256, "u8", (256,), 0, self.ctx))
        self.assertNotEqual(b.ptr, 0)
        self.assertEqual(live("memory"), mem + 1)
        data = bytes(range(256))
        b.upload(data)
        self.assertEqual(self.host(b), data)
        self.assertEqual(bytes(b.download()), data)
        self.assertEqual(bytes(b.download(offset=250)), data[250:])
        b.upload(b"\xff" * 4, offset=8)
        self.assertEqual(self.host(b)[6:14], bytes([6, 7, 255, 255, 255, 255, 12, 13]))
        out = bytearray(16)
        self.assertIs(b.download(out, offset=16), out)
        self.assertEqual(bytes(out), data[16:32])
        import array
        doubles = array.array("d", [0.0] * 4)  # len(dst) in bytes: 32, whatever the item type
        self.assertIs(b.download(doubles, offset=16), doubles)
        self.assertEqual(doubles.tobytes(), data[16:48])
        self.assertEqual(bytes(b.download(offset=256)), b"")  # offset == size: empty
        with self.assertRaises(g.RangeError):
            b.download(offset=257)
        mv = memoryview(bytearray(8))
        b.download(mv)
        self.assertEqual(bytes(mv), data[:8])
        arr = (C.c_uint32 * 4)()  # any writable C-contiguous buffer
        b.download(memoryview(arr))
        self.assertEqual(arr[0], struct.unpack("<I", data[:4])[0])
        s = self.ctx.create_stream()
        b.upload(memoryview(b"abcd"), offset=100, stream=s)
        b.fill(7, stream=s)
        c = self.ctx.alloc(512)
        c.fill(0)
        c.copy_from(b, stream=s)
        s.synchronize()
        self.assertEqual(self.host(c, 256), b"\x07" * 256)
        b.fill(9)
        c.copy_from(b)
        self.assertEqual(self.host(c, 257), b"\x09" * 256 + b"\x00")
        self.assertEqual(bytes(b.download(stream=ForeignStream(s.handle))), b"\x09" * 256)
        try:
            import numpy as np
        except ImportError:
            np = None
        if np is not None:
            x = np.arange(64, dtype=np.float32)
            b.upload(x)
            y = np.zeros(64, dtype=np.float32)
            b.download(y)
            self.assertTrue((x == y).all())
            with self.assertRaises(TypeError):
                b.download(np.zeros((8, 8), dtype=np.float32)[:, ::2])  # not contiguous
        # refusals change nothing
        snapshot = self.host(b)
        with self.assertRaises(g.RangeError):
            b.upload(b"x" * 257)
        with self.assertRaises(g.RangeError):
            b.upload(b"x", offset=256)
        with self.assertRaises(g.RangeError):
            b.upload(b"x", offset=-1)
        with self.assertRaises(g.RangeError):
            b.download(bytearray(2), offset=255)
        with self.assertRaises(g.RangeError):
            b.fill(256)
        with self.assertRaises(g.RangeError):
            b.copy_from(c)  # 512 bytes into 256
        with self.assertRaises(TypeError):
            b.upload("text")
        with self.assertRaises(TypeError):
            b.download(b"read-only")
        with self.assertRaises(TypeError):
            b.copy_from(b"bytes")
        with self.assertRaises(TypeError):
            b.fill(1, stream=1.5)
        with self.assertRaises(g.RangeError):
            self.ctx.alloc(-1)
        self.assertEqual(self.host(b), snapshot)
        b.close()
        self.assertTrue(b.closed)
        b.close()  # twice is fine
        for call in (lambda: b.upload(b"x"), b.download, lambda: b.fill(0), lambda: b.view("f32"),
                     lambda: b.__dlpack__(), lambda: b.__cuda_array_interface__):
            with self.assertRaises(g.Error):
                call()
        with self.ctx.alloc(64) as d:
            pass
        self.assertTrue(d.closed)
        del c
        gc.collect()
        self.assertEqual(live("memory"), mem)

    def test_buffer_views_and_interfaces(self):
        b = self.ctx.alloc(1024)
        cai = b.__cuda_array_interface__
        self.assertEqual(cai, {"shape": (1024,), "typestr": "|u1", "data": (b.ptr, False),
                               "version": 3, "strides": None, "stream": None})
        v = b.view("f32", (16, 16))
        self.assertEqual((v.dtype, v.shape, v.ptr, v.size), ("f32", (16, 16), b.ptr, 1024))
        self.assertEqual(v.__cuda_array_interface__["typestr"], "<f4")
        self.assertEqual(b.view("float64").shape, (128,))
        self.assertEqual(b.view("bf16", 3).shape, (3,))
        self.assertEqual(b.__dlpack_device__(), (2, 0))
        with self.assertRaises(g.Error):
            b.view("f32", (16, 17))  # 1088 bytes
        with self.assertRaises(g.Error):
            b.view("complex64")
        with self.assertRaises(TypeError):
            b.view(4)
        with self.assertRaises(g.RangeError):
            b.view("u8", (-1,))
        # DLPack: versioned and legacy capsules describing the memory
        cap = v.__dlpack__(max_version=(1, 0))
        self.assertEqual(_capsule_name(cap), b"dltensor_versioned")
        m = T.DLManagedTensorVersioned.from_address(_capsule_ptr(cap, b"dltensor_versioned"))
        t = m.dl_tensor
        self.assertEqual((t.data, t.ndim, t.shape[0], t.shape[1], t.byte_offset), (b.ptr, 2, 16, 16, 0))
        self.assertEqual((t.dtype.code, t.dtype.bits, t.device.device_type), (T.KDLFLOAT, 32, T.KDLCUDA))
        self.assertEqual((m.version.major, bool(t.strides)), (1, False))
        legacy = b.__dlpack__()
        self.assertEqual(_capsule_name(legacy), b"dltensor")
        lt = T.DLManagedTensor.from_address(_capsule_ptr(legacy, b"dltensor")).dl_tensor
        self.assertEqual((lt.data, lt.ndim, lt.shape[0], lt.dtype.code, lt.dtype.bits), (b.ptr, 1, 1024, T.KDLUINT, 8))
        with self.assertRaises(BufferError):
            b.__dlpack__(copy=True)
        with self.assertRaises(BufferError):
            b.__dlpack__(dl_device=(1, 0))
        b.__dlpack__(dl_device=(2, 0), stream=-1)  # the stream is accepted (nothing pending)
        # close is refused while exports and views live; unconsumed capsules delete on collection
        with self.assertRaises(g.Error) as cm:
            b.close()
        # what holds it, by kind: the two unconsumed capsules and the view
        self.assertIn("2 DLPack exports (tensors made by __dlpack__", str(cm.exception))
        self.assertIn("0 Args holding it", str(cm.exception))
        self.assertIn("1 view (Buffer.view;", str(cm.exception))
        del cap, legacy, v, t, lt, m
        gc.collect()
        b.close()
        self.assertTrue(b.closed)

    def test_tensor_from_a_buffer_launched_as_a_value_keeps_nothing(self):
        # issue 50 item 5: a tensor made from a Buffer (a consumer holding its DLPack export, as
        # torch.from_dlpack does) launched as a plain value; after the call and the last user
        # reference, nothing the user cannot see holds it: Buffer.close() succeeds. Before, the
        # kernel's buffer for launches of values took the tensor and kept it until the next
        # launch, so close() was refused ("1 views or DLPack exports ... are still alive").
        mem = live("memory")
        p = T.Producer()
        b = self.ctx.alloc(4096)
        t = T.FakeTensor(p, b.ptr, shape=(1024,))  # f32, like the kernel's f32* parameters
        t.export = b.__dlpack__(max_version=(1, 0))  # the consumer holds the Buffer's export
        with self.assertRaises(g.Error) as cm:
            b.close()
        self.assertIn("1 DLPack export (", str(cm.exception))
        self.k.launch(1, 32, [1, 2, 1.0, 2.0, t, t, 3, 4])
        buf = self.params()
        self.assertEqual(struct.unpack_from("<Q", buf, self.k.layout.field("p0").offset)[0], b.ptr)
        self.assertEqual(p.deleted, p.exported)  # each tensor taken for the launch was released
        with self.assertRaises(g.Error):  # a read-only tensor into a non-const pointer: refused
            self.k.launch(1, 32, [1, 2, 1.0, 2.0, t, T.FakeTensor(p, b.ptr, shape=(1024,),
                                                                  read_only=True), 3, 4])
        del t, cm
        gc.collect()
        b.close()
        self.assertEqual(live("memory"), mem)
        self.assertEqual(p.deleted, p.exported)

    def gated(self, entry, call):
        """call() on another thread, held inside the fake driver's entry point (fakecuda_gate).
        True when this thread ran meanwhile: the extension released the GIL around the call.
        With the GIL held there this thread could not run until the gate's 10 s had passed and
        the call had returned, so the answer is False then: a regression fails, never hangs."""
        import threading
        import time
        name = entry.encode()
        self.assertEqual(FAKE.fakecuda_gate(name), 0)
        before, done, errors = FAKE.fakecuda_calls(name), [], []

        def run():
            try:
                done.append(call())
            except Exception as e:  # noqa: BLE001 -- reported below
                errors.append(e)
        th = threading.Thread(target=run, daemon=True)
        th.start()
        deadline = time.monotonic() + 30
        while FAKE.fakecuda_calls(name) == before and time.monotonic() < deadline:
            time.sleep(0.001)
        ran = th.is_alive() and not done and not errors  # here, while the call waits there
        extra = self.while_gated() if ran and hasattr(self, "while_gated") else None
        timed_out = FAKE.fakecuda_gate_open()  # > 0: the call waited out the 10 s, GIL held
        th.join(30)
        FAKE.fakecuda_gate(None)
        ran = ran and timed_out == 0
        self.assertFalse(errors, f"{entry}: {errors}")
        self.assertFalse(th.is_alive(), f"{entry}: the call did not return")
        return ran, extra

    def test_gil_released_around_waits_and_loads(self):
        # docs/api.md "Threads": synchronize, event waits and timing, module loads release the
        # GIL; another thread runs while each is inside the driver (issue 50).
        s = self.ctx.create_stream()
        start, stop = s.record(), s.record()
        image = open(T.kernel("launchcfg.sm_90.cubin"), "rb").read()
        for entry, call in (("cuCtxSynchronize", self.ctx.synchronize),
                            ("cuStreamSynchronize", s.synchronize),
                            ("cuEventSynchronize", stop.synchronize),
                            ("cuEventSynchronize", lambda: stop - start),
                            ("cuLibraryLoadData", lambda: self.ctx.load(image)),
                            ("cuLibraryLoadData", lambda: self.ctx.compile(
                                'extern "C" __global__ void k(int *p) { *p = 1; }'))):
            with self.subTest(entry=entry):
                ran, _ = self.gated(entry, call)
                self.assertTrue(ran, f"{entry}: no other thread ran while the call was inside")

    def test_stream_close_refused_while_another_thread_synchronizes(self):
        s = self.ctx.create_stream()

        def close_and_capture():
            with self.assertRaises(g.Error) as cm:
                s.close()
            with self.assertRaises(g.Error) as cm2:
                s.begin_capture()
            return str(cm.exception), str(cm2.exception)
        self.while_gated = close_and_capture
        try:
            ran, msgs = self.gated("cuStreamSynchronize", s.synchronize)
        finally:
            del self.while_gated
        self.assertTrue(ran)
        self.assertIn("close: 1 other thread is waiting in synchronize() on this Stream", msgs[0])
        self.assertIn("another thread is waiting in synchronize()", msgs[1])
        s.close()  # once it returned
        self.assertTrue(s.closed)

    def test_buffer_as_pointer_argument(self):
        mem = live("memory")
        b = self.ctx.alloc(4096)
        ptr = b.ptr
        values = [1, 2, 1.0, 2.0, b, b.view("f32"), 3, 4]
        self.k.launch(1, 32, values)
        lay = self.k.layout
        buf = self.params()
        self.assertEqual(struct.unpack_from("<Q", buf, lay.field("p0").offset)[0], ptr)
        self.assertEqual(struct.unpack_from("<Q", buf, lay.field("p1").offset)[0], ptr)
        for _ in range(3):  # relaunching on the same buffers takes nothing more of them
            self.k.launch(1, 32, values)
        with self.assertRaises(g.Error) as cm:
            b.close()
        # the view in `values`; the launches of values do not pin b (their fields take its address)
        self.assertIn("0 DLPack exports", str(cm.exception))
        self.assertIn("0 Args holding it", str(cm.exception))
        self.assertIn("1 view (Buffer.view;", str(cm.exception))
        a = self.k.args()
        a["p0"] = b
        with self.assertRaises(g.Error) as cm:
            b.close()
        self.assertIn("1 Args holding it as a pointer argument", str(cm.exception))
        del values, b
        gc.collect()
        self.assertEqual(live("memory"), mem + 1)  # the Args keep it alive
        a["p0"] = 0
        gc.collect()
        self.assertEqual(live("memory"), mem)
        d = self.ctx.alloc(256)
        self.k.launch(1, 32, [1, 2, 1.0, 2.0, d, d, 3, 4])
        d.close()  # nothing holds it after a launch of values
        self.assertEqual(live("memory"), mem)
        with self.assertRaises(g.Error):
            self.k.launch(1, 32, [1, 2, 1.0, 2.0, d, d, 3, 4])  # closed
        c = self.ctx.alloc(64)
        with self.assertRaises(g.Error) as cm:
            a["p0"] = c.view("i64")  # a typed view is checked against the pointer's type
        self.assertEqual(cm.exception.status, "GCL_ERROR_TENSOR")
        with self.assertRaises(TypeError):
            a["n"] = c  # a buffer is no integer
        c.close()
        with self.assertRaises(g.Error):
            a["p0"] = c  # closed

    # --- occupancy, attributes --------------------------------------------------------------------
    def test_occupancy_and_persistent_config(self):
        k = self.k
        per_sm = k.occupancy(256)
        self.assertGreater(per_sm, 0)
        self.assertEqual(k.occupancy((16, 16)), per_sm)  # a block tuple: its threads
        self.assertEqual(k.max_cooperative_grid(256), per_sm * 132)
        with_smem = k.occupancy(256, shared=100 * 1024)
        self.assertLessEqual(with_smem, per_sm)
        cfg = k.persistent_config(256, shared=1024)
        self.assertEqual(cfg, {"grid": (k.occupancy(256, 1024) * 132, 1, 1), "block": (256, 1, 1),
                               "shared": 1024})
        k.launch(args=self.args(), **cfg)
        rec = self.last()
        self.assertEqual((rec.grid[0], rec.block[0], rec.shared_bytes), (cfg["grid"][0], 256, 1024))
        self.assertEqual(k.active_clusters(2, 128), 132 * k.occupancy(128) // 2)
        self.assertEqual(k.active_clusters((2, 1, 1), (128,), shared=0), 132 * k.occupancy(128) // 2)
        with self.assertRaises(g.Error) as cm:
            k.occupancy(0)
        self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_CONFIG")
        for bad in (lambda: k.occupancy(-1), lambda: k.occupancy(256, shared=-1),
                    lambda: k.occupancy(2**40), lambda: k.max_cooperative_grid(256, 2**70),
                    lambda: k.persistent_config(-256), lambda: k.active_clusters(-2, 128)):
            with self.assertRaises(g.RangeError):
                bad()
        for bad in (lambda: k.occupancy("256"), lambda: k.occupancy(1.5), lambda: k.occupancy(256, 1.0),
                    lambda: k.occupancy((1, 2, 3, 4)), lambda: k.persistent_config()):
            with self.assertRaises(TypeError):
                bad()

    def test_attributes(self):
        k = self.k
        attrs = k.attributes
        self.assertEqual(sorted(attrs), sorted([
            "max_threads_per_block", "static_shared_bytes", "registers", "max_dynamic_shared_bytes",
            "local_bytes", "preferred_carveout", "cluster_scheduling_policy",
            "nonportable_cluster_size_allowed"]))
        self.assertEqual(k.attribute("registers"), attrs["registers"])
        k.set_attribute("max_dynamic_shared_bytes", 64 * 1024)
        self.assertEqual(k.attribute("max_dynamic_shared_bytes"), 64 * 1024)
        k.set_attribute(name="preferred_carveout", value=50)
        before = k.attributes
        with self.assertRaises(g.Error) as cm:
            k.set_attribute("registers", 32)  # read-only
        self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_ARGUMENT")
        with self.assertRaises(g.Error) as cm:
            k.set_attribute("preferred_carveout", 101)
        self.assertIn("100", str(cm.exception))  # the range
        with self.assertRaises(g.Error):
            k.attribute("no_such_attribute")
        with self.assertRaises(g.RangeError):
            k.set_attribute("max_dynamic_shared_bytes", 2**40)
        with self.assertRaises(TypeError):
            k.set_attribute("max_dynamic_shared_bytes", "big")
        with self.assertRaises(TypeError):
            k.attribute(3)
        self.assertEqual(k.attributes, before)
        k.set_attribute("max_dynamic_shared_bytes", 0)

    # --- launch keywords ----------------------------------------------------------------------
    def test_launch_pdl_and_priority(self):
        a = self.args()
        n = FAKE.fakecuda_launch_count()
        with self.assertRaises(g.Error) as cm:  # bench_args8's code never waits (its SASS says so)
            self.k.launch(1, 32, a, pdl=True)
        self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_CONFIG")
        self.assertIn("bench_args8", str(cm.exception))
        self.assertEqual(FAKE.fakecuda_launch_count(), n)
        self.k.launch(1, 32, a, pdl="unchecked", priority=-2)
        rec = self.last()
        self.assertEqual((rec.programmatic, rec.priority), (1, -2))
        with self.assertRaises(TypeError):
            self.k.launch(1, 32, a, pdl="yes")
        img = T.kernel("pdl.check.sm_90.cubin")
        info = next(k for k in g.inspect(img) if k["name"] == "pdl_waits")
        T.declare(FAKE, "pdl_waits", [(p["offset"], p["size"]) for p in info["params"]])
        waits = self.ctx.load(img).kernel("pdl_waits", "const i32* src, i32* dst, i32 n")
        waits.launch(1, 32, [0x1000, 0x2000, 32], pdl=True)  # it waits: launched
        self.assertEqual((self.last().kernel, self.last().programmatic), (b"pdl_waits", 1))
        self.k.launch(1, 32, a)
        rec = self.last()
        self.assertEqual((rec.programmatic, rec.priority), (0, 0))
        n = FAKE.fakecuda_launch_count()
        with self.assertRaises(g.RangeError):
            self.k.launch(1, 32, a, priority=2**40)
        with self.assertRaises(TypeError):
            self.k.launch(1, 32, a, priority="high")
        self.assertEqual(FAKE.fakecuda_launch_count(), n)

    def test_hot_paths_do_not_leak(self):
        s = self.ctx.create_stream()
        b = self.ctx.alloc(4096)
        a = self.args()
        refs = (sys.getrefcount(s), sys.getrefcount(b), sys.getrefcount(a))
        for i in range(5000):
            self.k.launch(1, 32, a, stream=s, pdl="unchecked")
            self.k.launch(1, 32, [1, 2, 3.0, 4.0, b, b, 5, i], stream=s)
        gc.collect()
        self.k.launch(1, 32, VALUES8)
        self.assertEqual((sys.getrefcount(s), sys.getrefcount(b), sys.getrefcount(a)), refs)


class Index:
    """An int-like object of another library (NumPy's integers): it has __index__."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


class ArgumentFormsTest(unittest.TestCase):
    """Every call that takes an argument of a kind (dims, shared memory, stream) takes the same
    forms and refuses the same values with the same exception and words (python/ext/argkinds.c):
    the message after "<call>: " is the same for every call."""

    @classmethod
    def setUpClass(cls):
        RuntimeTest.setUpClass.__func__(cls)
        cls.a = RuntimeTest.args(cls)

    def dims_calls(self):
        """(call name, argument name, fn(value)) for every argument that takes dims."""
        k, a = self.k, self.a
        return [("launch", "grid", lambda d: k.launch(d, 32, a)),
                ("launch", "block", lambda d: k.launch(1, d, a)),
                ("launch", "cluster", lambda d: k.launch(2, 32, a, cluster=d)),
                ("occupancy", "block", lambda d: k.occupancy(d)),
                ("max_cooperative_grid", "block", lambda d: k.max_cooperative_grid(d)),
                ("persistent_config", "block", lambda d: k.persistent_config(d)),
                ("active_clusters", "cluster", lambda d: k.active_clusters(d, 64)),
                ("active_clusters", "block", lambda d: k.active_clusters(1, d))]

    def refusal(self, fn, value, call, what):
        """The refusal of value as (exception type, message without the call's and the
        argument's names)."""
        try:
            fn(value)
        except (TypeError, ValueError, g.Error) as e:
            msg = str(e)
            self.assertTrue(msg.startswith(call + ": "), msg)
            return type(e), msg[len(call) + 2:].replace(what, "ARG")
        self.fail(f"{call} {what}={value!r} was accepted")

    def test_dims_take_the_same_forms_everywhere(self):
        ok = [2, (2,), [2], (2, 1), [2, 1, 1], (2, 1, 1), Index(2), (Index(2), 1)]
        for call, what, fn in self.dims_calls():
            for d in ok:
                with self.subTest(call=call, arg=what, value=d):
                    fn(d)
        rec = T.last_launch(FAKE)  # the last launch: grid 2, cluster (2, 1, 1)
        self.assertEqual((list(rec.grid), list(rec.block)), ([2, 1, 1], [32, 1, 1]))

    def test_dims_refuse_the_same_values_with_the_same_words(self):
        bad = [((), TypeError), ((1, 2, 3, 4), TypeError), ([], TypeError), (1.5, TypeError),
               ("2", TypeError), (True, TypeError), ((2, 1.0), TypeError), ({2: 1}, TypeError),
               (None if False else (2, None), TypeError), (-1, g.RangeError),
               (2**32, g.RangeError), ((1, -1), g.RangeError), ([1, 1, 2**64], g.RangeError)]
        n = FAKE.fakecuda_launch_count()
        for value, err in bad:
            seen = set()
            for call, what, fn in self.dims_calls():
                with self.subTest(call=call, arg=what, value=value):
                    kind, words = self.refusal(fn, value, call, what)
                    self.assertIs(kind, err)
                    seen.add((kind, words))
            self.assertEqual(len(seen), 1, f"{value!r} refused in different words: {seen}")
        self.assertEqual(FAKE.fakecuda_launch_count(), n)  # nothing was launched
        with self.assertRaises(TypeError) as cm:
            self.k.occupancy((1, 2, 3, 4))
        self.assertEqual(str(cm.exception), "occupancy: block takes an int or a tuple or list of 1 "
                         "to 3 ints, got 4 ints")
        with self.assertRaises(g.RangeError) as cm:
            self.k.launch((1, -1), 32, self.a)
        self.assertEqual(str(cm.exception), "launch: grid[1] = -1 is out of range (0 ... 4294967295)")

    def test_shared_takes_the_same_forms_everywhere(self):
        k, a = self.k, self.a
        calls = [("launch", lambda v: k.launch(1, 32, a, shared=v)),
                 ("occupancy", lambda v: k.occupancy(32, shared=v)),
                 ("max_cooperative_grid", lambda v: k.max_cooperative_grid(32, shared=v)),
                 ("persistent_config", lambda v: k.persistent_config(32, shared=v)),
                 ("active_clusters", lambda v: k.active_clusters(1, 32, shared=v))]
        for call, fn in calls:
            for v in (0, 1024, Index(16)):
                fn(v)
        for value, err in ((-1, g.RangeError), (2**32, g.RangeError), (1.0, TypeError),
                           ("0", TypeError), (False, TypeError)):
            seen = {self.refusal(fn, value, call, "shared") for call, fn in calls}
            self.assertEqual(len(seen), 1, seen)
            self.assertIs(seen.pop()[0], err)

    def stream_calls(self):
        """(call name, fn(stream)) for every call that takes a stream."""
        k, a, ctx = self.k, self.a, self.ctx
        buf = ctx.alloc(64)
        ev = ctx.create_event()
        own = ctx.create_stream()
        with own.capture() as graph:
            k.launch(1, 32, a, stream=own)
        return [("launch", lambda s: k.launch(1, 32, a, stream=s)),
                ("record", lambda s: ev.record(s)),
                ("launch", lambda s: graph.launch(s)),
                ("upload", lambda s: buf.upload(b"x" * 8, stream=s)),
                ("download", lambda s: buf.download(bytearray(8), stream=s)),
                ("copy_from", lambda s: buf.copy_from(buf, stream=s)),
                ("fill", lambda s: buf.fill(0, stream=s)),
                ("wait", lambda s: own.wait(s)),
                ("from_handle", lambda s: g.Stream.from_handle(s))]

    def test_streams_take_the_same_forms_everywhere(self):
        s = self.ctx.create_stream()
        forms = [s, s.handle, ForeignStream(s.handle), type("TorchOld", (), {"cuda_stream": s.handle})(),
                 0, 1, 2]
        for call, fn in self.stream_calls():
            for v in forms:
                with self.subTest(call=call, stream=v):
                    fn(v)
        s.synchronize()

    def test_streams_refuse_the_same_values_with_the_same_words(self):
        closed = self.ctx.create_stream()
        closed.close()
        bad = [("s", TypeError), (1.5, TypeError), (True, TypeError), (-1, g.RangeError),
               (2**64, g.RangeError), (3, g.Error), (4095, g.Error), (closed, g.Error),
               (type("S", (), {"__cuda_stream__": lambda self: 5})(), TypeError),
               (ForeignStream(-1), g.RangeError)]
        for value, err in bad:
            seen = set()
            for call, fn in self.stream_calls():
                with self.subTest(call=call, stream=value):
                    kind, words = self.refusal(fn, value, call, "stream")
                    self.assertIs(kind, err)
                    seen.add((kind, words.replace("None, ", "")))  # None: the default stream where taken
            self.assertEqual(len(seen), 1, f"{value!r} refused in different words: {seen}")

    def test_stream_types_are_looked_up_once(self):
        """A stream type with both __cuda_stream__ and an int cuda_stream (torch's) is read through
        the attribute once the two agreed (no Python call per launch); one where they disagree
        through the protocol; a handle checked on the kernel's last launch is not asked of the
        driver again."""
        s = self.ctx.create_stream()
        seen = []

        class Both:
            cuda_stream = s.handle

            def __cuda_stream__(self):
                seen.append(1)
                return (0, s.handle)

        class Disagree(Both):
            cuda_stream = 12345 * 4096

        for _ in range(5):
            self.k.launch(1, 32, self.a, stream=Both())
        self.assertEqual(len(seen), 1)  # the first of the type, to compare
        self.assertEqual(T.last_launch(FAKE).stream, s.handle)
        self.k.launch(1, 32, self.a, stream=Disagree())
        self.assertEqual(T.last_launch(FAKE).stream, s.handle)  # the protocol's handle
        k2 = self.mod.kernel("bench_args8", ARGS8)
        a2 = k2.args()
        for i, v in enumerate(VALUES8):
            a2[i] = v
        before = calls("cuStreamGetCtx")
        for _ in range(4):
            k2.launch(1, 32, a2, stream=s.handle)
        self.assertEqual(calls("cuStreamGetCtx") - before, 1)
        s.synchronize()

    def test_every_stream_object_is_asked_at_every_launch(self):
        """The handle of a stream object of a type not known to keep one handle is asked of it at
        every launch: a new object at a freed one's address gives its own handle, and the object
        is not kept alive."""
        s, t = self.ctx.create_stream(), self.ctx.create_stream()
        asked = []

        class Counted:
            def __init__(self, h):
                self.h = h

            def __cuda_stream__(self):
                asked.append(self.h)
                return (0, self.h)

        a = self.a
        f = Counted(s.handle)
        for _ in range(4):
            self.k.launch(1, 32, a, stream=f)
        self.assertEqual((len(asked), T.last_launch(FAKE).stream), (4, s.handle))
        gone = []
        w = ForeignStream(s.handle)
        w.deleted = gone
        self.k.launch(1, 32, a, stream=w)
        del w
        self.assertEqual(gone, [True])  # not kept alive
        del f
        for h in (t.handle, s.handle, t.handle, s.handle):  # new objects, maybe at a freed one's address
            self.k.launch(1, 32, a, stream=Counted(h))
            self.assertEqual(T.last_launch(FAKE).stream, h)
        s.synchronize()
        t.synchronize()

    def test_the_c_launch_loop_of_the_benchmark(self):
        """Kernel._launch_loop_c (bench_python's C reference): n launches, args[index] = i before
        each, on the stream given; refused arguments raise before any launch."""
        s = self.ctx.create_stream()
        n = FAKE.fakecuda_launch_count()
        self.k._launch_loop_c(self.a, 7, 5, stream=s.handle)
        self.assertEqual(FAKE.fakecuda_launch_count(), n + 5)
        last = T.last_launch(FAKE)
        self.assertEqual((last.stream, self.a[7]), (s.handle, 4))
        self.assertEqual(bytes(last.params[:self.k.layout.size]), self.a.buffer())
        with self.assertRaises(TypeError):
            self.k._launch_loop_c([1, 2], 7, 5)
        with self.assertRaises(g.Error):  # index 8 of 8 parameters: gcl_args_set_i32's refusal
            self.k._launch_loop_c(self.a, 8, 1)
        self.assertEqual(FAKE.fakecuda_launch_count(), n + 5)
        s.synchronize()

    def test_a_fixed_handle_stream_object_is_asked_once_while_it_lives(self):
        """torch's and CuPy's stream objects keep one handle for their life: the last one given is
        remembered through a weak reference and not asked again. It is not kept alive, a new object
        (at a freed one's address or not) is asked, and a subclass (which may compute its handle)
        is asked at every launch. The type here takes torch's names, which is what the library
        goes by."""
        s, t = self.ctx.create_stream(), self.ctx.create_stream()
        asked, gone = [], []
        Stream = torch_named_stream("Stream", asked, gone)
        a = self.a
        f = Stream(s.handle)
        refs = sys.getrefcount(f)
        for _ in range(4):
            self.k.launch(1, 32, a, stream=f)
            self.assertEqual(T.last_launch(FAKE).stream, s.handle)
        self.assertGreaterEqual(len(asked), 1)
        first = len(asked)  # the type's first object may be asked twice (how it keeps its handle)
        for _ in range(4):
            self.k.launch(1, 32, a, stream=f)
        self.assertEqual(len(asked), first)  # remembered: not asked again
        self.assertEqual(sys.getrefcount(f), refs)  # and not held
        o = Stream(t.handle)
        self.k.launch(1, 32, a, stream=o)
        self.assertEqual((asked[-1], T.last_launch(FAKE).stream), (t.handle, t.handle))
        del f, o
        self.assertEqual(sorted(gone), sorted([s.handle, t.handle]))  # collected with their owner
        with self.assertRaises(TypeError):  # the dead reference's None matches nothing
            g.Stream.from_handle(None)
        self.k.launch(1, 32, a, stream=None)
        self.assertIsNone(T.last_launch(FAKE).stream)  # the default stream, not the dead one's
        for i in range(40):  # new objects, many at a freed one's address: each asked, its own handle
            h = (s.handle, t.handle)[i % 2]
            before = len(asked)
            self.k.launch(1, 32, a, stream=Stream(h))
            self.assertEqual((len(asked) - before, T.last_launch(FAKE).stream), (1, h))

        z = torch_named_stream("ExternalStream", asked, slots=True)(s.handle)  # no weak references
        self.k.launch(1, 32, a, stream=z)
        before = len(asked)
        for _ in range(3):
            self.k.launch(1, 32, a, stream=z)
            self.assertEqual(T.last_launch(FAKE).stream, s.handle)
        self.assertEqual(len(asked) - before, 3)

        class Sub(Stream):
            pass

        u = Sub(t.handle)
        before = len(asked)
        for _ in range(3):
            self.k.launch(1, 32, a, stream=u)
        self.assertGreaterEqual(len(asked) - before, 3)  # a subclass: asked at every launch
        s.synchronize()
        t.synchronize()


if __name__ == "__main__":
    T.main()
