"""gclaunch on a GPU with torch: the two reported problems in Python.

- byte_offset (cutlass #3450): torch views at storage offsets into pointers (packed address ==
  data_ptr(), the kernel writes exactly the view) and into tensor maps (a TMA copy of the view);
  a view the kernel's align(16) cannot take is refused with the C message, nothing changed.
- a megakernel with an array of tensor maps as ONE grid-constant parameter, indexed at run time:
  16 maps from torch views (as a parameter and as a struct member), relaunched after refresh /
  repoint on new buffers.
- a Triton-compiled cubin launched by gclaunch with Triton's result.
Skipped without torch, CUDA or a device (GCL_REQUIRE_GPU=1 makes that a failure).
"""
import os
import sys
import unittest

import gcltest as T
import gclaunch as g

try:
    import torch
except ImportError:
    torch = None

MAPS16 = "grid_constant tensormap[16] maps, const void* work, u32 n_work"
GLOBALS16 = "grid_constant struct{tensormap[16] maps, const void* work, u32 n_work} g"


def gpu_or_skip(case):
    if torch is None:
        T.skip_unless_required(case, "GCL_REQUIRE_GPU", "torch is not installed")
    if not torch.cuda.is_available():
        T.skip_unless_required(case, "GCL_REQUIRE_GPU", "torch sees no CUDA device")
    try:
        return g.Context(torch.cuda.current_device())
    except g.Error as e:
        T.skip_unless_required(case, "GCL_REQUIRE_GPU", f"gclaunch.Context: {e.status}: {e}")


