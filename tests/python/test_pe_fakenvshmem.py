"""NVSHMEM from Python against tests/fakecuda (GCL_LIBCUDA) and tests/fakenvshmem
(GCL_NVSHMEM_PATH): the library found (nvshmem_info), unique ids, a PE started on a Context and
stopped, its queries and barrier, symmetric Buffers (DLPack, views, Args, peer addresses, close
and collection), Module.attach/detach/uses_nvshmem and the unattached-launch refusal, and peer
tensor maps (Args.set_peer_tensormaps) -- every lifecycle rule and refusal as Python sees it.

The fake keeps every PE's copy of a symmetric buffer in host memory, so one process can start as
rank 0 of several PEs and read each peer's copy with ctypes. One PE per process: every test stops
the PE it started (tearDown)."""
import ctypes as C
import gc
import os
import subprocess
import sys
import unittest

import gcltest as T

FAKE = T.fake_driver()  # sets GCL_LIBCUDA before gclaunch opens a driver
NVPATH = os.environ.get("GCL_NVSHMEM_PATH") or os.path.join(T.build_dir(), "tests", "fakenvshmem",
                                                            "libfakenvshmem.so")
os.environ["GCL_NVSHMEM_PATH"] = NVPATH
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
NV = C.CDLL(NVPATH)  # the instance gclaunch opens (same path: the loader hands back this one)
NV.fakenvshmem_set.argtypes = [C.c_char_p, C.c_char_p, C.c_char_p]
NV.fakenvshmem_calls.argtypes = [C.c_char_p]
FAKE.fakecuda_calls.argtypes = [C.c_char_p]
FAKE.fakecuda_calls.restype = C.c_long
import gclaunch as g  # noqa: E402

NVCUBIN = T.kernel("nvshmem_state.sm_90.cubin")  # kernels/nvshmem_state.cu: put_self(int *out)
PEERS = "grid_constant tensormap[4] peers, u32 n"


def nv_calls(name):
    return NV.fakenvshmem_calls(name.encode())


def set_fake(version=None, unreachable=None, fail=None):
    enc = (lambda v: None if v is None else v.encode())
    NV.fakenvshmem_set(enc(version), enc(unreachable), enc(fail))


class PETest(unittest.TestCase):
    def setUp(self):
        FAKE.fakecuda_set_devices(2)
        NV.fakenvshmem_reset()
        set_fake("3.4.5", "", "")
        T.declare(FAKE, "put_self", [(0, 8)])
        self.ctx = g.Context(0)

    def tearDown(self):
        for k in [k for k in vars(self) if k in ("args", "view", "tm", "buf")]:
            delattr(self, k)  # a failed test's leftovers, so the next one starts clean
        gc.collect()
        if g.pe_context() is not None:
            g.pe_stop()
        self.assertEqual(NV.fakenvshmem_initialized(), 0)

    def assertStatus(self, cm, status, *texts):
        self.assertEqual(cm.exception.status, status, str(cm.exception))
        for t in texts:
            self.assertIn(t, str(cm.exception))

    def start(self, count=1):
        uid = g.pe_unique_id()
        self.ctx.pe_start(uid, 0, count)
        return uid


