"""NVSHMEM from Python on one GPU (one PE): the runner's NVSHMEM wheel (site-packages/nvidia/nvshmem)
and tests/gpu/nvshmem_put.cu device-linked with its libnvshmem_device.a by nvcc at test time.

A PE started from a unique id; a symmetric Buffer viewed by torch through DLPack (torch's writes
land in it); the kernel of an unattached module refused by name before the driver; attached, a
cooperative launch in which every thread puts 3 i + 1 into element i of the symmetric buffer on
PE 0 (itself) and thread 0 joins nvshmem_barrier_all, verified through torch and a download; the
barrier on a stream; peer tensor maps over its own buffer equal to the driver's encode of the same
tensor (the oracle: the ordinary TensorMap setter), re-pointed, and read by a kernel through one
(kernels/megakernel.cu's TMA copy from maps[0] to a torch tensor); then detach, close, stop.

Two PEs (TwoPETest, one spawned process each, PE r on GPU r % GPUs, the unique id carried by a
queue): each reads every PE's tile through its peer maps, picked by run-time index, compared byte
for byte on every PE. With one GPU both processes share it (time-sliced, NVSHMEM's "limited MPG"
without MPS) and the test says so; the kernel needs no other PE's kernel running at the same time
(docs/multigpu.md says what that mode cannot do).

Skipped (77, saying why) without torch, a device, the wheel or nvcc; a failure under
GCL_REQUIRE_GPU=1. NVLink multicast stays off (NVSHMEM_DISABLE_NVLS=1)."""
import array
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import gcltest as T

os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
os.environ.setdefault("NVSHMEM_REMOTE_TRANSPORT", "none")
import gclaunch as g  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SOURCE = os.path.join(T.SOURCE, "tests", "gpu", "nvshmem_put.cu")
N = 1024  # 8 blocks of 128 threads, one int each


def wheel():
    """The NVSHMEM wheel's folder (site-packages/nvidia/nvshmem) of this interpreter, or None."""
    try:
        import nvidia.nvshmem as m
    except ImportError:
        return None
    for p in m.__path__:
        if all(os.path.isfile(os.path.join(p, f)) for f in
               ("lib/libnvshmem_host.so.3", "lib/libnvshmem_device.a", "include/nvshmem.h")):
            return p
    return None


def build(out):
    """nvshmem_put.cu device-linked by scripts/nvshmem_device.sh (the one build of NVSHMEM device
    code) with the NVSHMEM this interpreter's wheel holds; -> (cubin, the host library beside)."""
    cubin = os.path.join(out, "k.cubin")
    env = dict(os.environ, GCL_PYTHON=sys.executable)
    r = subprocess.run(["sh", os.path.join(T.SOURCE, "scripts", "nvshmem_device.sh"),
                        os.path.join(T.build_dir(), "tools", "gclaunch"), SOURCE, cubin],
                       env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"scripts/nvshmem_device.sh exited {r.returncode}: {r.stdout}{r.stderr}")
    return cubin, r.stdout.strip().split("=", 1)[1]