class GpuTest(unittest.TestCase):
    def setUp(self):
        self.ctx = gpu_or_skip(self)
        if self.ctx.sm < 90:
            self.skipTest("TMA needs sm_90 or later")
        self.stream = torch.cuda.current_stream()

    def test_byte_offset_views_into_pointers(self):
        k = self.ctx.load(T.kernel("dlpack_fill.fatbin")).kernel(
            "fill", "f32* align(16) out, u64 n, f32 base")
        storage = torch.full((256,), -1.0, device="cuda")
        view = storage[4:4 + 100]  # storage offset 16 bytes
        a = k.args()
        a["out"], a["n"], a["base"] = view, view.numel(), 10.0
        k.launch(1, 128, a, stream=self.stream)
        torch.cuda.synchronize()
        expect = torch.full((256,), -1.0, device="cuda")
        expect[4:104] = 10.0 + torch.arange(100, device="cuda", dtype=torch.float32)
        self.assertTrue(torch.equal(storage, expect))
        before = a.buffer()
        with self.assertRaises(g.Error) as cm:
            a["out"] = storage[1:]  # 4 bytes past a 16-byte boundary
        self.assertEqual(cm.exception.status, "GCL_ERROR_TENSOR")
        self.assertIn("16", str(cm.exception))
        self.assertEqual(a.buffer(), before)
        k4 = self.ctx.load(T.kernel("dlpack_fill.fatbin")).kernel("fill", "f32* align(4) out, u64 n, f32 base")
        k4.launch(1, 128, [storage[1:9], 8, 0.0], stream=self.stream)  # values converted per launch
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(storage[1:9].cpu(), torch.arange(8, dtype=torch.float32)))
        with self.assertRaises(g.Error):
            a["out"] = torch.zeros(4, dtype=torch.int32, device="cuda")  # dtype

    def work(self, items):
        """WorkItem {src, dst, rank, bytes, sc[3], dc[3]} rows as an int32 CUDA tensor."""
        rows = [[s, d, 2, b, 0, 0, 0, 0, 0, 0] for s, d, b in items]
        return torch.tensor(rows, dtype=torch.int32, device="cuda")

    def megakernel_copy(self, name, sig, key):
        k = self.ctx.load(T.kernel("megakernel.fatbin")).kernel(name, sig)
        big = torch.randn(8 * 32 + 1, 68, device="cuda")  # rows of 272 bytes
        srcs = [big[1 + 32 * i: 33 + 32 * i, 4:68] for i in range(8)]  # storage offsets != 0
        self.assertTrue(all(s.storage_offset() > 0 for s in srcs))
        out = torch.zeros(8, 32, 64, device="cuda")
        maps = [g.TensorMap(s, (32, 64)) for s in srcs] + [g.TensorMap(out[i], (32, 64), store=True) for i in range(8)]
        work = self.work([(i, 8 + i, 32 * 64 * 4) for i in range(8)])
        prefix = key[:-len("maps")]
        a = k.args()
        a[key] = maps
        a[prefix + "work"], a[prefix + "n_work"] = work, 8
        k.launch(8, 32, a, stream=self.stream)
        torch.cuda.synchronize()
        for i in range(8):
            self.assertTrue(torch.equal(out[i], srcs[i]), f"tile {i}")
        # relaunch on new buffers: refresh (re-points maps whose description is unchanged)
        big2 = torch.randn_like(big)
        srcs2 = [big2[1 + 32 * i: 33 + 32 * i, 4:68] for i in range(8)]
        a.refresh(key, [g.TensorMap(s, (32, 64)) for s in srcs2] + maps[8:])
        k.launch(8, 32, a, stream=self.stream)
        torch.cuda.synchronize()
        self.assertTrue(all(torch.equal(out[i], srcs2[i]) for i in range(8)))
        # repoint the destinations to another output of the same shape
        out2 = torch.zeros_like(out)
        a.repoint(key + "[8]", [out2[i] for i in range(8)])
        k.launch(8, 32, a, stream=self.stream)
        torch.cuda.synchronize()
        self.assertTrue(all(torch.equal(out2[i], srcs2[i]) for i in range(8)))
        # repoint from host arrays of addresses: a torch int64 CPU tensor, an array.array('Q')
        import array
        for form in (lambda x: torch.tensor(x, dtype=torch.int64), lambda x: array.array("Q", x)):
            out3 = torch.zeros_like(out)
            a.repoint(key + "[8]", form([out3[i].data_ptr() for i in range(8)]))
            k.launch(8, 32, a, stream=self.stream)
            torch.cuda.synchronize()
            self.assertTrue(all(torch.equal(out3[i], srcs2[i]) for i in range(8)))

    def graph_repoint(self, name, sig, key):
        """Captured once, then replayed over two copies in turn, sources and destinations
        re-pointed the documented way (docs/graphs.md): Args.repoint, Graph.set_args,
        Graph.launch. Every replay's output is checked against the sources it was pointed at."""
        k = self.ctx.load(T.kernel("megakernel.fatbin")).kernel(name, sig)
        bigs = [torch.randn(8 * 32 + 1, 68, device="cuda") for _ in range(2)]
        srcs = [[b[1 + 32 * i: 33 + 32 * i, 4:68] for i in range(8)] for b in bigs]
        outs = [torch.zeros(8, 32, 64, device="cuda") for _ in range(2)]
        a = k.args()
        a[key] = [g.TensorMap(t, (32, 64)) for t in srcs[0]] + \
            [g.TensorMap(outs[0][i], (32, 64), store=True) for i in range(8)]
        prefix = key[:-len("maps")]
        a[prefix + "work"] = self.work([(i, 8 + i, 32 * 64 * 4) for i in range(8)])
        a[prefix + "n_work"] = 8
        s = self.ctx.create_stream()
        torch.cuda.synchronize()
        with s.capture() as graph:
            k.launch(8, 32, a, stream=s)
        for r in range(12):
            c = (r + 1) % 2
            a.repoint(key + "[0]", srcs[c] + [outs[c][i] for i in range(8)])
            graph.set_args(0, k, a)
            outs[c].zero_()
            torch.cuda.synchronize()
            graph.launch(s)
            s.synchronize()
            for i in range(8):
                self.assertTrue(torch.equal(outs[c][i], srcs[c][i]), f"replay {r}, tile {i}")

    def test_graph_replays_repointed_parameter_maps(self):
        self.graph_repoint("megakernel_copy_16", MAPS16, "maps")

    def test_graph_replays_repointed_struct_maps(self):
        self.graph_repoint("megakernel_globals_16", GLOBALS16, "g.maps")

    def test_megakernel_tensormap_array(self):
        self.megakernel_copy("megakernel_copy_16", MAPS16, "maps")

    def test_megakernel_globals_struct(self):
        self.megakernel_copy("megakernel_globals_16", GLOBALS16, "g.maps")

    def test_torch_stream_and_byte_offset_map(self):
        k = self.ctx.load(T.kernel("megakernel.fatbin")).kernel("megakernel_copy_16", MAPS16)
        flat = torch.randn(64 * 64 + 16, device="cuda")
        src = flat[16:].view(64, 64)  # a view at storage offset 64 bytes
        dst = torch.zeros(64, 64, device="cuda")
        a = k.args()
        a["maps"] = [g.TensorMap(src, (32, 64)), g.TensorMap(dst, (32, 64), store=True)] * 8
        a["work"] = self.work([(0, 1, 32 * 64 * 4)])
        a["n_work"] = 1
        torch.cuda.synchronize()  # the work list was copied on the default stream
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            k.launch(1, 32, a, stream=s)  # __cuda_stream__ of a torch stream
        s.synchronize()
        self.assertTrue(torch.equal(dst[:32], src[:32]))

    def test_im2col_map_from_torch(self):
        # An im2col map made in Python (im2col=(pixels, channels), corners W, H: a 3x3 filter with
        # padding 1) from a torch view at a storage offset; kernels/im2col.cu issues one
        # cp.async.bulk.tensor.4d ... .im2col load per job. Pixel i of a load at (c, w, h, n) with
        # im2col offsets (ow, oh) is image n's pixel (w + i + ow, h + oh), channels c ... c + 31,
        # zero outside the tensor; the jobs stay inside one row of the bounding box.
        import random
        import struct
        n_img, h_img, w_img, c_img, pixels, channels, smem = 2, 9, 14, 64, 8, 32, 16384
        seed = random.randrange(1 << 31)
        rng = random.Random(seed)
        k = self.ctx.load(T.kernel("im2col.fatbin")).kernel(
            "im2col_load_4d", "grid_constant tensormap map, const void* jobs, u8* out")
        storage = torch.rand(16 + n_img * h_img * w_img * c_img, device="cuda") + 0.5
        x = storage[16:].view(n_img, h_img, w_img, c_img)  # N, H, W, C at storage offset 64 bytes
        tm = g.TensorMap(x, im2col=(pixels, channels), lower=(-1, -1), upper=(-1, -1))
        d = tm.describe()
        self.assertEqual(d["box_bytes"], pixels * channels * 4)
        self.assertEqual(d["address"], x.data_ptr())
        fixed = [(0, 0, 0, 0, 0, 0), (0, -1, 0, 0, 0, 0), (32, 2, 3, 1, 1, 2), (0, 4, 7, 1, 2, 2),
                 (48, 0, 0, 0, 0, 0), (16, -1, -1, 1, 1, 1)]
        jobs = fixed + [(16 * rng.randrange(4), rng.randrange(6) - 1, rng.randrange(9) - 1,
                         rng.randrange(n_img), rng.randrange(3), rng.randrange(3)) for _ in range(18)]
        packed = b"".join(struct.pack("<4i2HI", *j, d["box_bytes"]) for j in jobs)  # Im2colJob
        jobs_dev = torch.frombuffer(bytearray(packed), dtype=torch.uint8).cuda()
        out = torch.full((len(jobs), smem), 0xA5, dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
        k.launch(len(jobs), 128, [tm, jobs_dev, out], stream=self.stream)
        self.stream.synchronize()
        img, got = x.cpu(), out.cpu()
        for j, (c, w, h, n, ow, oh) in enumerate(jobs):
            want = torch.zeros(pixels, channels)
            for i in range(pixels):
                ww, hh, have = w + i + ow, h + oh, max(0, min(channels, c_img - c))
                if 0 <= ww < w_img and 0 <= hh < h_img:
                    want[i, :have] = img[n, hh, ww, c:c + have]
            loaded = got[j, :d["box_bytes"]].view(torch.float32).view(pixels, channels)
            self.assertTrue(torch.equal(loaded, want), f"job {j} {jobs[j]}, seed {seed}")
            self.assertTrue(bool((got[j, d["box_bytes"]:d["box_bytes"] + 64] == 0xA5).all()),
                            f"job {j}: bytes past the box were written")

    def test_triton_cubin(self):
        try:
            import triton
            import triton.language as tl
        except ImportError:
            self.skipTest("triton is not installed")

        @triton.jit
        def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = i < n
            tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) + tl.load(y_ptr + i, mask=m), mask=m)

        n = 1000
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        ref = torch.empty_like(x)
        compiled = add[(triton.cdiv(n, 256),)](x, y, ref, n, BLOCK=256)
        cubin = compiled.asm["cubin"]
        name = compiled.metadata.name
        params = next(k for k in g.inspect(cubin) if k["name"] == name)["params"]
        # x, y, out (pointers), n (i32), then Triton's own scratch pointers (0: none used)
        sizes = [p["size"] for p in params]
        self.assertEqual(sizes[:4], [8, 8, 8, 4])
        sig = ", ".join(["ptr x", "ptr y", "ptr out", "i32 n"] + [f"ptr s{i}" for i in range(len(sizes) - 4)])
        k = self.ctx.load(cubin).kernel(name, sig)
        out = torch.zeros_like(x)
        k.launch(triton.cdiv(n, 256), 32 * compiled.metadata.num_warps, [x, y, out, n] + [0] * (len(sizes) - 4),
                 shared=compiled.metadata.shared, stream=torch.cuda.current_stream())
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(out, ref))