class LibraryTest(PETest):
    def test_nvshmem_info_names_the_library_and_its_version(self):
        info = g.nvshmem_info()
        self.assertEqual(info, {"found": True, "path": NVPATH, "version": "3.4.5", "error": None})

    def test_the_NVSHMEM_statuses_are_named_constants(self):
        names = ["GCL_ERROR_NO_NVSHMEM", "GCL_ERROR_NVSHMEM", "GCL_ERROR_NVSHMEM_VERSION",
                 "GCL_ERROR_NOT_ATTACHED", "GCL_ERROR_PEER_UNREACHABLE"]
        self.assertEqual([getattr(g, n) for n in names], [22, 23, 24, 25, 26])
        self.assertEqual([g.status_name(c) for c in range(22, 27)], names)
        self.assertTrue(set(names) <= set(g.__all__))

    def run_child(self, env, code):
        env = dict(os.environ, **env)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    CHILD = ("import gclaunch as g\ni = g.nvshmem_info()\nprint(i['found'], i['version'])\n"
             "print(i['error'])\n"
             "for f in (g.pe_unique_id, lambda: g.Context(0).pe_start()):\n"
             "    try:\n        f()\n    except g.Error as e:\n        print(e.status)\n")

    def test_an_absent_library_is_GCL_ERROR_NO_NVSHMEM_naming_what_was_tried(self):
        out = self.run_child({"GCL_NVSHMEM_PATH": "/nonexistent/libnvshmem_host.so.3"}, self.CHILD)
        lines = out.splitlines()
        self.assertEqual(lines[0], "False None")
        self.assertIn("/nonexistent/libnvshmem_host.so.3", lines[1])
        self.assertEqual(lines[2:], ["GCL_ERROR_NO_NVSHMEM", "GCL_ERROR_NO_NVSHMEM"])

    def test_a_library_older_than_3_3_9_is_refused_with_both_versions(self):
        out = self.run_child({"FAKENVSHMEM_VERSION": "3.3.8"}, self.CHILD)
        lines = out.splitlines()
        self.assertEqual(lines[0], "False 3.3.8")
        self.assertIn("3.3.8", lines[1])
        self.assertIn("3.3.9", lines[1])
        self.assertEqual(lines[2:], ["GCL_ERROR_NO_NVSHMEM", "GCL_ERROR_NO_NVSHMEM"])


class WheelTest(PETest):
    """The package finds the pip wheel through Python's import system (nvidia.nvshmem) and hands
    its host library to the extension; GCL_NVSHMEM_PATH still wins."""

    def wheel(self):
        import tempfile
        root = tempfile.mkdtemp(prefix="gcl-wheel-")
        self.addCleanup(subprocess.run, ["rm", "-rf", root])
        lib = os.path.join(root, "nvidia", "nvshmem", "lib")
        os.makedirs(lib)
        open(os.path.join(root, "nvidia", "nvshmem", "__init__.py"), "w").close()
        os.symlink(os.path.realpath(NVPATH), os.path.join(lib, "libnvshmem_host.so.3"))
        return root, os.path.join(lib, "libnvshmem_host.so.3")

    def child(self, env, code):
        env = {k: v for k, v in dict(os.environ, **env).items() if v is not None}
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.splitlines()

    def test_the_wheel_found_by_import_is_opened(self):
        root, lib = self.wheel()
        path = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])
        env = dict(os.environ, PYTHONPATH=path)
        env.pop("GCL_NVSHMEM_PATH", None)
        out = self.child_env(env, "import gclaunch as g\ni = g.nvshmem_info()\n"
                                  "print(i['found'], i['path'], i['error'])\nprint(len(g.pe_unique_id()))")
        self.assertEqual(out, [f"True {lib} None", "128"])

    def test_GCL_NVSHMEM_PATH_wins_over_the_wheel(self):
        root, lib = self.wheel()
        path = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])
        out = self.child({"PYTHONPATH": path, "GCL_NVSHMEM_PATH": "/nonexistent/libnvshmem_host.so.3"},
                         "import gclaunch as g\ni = g.nvshmem_info()\nprint(i['found'], i['path'])")
        self.assertEqual(out, ["False (not found)"])

    def test_nvshmem_open_opens_a_given_library_once_per_process(self):
        env = dict(os.environ)
        env.pop("GCL_NVSHMEM_PATH", None)
        code = ("import gclaunch as g\n"
                "for p in ('/nonexistent/dir', %r, %r, '/usr/lib/other/libnvshmem_host.so.3'):\n"
                "    try:\n        g.nvshmem_open(p); print('ok')\n"
                "    except g.Error as e:\n        print(e.status, 'already open' in str(e))\n"
                "print(g.nvshmem_info()['path'])" % (NVPATH, NVPATH))
        out = self.child_env(env, code)
        self.assertEqual(out, ["GCL_ERROR_NO_NVSHMEM False", "ok", "ok", "GCL_ERROR_NVSHMEM True", NVPATH])

    def child_env(self, env, code):
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.splitlines()