class OnePETest(unittest.TestCase):
    def setUp(self):
        need = (lambda why: T.skip_unless_required(self, "GCL_REQUIRE_GPU", why))
        if torch is None:
            need("torch is not installed")
        if not torch.cuda.is_available():
            need("torch sees no CUDA device")
        self.nv = wheel()
        if self.nv is None:
            need("no NVSHMEM wheel in this python (pip install nvidia-nvshmem-cu13)")
        nvcc = shutil.which("nvcc") or os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"),
                                                    "bin", "nvcc")
        if not os.access(nvcc, os.X_OK):
            need("no nvcc to build the NVSHMEM kernel")
        if not os.path.isfile(SOURCE):
            need(f"{SOURCE} is not here")
        self.ctx = g.Context(torch.cuda.current_device())
        self.tmp = tempfile.mkdtemp(prefix="gcl-pe-")
        os.environ["GCL_NVSHMEM_ARCH"] = str(self.ctx.sm)
        self.cubin, self.host = build(self.tmp)
        # gclaunch opens the wheel it found by import (GCL_NVSHMEM_PATH unset): the same library

    def tearDown(self):
        shutil.rmtree(getattr(self, "tmp", ""), ignore_errors=True)
        if g.pe_context() is not None:
            import gc
            gc.collect()
            g.pe_stop()

    def test_sizes_NVSHMEM_would_die_of_are_refused_and_1_MiB_works_after(self):
        # NVSHMEM 3.4.5 ends the process (exit 255) for these on an 80 GB card: each must be a
        # named refusal, and the PE must go on working
        self.ctx.pe_start(None, 0, 1)
        for n in (1 << 40, (1 << 63) - 1):
            with self.assertRaises(g.Error) as cm:
                self.ctx.symmetric_alloc(n)
            self.assertEqual(cm.exception.status, "GCL_ERROR_OUT_OF_MEMORY", str(cm.exception))
            self.assertIn(f"bytes {n} ", str(cm.exception))
            print(f"symmetric_alloc({n}) refused: {cm.exception}")
        buf = self.ctx.symmetric_alloc(1 << 20)
        buf.upload(b"\x5a" * (1 << 20))
        self.assertEqual(bytes(buf.download()), b"\x5a" * (1 << 20))
        g.pe_barrier()
        self.ctx.synchronize()
        buf.close()
        g.pe_stop()

    def test_one_PE_puts_to_itself_and_maps_its_own_buffer(self):
        info = g.nvshmem_info()
        self.assertTrue(info["found"], info["error"])
        if not os.environ.get("GCL_NVSHMEM_PATH"):  # the package's own hand-over of the wheel
            self.assertEqual(os.path.realpath(info["path"]), os.path.realpath(self.host))
        print(f"NVSHMEM {info['version']} at {info['path']}; kernel sm_{self.ctx.sm}")
        self.ctx.pe_start(g.pe_unique_id(), 0, 1)  # rank 0 of 1, from a unique id
        self.assertEqual((g.pe_id(), g.pe_count()), (0, 1))
        mod = self.ctx.load(self.cubin)
        self.assertTrue(mod.uses_nvshmem)
        k = mod.kernel("put_ring", "i32* dst, i32* info, i32 shift")
        dst, pe = self.ctx.symmetric_alloc(N * 4), self.ctx.alloc(8)
        self.assertTrue(dst.symmetric)
        self.assertEqual(dst.peer_address(0), dst.ptr)
        t = torch.from_dlpack(dst.view("i32"))
        self.assertEqual((t.data_ptr(), t.numel(), t.device.type), (dst.ptr, N, "cuda"))
        t.fill_(-1)
        torch.cuda.synchronize()
        self.assertEqual(bytes(dst.download()), b"\xff" * (N * 4), "torch wrote the buffer")
        pe.fill(0xff)
        # the unattached module's kernel: refused by name, before the driver
        with self.assertRaises(g.Error) as cm:
            k.launch(8, 128, [dst, pe, 0], cooperative=True)
        self.assertEqual(cm.exception.status, "GCL_ERROR_NOT_ATTACHED", str(cm.exception))
        self.assertIn("put_ring", str(cm.exception))
        self.assertEqual(t[0].item(), -1, "nothing ran")
        mod.attach()
        self.assertGreaterEqual(k.max_cooperative_grid(128), 8)
        k.launch(8, 128, [dst, pe, 0], cooperative=True)
        self.ctx.synchronize()
        want = torch.arange(N, device="cuda", dtype=torch.int32) * 3 + 1
        self.assertTrue(torch.equal(t, want), f"got {t[:8].tolist()} ...")
        self.assertEqual(list(memoryview(pe.download()).cast("i")), [0, 1], "(pe, n_pes)")
        s = self.ctx.create_stream()
        g.pe_barrier(s)
        g.pe_barrier()
        s.synchronize()
        self.peer_maps(dst, t)
        self.peer_map_read()
        del t
        mod.detach()
        with self.assertRaises(g.Error) as cm:
            k.launch(8, 128, [dst, pe, 0], cooperative=True)
        self.assertEqual(cm.exception.status, "GCL_ERROR_NOT_ATTACHED")
        del k, mod
        dst.close()
        pe.close()
        g.pe_stop()
        self.assertIsNone(g.pe_context())

    def peer_maps(self, dst, t):
        """Maps over PE 0's copy (its own): byte for byte the driver's encode of the same tensor."""
        lay = g.Layout("grid_constant tensormap[2] peers", 90)
        a, ref = g.Args(lay), g.Args(lay)
        grid = t.view(32, 32)
        a.set_peer_tensormaps("peers", g.TensorMap(dst.view("i32", (32, 32)), (16, 16)), [0, 0])
        ref["peers"] = [g.TensorMap(grid, (16, 16))] * 2
        self.assertEqual(a.buffer(), ref.buffer())
        other = self.ctx.symmetric_alloc(N * 4)
        u = torch.from_dlpack(other.view("i32", (32, 32)))
        a.repoint("peers", [other.peer_address(0)] * 2)
        ref["peers"] = [g.TensorMap(u, (16, 16))] * 2
        self.assertEqual(a.buffer(), ref.buffer())
        del a, ref, u
        import gc
        gc.collect()
        other.close()

    def peer_map_read(self):
        """A kernel reads through a peer map: kernels/megakernel.cu's megakernel_copy_16 (TMA
        copies between maps picked by run-time index) copies PE 0's copy of a symmetric tile,
        maps[0] set by set_peer_tensormaps, into a torch tensor through maps[1]."""
        k = self.ctx.load(T.kernel("megakernel.fatbin")).kernel(
            "megakernel_copy_16", "grid_constant tensormap[16] maps, const void* work, u32 n_work")
        tile = self.ctx.symmetric_alloc(32 * 64 * 4)
        src = torch.from_dlpack(tile.view("f32", (32, 64)))
        src.copy_(torch.randn(32, 64, device="cuda"))
        out = torch.zeros(32, 64, device="cuda")
        a = k.args()
        a["maps"] = [g.TensorMap(out, (32, 64), store=True)] * 16
        a.set_peer_tensormaps("maps", g.TensorMap(tile.view("f32", (32, 64)), (32, 64)), [0])
        # WorkItem {src map, dst map, rank, bytes, sc[3], dc[3]}
        a["work"] = torch.tensor([[0, 1, 2, 32 * 64 * 4, 0, 0, 0, 0, 0, 0]], dtype=torch.int32,
                                 device="cuda")
        a["n_work"] = 1
        torch.cuda.synchronize()
        k.launch(1, 32, a)
        self.ctx.synchronize()
        self.assertTrue(torch.equal(out, src), "the tile read through PE 0's peer map")
        del a, src
        import gc
        gc.collect()
        tile.close()