FILL = "f32* out, u64 n, f32 base"


class RuntimeGpuTest(unittest.TestCase):
    """The runtime on the device (issue 32): streams of torch, CuPy and cuda.core wrapped and
    launched on, events timing them, a graph replayed with new Args, Buffer round trips (bytes,
    DLPack into torch, a kernel writing a Buffer), persistent_config, attributes, pdl= and
    priority=. Random data from torch.manual_seed(GCL_SEED, default printed)."""

    def setUp(self):
        self.ctx = gpu_or_skip(self)
        self.seed = int(os.environ.get("GCL_SEED", "1234"))
        torch.manual_seed(self.seed)
        self.k = self.ctx.load(T.kernel("dlpack_fill.fatbin")).kernel("fill", FILL)

    def expect(self, n, base):
        return base + torch.arange(n, device="cuda", dtype=torch.float32)

    def check_stream(self, peer, name):
        out = torch.zeros(1000, device="cuda")
        torch.cuda.synchronize()
        s = g.Stream.from_handle(peer, self.ctx)
        start = s.record()
        self.k.launch(8, 128, [out, out.numel(), 1.0], stream=peer)  # the peer's object itself
        self.k.launch(8, 128, [out[500:], 500, 7.0], stream=s)       # and the wrapper
        stop = s.record()
        s.synchronize()
        ms = stop - start
        self.assertGreaterEqual(ms, 0.0, name)
        self.assertLess(ms, 10_000.0, name)
        ref = self.expect(1000, 1.0)
        ref[500:] = self.expect(500, 7.0)
        self.assertTrue(torch.equal(out, ref), name)

    def test_launches_of_values_written_directly(self):
        """Launches of values: from the second launch on, plain values go straight into the
        kernel's buffer (values.c); every launch writes what its values say."""
        outs = [torch.zeros(1000, device="cuda") for _ in range(2)]
        buf = self.ctx.alloc(4000)
        for i in range(6):
            out, n, base = outs[i & 1], 100 + 150 * i, float(i) - 2.5
            self.k.launch(8, 128, [out.data_ptr(), n, base])
            torch.cuda.synchronize()
            self.assertTrue(torch.equal(out[:n], self.expect(n, base)), f"launch {i}")
            self.k.launch(8, 128, [buf, 1000, base + 1])  # a Buffer, then ints again
        torch.cuda.synchronize()
        got = torch.frombuffer(buf.download(), dtype=torch.float32).cuda()
        self.assertTrue(torch.equal(got, self.expect(1000, 3.5)))

    def test_streams_of_torch_cupy_cuda_core(self):
        self.check_stream(torch.cuda.Stream(), "torch stream")
        self.check_stream(torch.cuda.current_stream(), "torch current stream")
        ran = 2
        try:
            import cupy as cp
            self.check_stream(cp.cuda.Stream(non_blocking=True), "cupy stream")
            ran += 1
        except ImportError:
            print("cupy not installed: its stream not tried")
        try:
            try:
                from cuda.core import Device
            except ImportError:
                from cuda.core.experimental import Device
            dev = Device(self.ctx.device)
            dev.set_current()
            self.check_stream(dev.create_stream(), "cuda.core stream")
            ran += 1
        except ImportError:
            print("cuda.core not installed: its stream not tried")
        s = self.ctx.create_stream(priority=-1)
        self.assertEqual(s.priority, -1)
        t = torch.cuda.ExternalStream(s.handle)  # ours, used by torch
        out = torch.zeros(64, device="cuda")
        torch.cuda.synchronize()
        self.k.launch(1, 64, [out, 64, 0.0], stream=s, priority=-1)
        with torch.cuda.stream(t):
            out2 = out * 2  # ordered after the launch on the same stream
        t.synchronize()
        self.assertTrue(torch.equal(out2, 2 * self.expect(64, 0.0)))
        with self.assertRaises(g.Error) as cm:
            self.ctx.create_stream(priority=1)
        self.assertIn("(lowest)", str(cm.exception))
        print(f"streams tried: {ran}")

    def test_pdl_pair_on_a_stream(self):
        mod = self.ctx.load(T.kernel("pdl.fatbin"))
        producer = mod.kernel("pdl_producer", "i32* out, i32 n")
        waits = mod.kernel("pdl_waits", "const i32* src, i32* dst, i32 n")
        n = 1 << 20
        src = torch.zeros(n, dtype=torch.int32, device="cuda")
        dst = torch.zeros(n, dtype=torch.int32, device="cuda")
        torch.cuda.synchronize()
        s = self.ctx.create_stream()
        producer.launch(n // 256, 256, [src, n], stream=s)
        waits.launch(n // 256, 256, [src, dst, n], stream=s, pdl=True)  # starts early, waits
        s.synchronize()
        self.assertTrue(torch.equal(dst, torch.arange(1, n + 1, dtype=torch.int32, device="cuda")))
        with self.assertRaises(g.Error) as cm:
            mod.kernel("pdl_nowait", "const i32* src, i32* dst, i32 n").launch(
                1, 32, [src, dst, 32], stream=s, pdl=True)
        self.assertEqual(cm.exception.status, "GCL_ERROR_INVALID_CONFIG")

    def test_pdl_pair_captured_and_replayed_with_new_args(self):
        """Issue 55: a PDL pair captured through gclaunch (its programmatic edge carries data:
        capture end asks cuGraphGetEdges_v2 with room for it), replayed over two buffer pairs,
        the args updated with set_args before each replay."""
        if self.ctx.sm < 90:
            self.skipTest("PDL needs sm_90")
        mod = self.ctx.load(T.kernel("pdl.fatbin"))
        producer = mod.kernel("pdl_producer", "i32* out, i32 n")
        waits = mod.kernel("pdl_waits", "const i32* src, i32* dst, i32 n")
        n = 1 << 20
        srcs = [torch.zeros(n, dtype=torch.int32, device="cuda") for _ in range(2)]
        dsts = [torch.zeros(n, dtype=torch.int32, device="cuda") for _ in range(2)]
        torch.cuda.synchronize()
        s = self.ctx.create_stream()
        with s.capture() as graph:
            producer.launch(n // 256, 256, [srcs[0], n], stream=s)
            waits.launch(n // 256, 256, [srcs[0], dsts[0], n], stream=s, pdl=True)
        self.assertEqual(graph.kernel_count, 2)
        want = torch.arange(1, n + 1, dtype=torch.int32, device="cuda")
        for r in range(6):
            src, dst = srcs[r % 2], dsts[r % 2]
            src.fill_(-1), dst.fill_(-1)
            torch.cuda.synchronize()
            graph.set_args(0, producer, [src, n])
            graph.set_args(1, waits, [src, dst, n])
            graph.launch(s)
            s.synchronize()
            self.assertTrue(torch.equal(dst, want), f"replay {r}")

    def test_graph_replayed_with_new_args(self):
        s = self.ctx.create_stream()
        a_out, b_out = torch.zeros(4096, device="cuda"), torch.zeros(4096, device="cuda")
        c_out = torch.zeros(256, device="cuda")
        torch.cuda.synchronize()
        a = self.k.args()
        a["out"], a["n"], a["base"] = a_out, 4096, 0.5
        c = self.k.args()
        c["out"], c["n"], c["base"] = c_out, 256, -3.0
        with s.capture() as graph:
            self.k.launch(16, 256, a, stream=s)
            self.k.launch(1, 256, c, stream=s)
        self.assertEqual(graph.kernel_count, 2)
        self.assertTrue(torch.equal(a_out, torch.zeros_like(a_out)))  # captured, not run
        graph.launch(s)
        s.synchronize()
        self.assertTrue(torch.equal(a_out, self.expect(4096, 0.5)))
        self.assertTrue(torch.equal(c_out, self.expect(256, -3.0)))
        base = float(torch.randint(-100, 100, (1,)).item())
        b = self.k.args()
        b["out"], b["n"], b["base"] = b_out, 4096, base
        graph.set_args(0, self.k, b)
        del b  # the driver copied the values
        graph.launch(s)
        graph.set_args(1, self.k, [c_out, 128, 9.0])  # values
        graph.launch(s)
        s.synchronize()
        self.assertTrue(torch.equal(b_out, self.expect(4096, base)), f"seed {self.seed}")
        self.assertTrue(torch.equal(a_out, self.expect(4096, 0.5)))  # untouched by the new args
        ref = self.expect(256, -3.0)
        ref[:128] = self.expect(128, 9.0)
        self.assertTrue(torch.equal(c_out, ref))

    def test_buffer_round_trips(self):
        import numpy as np
        rng = np.random.default_rng(self.seed)
        n = 1 << 16
        host = rng.standard_normal(n).astype(np.float32)
        with self.ctx.alloc(host.nbytes) as buf:
            buf.upload(host)
            back = np.empty_like(host)
            buf.download(back)
            self.assertTrue((back == host).all(), f"seed {self.seed}")
            t = torch.from_dlpack(buf.view("f32", (256, 256)))  # shares the memory
            self.assertEqual((t.shape, t.dtype, t.data_ptr()), ((256, 256), torch.float32, buf.ptr))
            self.assertTrue(torch.equal(t.flatten().cpu(), torch.from_numpy(host)))
            self.k.launch(n // 256, 256, [buf, n, 2.0])  # a Buffer as the pointer argument
            self.ctx.synchronize()
            self.assertTrue(torch.equal(t.flatten(), self.expect(n, 2.0)))
            s = self.ctx.create_stream()
            other = self.ctx.alloc(host.nbytes)
            other.copy_from(buf, stream=s)
            buf.fill(0, stream=s)
            s.synchronize()
            self.assertTrue(torch.equal(torch.from_dlpack(other.view("f32")), self.expect(n, 2.0)))
            self.assertTrue(torch.equal(t, torch.zeros_like(t)))
            del t
            try:
                import cupy as cp
                v = cp.asarray(other.view("float32"))  # __cuda_array_interface__
                self.assertEqual(int(v.data.ptr), other.ptr)
                self.assertEqual(float(v[10]), 12.0)
                # cupy holds the view: the Buffer refuses to free memory under it
                with self.assertRaisesRegex(g.Error, r"1 view \(Buffer\.view"):
                    other.close()
                del v
            except ImportError:
                pass
            import gc
            gc.collect()
            other.close()

    def test_torch_tensor_of_a_buffer_launched_as_a_value(self):
        # issue 50 item 5, the reported steps: a Buffer exported to torch (and viewed by CuPy
        # when it is installed), the torch tensor launched as a plain value, every user
        # reference deleted and collected: close() then frees the memory. Before, the kernel's
        # buffer for launches of values kept the last tensor (and so the Buffer's export) alive,
        # and close() was refused ("1 views or DLPack exports ... are still alive").
        import gc
        n = 1 << 12
        buf = self.ctx.alloc(4 * n)
        t = torch.from_dlpack(buf.view("f32"))
        views = [t[1:]]
        try:
            import cupy as cp
            views.append(cp.from_dlpack(t))
        except ImportError:
            pass
        self.k.launch(n // 256, 256, [t, n, 3.0])
        self.ctx.synchronize()
        self.assertTrue(torch.equal(t, self.expect(n, 3.0)))
        with self.assertRaisesRegex(g.Error, r"1 DLPack export \(tensors made by __dlpack__"):
            buf.close()  # torch's tensor (and its views) hold the export: said by name
        del t, views
        gc.collect()
        buf.close()
        self.assertTrue(buf.closed)

    SPIN = (
        'extern "C" __global__ void spin(unsigned long long ns) {\n'
        '  unsigned long long t0, t;\n'
        '  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));\n'
        '  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);\n'
        '}\n')

    def ticks_inside(self, call):
        """call() on this thread while another Python thread counts loop turns; the turns made
        in the middle half of the call's duration (ticks, and the duration in seconds). That
        half lies wholly inside the extension's C call, so with the GIL held there it holds no
        turn at all."""
        import threading
        import time
        stamps, stop = [], threading.Event()

        def tick():  # a turn every 0.2 ms at most: each needs the GIL
            while not stop.is_set():
                stamps.append(time.monotonic())
                time.sleep(0.0002)
        th = threading.Thread(target=tick, daemon=True)
        th.start()
        while not stamps:
            time.sleep(0.001)
        t0 = time.monotonic()
        call()
        t1 = time.monotonic()
        stop.set()
        th.join(10)
        lo, hi = t0 + (t1 - t0) / 4, t1 - (t1 - t0) / 4
        return sum(lo < x < hi for x in stamps), t1 - t0

    def test_other_threads_run_during_waits_loads_and_compiles(self):
        import time
        # issue 50, docs/python.md "Threads": synchronize, event waits and timing, module load
        # and compile release the GIL. Each wait is on a kernel spinning 0.5 s on the GPU.
        spin = self.ctx.compile(self.SPIN, "spin.cu").kernel("spin", "u64 ns")
        s = self.ctx.create_stream()
        half = 500_000_000
        # PTX the driver JIT-compiles: 2000 kernels, with a comment no earlier run had, so that
        # the driver's compute cache cannot answer it
        image = (".version 8.0\n.target sm_90\n.address_size 64\n// %d\n" % time.time_ns() + "".join(
            f".visible .entry j{i}(.param .u64 p) {{ .reg .b64 %rd<3>; .reg .f32 %f<2>;\n"
            f" ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1; mov.f32 %f1, {i}.0;\n"
            f" st.global.f32 [%rd2+{4 * (i % 64)}], %f1; ret; }}\n" for i in range(2000))).encode()
        big = "".join(f'extern "C" __global__ void k{i}(float *p) {{ p[{i}] = {i}.0f; }}\n'
                      for i in range(300))

        def spun(wait):
            def call():
                start = s.record()
                spin.launch(1, 1, [half], stream=s)
                stop = s.record()
                wait(start, stop)
            return call
        cases = [("Context.synchronize", spun(lambda a, b: self.ctx.synchronize())),
                 ("Stream.synchronize", spun(lambda a, b: s.synchronize())),
                 ("Event.synchronize", spun(lambda a, b: b.synchronize())),
                 ("stop - start", spun(lambda a, b: b - a)),
                 ("Context.load", lambda: self.ctx.load(image)),
                 ("Context.compile", lambda: self.ctx.compile(big, "big.cu"))]
        for name, call in cases:
            with self.subTest(call=name):
                ticks, seconds = self.ticks_inside(call)
                print(f"  {name}: {seconds * 1000:.1f} ms, {ticks} turns of another thread "
                      "in its middle half", file=sys.stderr)
                self.assertGreater(ticks, 0, f"{name}: no other thread ran during it")

    def test_persistent_config_and_attributes(self):
        info = g.device_info(self.ctx.device)
        self.assertEqual(info.sm, self.ctx.sm)
        self.assertGreaterEqual(g.device_count(), 1)
        cfg = self.k.persistent_config(128)
        per_sm = self.k.occupancy(128)
        self.assertEqual(cfg["grid"], (per_sm * info.multiprocessors, 1, 1))
        self.assertEqual(self.k.max_cooperative_grid(128), cfg["grid"][0])
        n = cfg["grid"][0] * 128
        out = torch.zeros(n, device="cuda")
        torch.cuda.synchronize()
        self.k.launch(args=[out, n, 1.0], stream=torch.cuda.current_stream(), **cfg)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(out, self.expect(n, 1.0)))
        attrs = self.k.attributes
        self.assertGreater(attrs["max_threads_per_block"], 0)
        limit = info.max_shared_per_block_optin - attrs["static_shared_bytes"]
        self.k.set_attribute("max_dynamic_shared_bytes", limit)
        self.assertEqual(self.k.attribute("max_dynamic_shared_bytes"), limit)
        with self.assertRaises(g.Error):
            self.k.set_attribute("max_dynamic_shared_bytes", limit + 1)
        self.k.launch(1, 32, [out, 32, 0.0], shared=limit)  # the opted-in maximum
        torch.cuda.synchronize()


if __name__ == "__main__":
    T.main()