class StartTest(PETest):
    def test_a_unique_id_is_128_bytes_and_starts_rank_0_of_2(self):
        uid = g.pe_unique_id()
        self.assertIsInstance(uid, bytes)
        self.assertEqual(len(uid), 128)
        self.ctx.pe_start(unique_id=bytearray(uid), rank=0, count=2)
        self.assertEqual((g.pe_id(), g.pe_count()), (0, 2))
        self.assertIs(g.pe_context(), self.ctx)
        self.assertEqual((NV.fakenvshmem_rank(), NV.fakenvshmem_count(), NV.fakenvshmem_device()),
                         (0, 2, 0))
        g.pe_stop()
        self.assertIsNone(g.pe_context())
        self.assertEqual(NV.fakenvshmem_initialized(), 0)

    def test_a_single_PE_starts_without_an_id_on_the_contexts_device(self):
        other = g.Context(1)
        other.pe_start()
        self.assertEqual((g.pe_id(), g.pe_count(), NV.fakenvshmem_device()), (0, 1, 1))
        self.assertIs(g.pe_context(), other)
        del other
        gc.collect()
        self.assertIsNotNone(g.pe_context(), "the PE keeps its Context alive")
        g.pe_stop()

    def test_bad_start_arguments_are_refused_by_name_and_start_nothing(self):
        uid = g.pe_unique_id()
        with self.assertRaises(g.Error) as cm:
            self.ctx.pe_start(uid[:100])
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "unique_id", "128", "100")
        with self.assertRaises(TypeError):
            self.ctx.pe_start("not bytes")
        with self.assertRaises(g.Error) as cm:
            self.ctx.pe_start(uid, 2, 2)
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "rank")
        with self.assertRaises(g.Error) as cm:
            self.ctx.pe_start(None, 0, 2)
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT")
        with self.assertRaises(g.RangeError):
            self.ctx.pe_start(uid, 2**40, 2)
        self.assertIsNone(g.pe_context())
        self.assertEqual(NV.fakenvshmem_initialized(), 0)

    def test_one_PE_per_process_a_second_start_is_refused(self):
        self.ctx.pe_start()
        with self.assertRaises(g.Error) as cm:
            g.Context(1).pe_start()
        self.assertStatus(cm, "GCL_ERROR_NVSHMEM")
        self.assertIs(g.pe_context(), self.ctx, "the first PE stays")

    def test_a_failed_init_names_the_call_and_starts_nothing(self):
        set_fake(fail="nvshmemx_hostlib_init_attr:5")
        with self.assertRaises(g.Error) as cm:
            self.ctx.pe_start()
        self.assertStatus(cm, "GCL_ERROR_NVSHMEM", "nvshmemx_hostlib_init_attr")
        self.assertIsNone(g.pe_context())

    def test_queries_barrier_alloc_and_stop_before_start_are_refused(self):
        for f in (g.pe_id, g.pe_count, g.pe_barrier, g.pe_stop,
                  lambda: self.ctx.symmetric_alloc(256)):
            with self.subTest(f=f), self.assertRaises(g.Error) as cm:
                f()
            self.assertStatus(cm, "GCL_ERROR_NVSHMEM")

    def test_the_barrier_runs_on_a_stream_of_the_PEs_context(self):
        self.start()
        s = self.ctx.create_stream()
        g.pe_barrier()
        g.pe_barrier(s)
        g.pe_barrier(stream=s.handle)
        self.assertEqual(nv_calls("nvshmemx_barrier_all_on_stream"), 3)
        far = g.Context(1).create_stream()
        with self.assertRaises(g.Error) as cm:
            g.pe_barrier(far)
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT")
        self.assertEqual(nv_calls("nvshmemx_barrier_all_on_stream"), 3)