MAPS16 = "grid_constant tensormap[16] maps, const void* work, u32 n_work"


def pe_main(rank, n, ids, results, nv, gpus=None):
    """One PE of n (a spawned process on GPU rank): its tile holds rank * 10000 + i; through peer
    maps[p] over every PE's copy, kernels/megakernel.cu's megakernel_copy_16 copies each PE's tile
    into outs[p] (maps[n + p]); every byte is compared. Puts (rank, None or what went wrong)."""
    try:
        os.environ.setdefault("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "lo")  # the wheel: found by import
        ctx = g.Context(rank % (gpus or n))
        if rank == 0:
            uid = g.pe_unique_id()
            for _ in range(n - 1):
                ids.put(uid)  # any channel carries the 128 bytes
        else:
            uid = ids.get(timeout=120)
        ctx.pe_start(uid, rank, n)
        tile = ctx.symmetric_alloc(32 * 64 * 4)
        tile.upload(array.array("f", [rank * 10000 + i for i in range(32 * 64)]))
        outs = [ctx.alloc(32 * 64 * 4) for _ in range(n)]
        k = ctx.load(T.kernel("megakernel.fatbin")).kernel("megakernel_copy_16", MAPS16)
        a = k.args()
        stores = [g.TensorMap(o.view("f32", (32, 64)), (32, 64), store=True) for o in outs]
        a["maps"] = (stores * 16)[:16]
        a.set_peer_tensormaps("maps", g.TensorMap(tile.view("f32", (32, 64)), (32, 64)), range(n))
        for p in range(n):
            a["maps[%d]" % (n + p)] = stores[p]
        work = ctx.alloc(n * 40)
        work.upload(array.array("i", [v for p in range(n) for v in (p, n + p, 2, 32 * 64 * 4) + (0,) * 6]))
        a["work"], a["n_work"] = work, n
        g.pe_barrier()  # every PE's tile written
        k.launch(n, 32, a)
        ctx.synchronize()
        bad = [p for p in range(n) if array.array("f", bytes(outs[p].download())).tolist()
               != [float(p * 10000 + i) for i in range(32 * 64)]]
        g.pe_barrier()  # nobody frees what a peer may still read
        ctx.synchronize()
        del a
        tile.close()  # collective
        g.pe_stop()
        results.put((rank, f"tiles of PEs {bad} differ" if bad else None))
    except BaseException as e:  # noqa: B902 -- reported to the parent
        results.put((rank, f"{type(e).__name__}: {e}"))


class TwoPETest(unittest.TestCase):
    def test_two_PEs_read_each_others_tiles_through_peer_maps(self):
        why = None
        if torch is None or not torch.cuda.is_available():
            why = "torch sees no CUDA device"
        elif wheel() is None:
            why = "no NVSHMEM wheel in this python"
        if why:
            T.skip_unless_required(self, "GCL_REQUIRE_GPU", why)
        n, gpus = 2, min(torch.cuda.device_count(), 2)
        mode = (f"{n} PEs on {gpus} GPUs" if gpus >= n else
                f"{n} PEs on 1 GPU ({n} processes share GPU 0, time-sliced)")
        print(f"TwoPETest: {mode}", file=sys.stderr)
        results = spawn_pes(n, gpus, pe_main, (wheel(),))
        self.assertEqual(results, {r: None for r in range(n)}, mode)
        print(f"TwoPETest: every PE's tiles verified: {mode}", file=sys.stderr)


def spawn_pes(n, gpus, main, args, timeout=240):
    """Runs main(rank, n, ids, results, *args, gpus) in n spawned processes (rank 0 puts the unique
    id on ids once per other rank); returns {rank: None or what went wrong}. A PE that does not
    answer within timeout is named so and the rest are ended."""
    mp = multiprocessing.get_context("spawn")
    ids, results = mp.Queue(), mp.Queue()
    procs = [mp.Process(target=main, args=(r, n, ids, results, *args, gpus)) for r in range(n)]
    for p in procs:
        p.start()
    got = {}
    try:
        for _ in range(n):
            rank, err = results.get(timeout=timeout)
            got[rank] = err
    except Exception:  # noqa: BLE001 -- queue.Empty: name the silent ones
        for r in range(n):
            got.setdefault(r, f"no answer within {timeout} s")
    finally:
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.terminate()
    return got


if __name__ == "__main__":
    T.main()