class SymmetricTest(PETest):
    def test_a_symmetric_buffer_is_a_Buffer_and_peers_get_their_own_copy(self):
        self.start(3)
        b = self.ctx.symmetric_alloc(4096)
        self.assertIsInstance(b, g.Buffer)
        self.assertTrue(b.symmetric)
        self.assertFalse(self.ctx.alloc(16).symmetric)
        self.assertEqual(b.ptr % 256, 0)
        self.assertIn("symmetric", repr(b))
        self.assertEqual(b.peer_address(0), b.ptr)
        peers = [b.peer_address(p) for p in range(3)]
        self.assertEqual(len(set(peers)), 3)
        C.memset(b.ptr, 7, 4096)  # this PE's copy only (the fake's heap is not the fake driver's)
        self.assertEqual(C.string_at(peers[0], 4), b"\x07" * 4)
        self.assertEqual(C.string_at(peers[1], 4), b"\x00" * 4)
        v = b.view("i32")
        self.assertEqual(v.peer_address(2), peers[2])
        self.assertEqual(b.__dlpack_device__(), (2, 0))
        del v
        b.close()

    def test_bad_peers_and_plain_buffers_are_refused_by_name(self):
        self.start(2)
        b = self.ctx.symmetric_alloc(256)
        with self.assertRaises(g.Error) as cm:
            b.peer_address(2)
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT")
        with self.assertRaises(g.Error) as cm:
            self.ctx.alloc(256).peer_address(0)
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "not symmetric")
        set_fake(unreachable="1")
        with self.assertRaises(g.Error) as cm:
            b.peer_address(1)
        self.assertStatus(cm, "GCL_ERROR_PEER_UNREACHABLE", "PE 1")
        b.close()
        with self.assertRaises(g.Error) as cm:
            b.peer_address(0)
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "closed")

    def test_alloc_on_another_context_than_the_PEs_is_refused(self):
        self.start()
        with self.assertRaises(g.Error) as cm:
            g.Context(1).symmetric_alloc(256)
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "device 0", "device 1")
        self.assertEqual(NV.fakenvshmem_allocations(), 0)

    def test_a_full_heap_is_GCL_ERROR_OUT_OF_MEMORY(self):
        self.start()
        set_fake(fail="nvshmem_align")
        with self.assertRaises(g.Error) as cm:
            self.ctx.symmetric_alloc(256)
        self.assertStatus(cm, "GCL_ERROR_OUT_OF_MEMORY")
        set_fake(fail="")
        g.pe_stop()  # nothing open

    def test_sizes_NVSHMEM_would_die_of_are_refused_and_1_MiB_works_after(self):
        # the fake ends the process (255) for an nvshmem_align above 1 GiB, as NVSHMEM 3.4.5 does
        self.start()
        for n, text in ((1 << 40, "bytes 1099511627776 (1024.00 GiB) do not fit the symmetric heap"),
                        ((1 << 63) - 1, "bytes 9223372036854775807"),
                        (130 << 30, "NVSHMEM_MAX_MEMORY_PER_GPU is 137438953472 bytes")):
            with self.assertRaises(g.Error) as cm:
                self.ctx.symmetric_alloc(n)
            self.assertStatus(cm, "GCL_ERROR_OUT_OF_MEMORY", text)
        with self.assertRaises(g.Error) as cm:
            self.ctx.symmetric_alloc(0)
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "bytes is 0")
        self.assertEqual(nv_calls("nvshmem_align"), 0)
        buf = self.ctx.symmetric_alloc(1 << 20)
        self.assertEqual(g.pe_id(), 0)
        buf.close()
        g.pe_stop()

    def test_a_size_beyond_the_free_device_memory_is_refused_with_both_numbers(self):
        self.start()
        os.environ["FAKECUDA_MEM_FREE"] = str(64 << 20)
        try:
            with self.assertRaises(g.Error) as cm:
                self.ctx.symmetric_alloc(100 << 20)
            self.assertStatus(cm, "GCL_ERROR_OUT_OF_MEMORY", "the device has 67108864 bytes",
                              "would grow NVSHMEM's heap by 536870912 bytes")
        finally:
            del os.environ["FAKECUDA_MEM_FREE"]
        self.ctx.symmetric_alloc(100 << 20).close()
        g.pe_stop()

    def test_close_and_stop_are_refused_while_the_memory_is_in_use(self):
        self.start()
        b = self.ctx.symmetric_alloc(1024)
        cap = b.__dlpack__()
        view = b.view("f32", (16, 16))
        args = g.Args(g.Layout("f32* p", 90))
        args[0] = b
        with self.assertRaises(g.Error) as cm:
            b.close()
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "1 DLPack export", "1 Args", "1 view")
        with self.assertRaises(g.Error) as cm:
            g.pe_stop()
        self.assertStatus(cm, "GCL_ERROR_NVSHMEM", "1 symmetric Buffer is still open")
        self.assertIs(g.pe_context(), self.ctx, "the PE still runs")
        self.assertEqual(args[0], b.ptr)
        del cap, view, args
        gc.collect()
        frees = nv_calls("nvshmem_free")
        b.close()
        self.assertEqual(nv_calls("nvshmem_free"), frees + 1, "close frees collectively")
        self.assertEqual(NV.fakenvshmem_allocations(), 0)
        self.assertTrue(b.closed)
        b.close()  # twice: nothing
        g.pe_stop()

    def test_a_collected_open_buffer_stays_allocated_until_stop(self):
        self.start()
        b = self.ctx.symmetric_alloc(256)
        frees = nv_calls("nvshmem_free")
        del b
        gc.collect()
        self.assertEqual(nv_calls("nvshmem_free"), frees, "no collective call from the collector")
        self.assertEqual(NV.fakenvshmem_allocations(), 1)
        g.pe_stop()
        self.assertEqual(NV.fakenvshmem_allocations(), 0)

    def test_a_PE_restarts_after_stop_with_fresh_buffers(self):
        self.start()
        self.ctx.symmetric_alloc(256).close()
        g.pe_stop()
        self.ctx.pe_start()
        b = self.ctx.symmetric_alloc(512)
        self.assertEqual(b.size, 512)
        b.close()


class AttachTest(PETest):
    def kernel(self, mod, ctx=None):
        return mod.kernel("put_self", "i32* out")

    def test_the_module_tells_whether_it_uses_nvshmem(self):
        self.assertTrue(self.ctx.load(NVCUBIN).uses_nvshmem)
        self.assertFalse(self.ctx.load(T.kernel("smoke.sm_90.cubin")).uses_nvshmem)

    def test_an_unattached_kernel_is_refused_before_the_driver_naming_module_and_kernel(self):
        self.start()
        mod = self.ctx.load(NVCUBIN)
        k = self.kernel(mod)
        out = self.ctx.alloc(4096)
        launches = FAKE.fakecuda_launch_count()
        with self.assertRaises(g.Error) as cm:
            k.launch(1, 32, [out])
        self.assertStatus(cm, "GCL_ERROR_NOT_ATTACHED", "kernel 'put_self' of module", "not attached")
        # a module loaded from a path is named by it (issue 55: "image of N bytes" before)
        self.assertIn(f"module '{NVCUBIN}'", str(cm.exception))
        self.assertEqual(FAKE.fakecuda_launch_count(), launches, "the driver was not called")
        with open(NVCUBIN, "rb") as f:  # from bytes: by its size
            k2 = self.kernel(self.ctx.load(f.read()))
        with self.assertRaises(g.Error) as cm:
            k2.launch(1, 32, [out])
        self.assertStatus(cm, "GCL_ERROR_NOT_ATTACHED", f"module 'image of {os.path.getsize(NVCUBIN)} bytes'")
        mod.attach()
        mod.attach()  # twice: nothing
        self.assertEqual(NV.fakenvshmem_libraries(), 1)
        k.launch(1, 32, [out], cooperative=True)
        self.assertEqual(FAKE.fakecuda_launch_count(), launches + 1)
        self.assertEqual(T.last_launch(FAKE).cooperative, 1)
        mod.detach()
        self.assertEqual(NV.fakenvshmem_libraries(), 0)
        with self.assertRaises(g.Error) as cm:
            k.launch(1, 32, [out])
        self.assertStatus(cm, "GCL_ERROR_NOT_ATTACHED")
        with self.assertRaises(g.Error) as cm:
            mod.detach()
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT")

    def test_attach_before_start_and_of_a_plain_module_are_refused(self):
        mod = self.ctx.load(NVCUBIN)
        with self.assertRaises(g.Error) as cm:
            mod.attach()
        self.assertStatus(cm, "GCL_ERROR_NVSHMEM")
        self.start()
        with self.assertRaises(g.Error) as cm:
            self.ctx.load(T.kernel("smoke.sm_90.cubin")).attach()
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT")
        self.assertEqual(NV.fakenvshmem_libraries(), 0)

    def test_a_newer_device_library_is_refused_with_both_versions(self):
        self.start()
        with self.assertRaises(g.Error) as cm:
            self.ctx.load(T.kernel("nvshmem_state_v390.sm_90.cubin")).attach()
        self.assertStatus(cm, "GCL_ERROR_NVSHMEM_VERSION", "3.9.0", "3.4.5")

    def test_a_module_of_another_devices_context_is_refused(self):
        self.start()
        with self.assertRaises(g.Error) as cm:
            g.Context(1).load(NVCUBIN).attach()
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "device 1", "device 0")

    def test_stop_is_refused_while_attached_and_a_module_that_goes_detaches_first(self):
        self.start()
        mod = self.ctx.load(NVCUBIN)
        mod.attach()
        with self.assertRaises(g.Error) as cm:
            g.pe_stop()
        self.assertStatus(cm, "GCL_ERROR_NVSHMEM")
        self.assertIs(g.pe_context(), self.ctx)
        del mod
        gc.collect()
        self.assertEqual(NV.fakenvshmem_libraries(), 0)
        g.pe_stop()


class PeerMapTest(PETest):
    def rig(self, count):
        self.start(count)
        self.buf = self.ctx.symmetric_alloc(64 * 64 * 4)
        self.view = self.buf.view("f32", (64, 64))
        self.args = g.Args(g.Layout(PEERS, 90))
        self.tm = g.TensorMap(self.view, (16, 16))

    def release(self):
        del self.args, self.view, self.tm
        gc.collect()
        self.buf.close()

    def oracle(self, addresses):
        """The same maps through the ordinary setter, over tensors at the peers' addresses."""
        p = T.Producer()
        ref = g.Args(g.Layout(PEERS, 90))
        ref["peers"] = [g.TensorMap(T.FakeTensor(p, a, (64, 64)), (16, 16)) for a in addresses]
        return [ref[f"peers[{i}]"] for i in range(len(addresses))]

    def test_each_element_is_the_encode_of_that_peers_copy(self):
        self.rig(3)
        pes = [2, 0, 1, 1]
        self.args.set_peer_tensormaps("peers", self.tm, pes)
        want = self.oracle([self.buf.peer_address(p) for p in pes])
        self.assertEqual([self.args[f"peers[{i}]"] for i in range(4)], want)
        self.args.set_peer_tensormaps("peers[1]", self.tm, None)  # every PE, from element 1
        want = self.oracle([self.buf.peer_address(p) for p in (2, 0, 1, 2)])
        self.assertEqual([self.args[f"peers[{i}]"] for i in range(4)], want)
        self.release()

    def test_pes_takes_a_list_a_tuple_or_a_range_and_refusals_name_the_pe(self):
        """docs/multigpu.md "Peer tensor maps" (issue 55): the forms of pes, and what a PE out of
        range or a tensor outside symmetric memory gives."""
        self.rig(2)
        want = self.oracle([self.buf.peer_address(p) for p in (0, 1, 0, 1)])
        for pes in ([0, 1], (0, 1), range(2)):
            self.args.set_peer_tensormaps("peers[2]", self.tm, pes)
            self.assertEqual([self.args[f"peers[{i}]"] for i in (2, 3)], want[2:], repr(pes))
        with self.assertRaises(TypeError) as cm:
            self.args.set_peer_tensormaps("peers", self.tm, {0, 1})
        self.assertIn("pes takes a list, tuple or range of ints, or None", str(cm.exception))
        with self.assertRaises(g.Error) as cm:
            self.args.set_peer_tensormaps("peers", self.tm, [0, 2])
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "PE 2: expected 0 ... 1", "pes[1]")
        plain = self.ctx.alloc(64 * 64 * 4)
        with self.assertRaises(g.Error) as cm:
            self.args.set_peer_tensormaps("peers", g.TensorMap(plain.view("f32", (64, 64)), (16, 16)), [0])
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "is not in a symmetric buffer")
        plain.close()

    def test_a_table_takes_peer_maps_through_the_same_method(self):
        # issue 53: TensorMapTable shares set_peer_tensormaps with Args (entries instead of a path)
        self.rig(3)
        pes = [2, 0, 1, 1]
        t = g.TensorMapTable(5, context=self.ctx)
        t.set_peer_tensormaps(1, self.tm, pes)
        want = self.oracle([self.buf.peer_address(p) for p in pes])
        self.assertEqual([t.map(i) for i in (1, 2, 3, 4)], want)
        self.assertEqual(t.dirty, 4)
        set_fake(unreachable="2")
        with self.assertRaises(g.Error) as cm:
            t.set_peer_tensormaps(0, self.tm, [0, 2])
        self.assertStatus(cm, "GCL_ERROR_PEER_UNREACHABLE", "PE 2", "pes[1]")
        self.assertEqual([t.map(i) for i in (1, 2, 3, 4)], want)  # nothing changed
        t.close()
        self.release()

    def test_an_unreachable_peer_is_refused_by_name_before_any_encode(self):
        self.rig(3)
        set_fake(unreachable="2")
        encodes = FAKE.fakecuda_calls(b"cuTensorMapEncodeTiled")
        with self.assertRaises(g.Error) as cm:
            self.args.set_peer_tensormaps("peers", self.tm, [0, 1, 2, 0])
        self.assertStatus(cm, "GCL_ERROR_PEER_UNREACHABLE", "PE 2", "pes[2]")
        self.assertEqual(FAKE.fakecuda_calls(b"cuTensorMapEncodeTiled"), encodes)
        self.assertFalse(self.args.is_set("peers"))
        self.release()

    def test_peer_maps_repoint_like_every_other_map_and_keep_the_buffer(self):
        self.rig(2)
        pes = [0, 1, 0, 1]
        self.args.set_peer_tensormaps("peers", self.tm, pes, refresh=True)
        other = self.ctx.symmetric_alloc(64 * 64 * 4)
        self.args.repoint("peers", [other.peer_address(p) for p in pes])
        want = self.oracle([other.peer_address(p) for p in pes])
        self.assertEqual([self.args[f"peers[{i}]"] for i in range(4)], want)
        other.close()
        self.args.set_peer_tensormaps("peers", self.tm, pes)
        del self.view, self.tm
        gc.collect()
        with self.assertRaises(g.Error) as cm:
            self.buf.close()  # the maps point into it: the args keep its view
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT", "1 view")
        del self.args
        gc.collect()
        self.buf.close()

    def test_bad_fields_pes_and_maps_are_refused(self):
        self.rig(2)
        with self.assertRaises(g.Error) as cm:
            self.args.set_peer_tensormaps("n", self.tm, [0])
        self.assertStatus(cm, "GCL_ERROR_TYPE_MISMATCH", "set_peer_tensormaps")
        with self.assertRaises(TypeError):
            self.args.set_peer_tensormaps("peers", self.tm, 0)
        with self.assertRaises(TypeError):
            self.args.set_peer_tensormaps("peers", self.tm, ["0"])
        with self.assertRaises(TypeError):
            self.args.set_peer_tensormaps("peers", self.view, [0])
        with self.assertRaises(g.Error) as cm:
            self.args.set_peer_tensormaps("peers", self.tm, [0, 5])
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT")
        with self.assertRaises(g.Error) as cm:
            self.args.set_peer_tensormaps("peers", self.tm, [0, 1, 0, 1, 0])
        self.assertStatus(cm, "GCL_ERROR_INVALID_ARGUMENT")
        self.assertFalse(self.args.is_set("peers"))
        self.release()


if __name__ == "__main__":
    T.main()
