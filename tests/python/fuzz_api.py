"""A random-input fuzzer of the gclaunch Python API (issue 38), against the fake driver.

    python3 tests/python/fuzz_api.py [--seed N] [--seconds S] [--cases N] [--batch B]

Seeded and reproducible: case i of seed N is always the same Python snippet (printed on a
failure). Every batch of cases runs in a forked child, so a crash (a signal, a sanitizer abort)
is caught, reported with its reproducer and saved under tests/python/fuzz_regressions/ as a
regression script; the saved regressions replay first, each in its own subprocess.

The contract checked for every case (the package's, python/gclaunch/__init__.pyi):
  * the outcome is a value, a gclaunch.Error subclass, or TypeError for an argument of the wrong
    Python type; an OverflowError must be a gclaunch.RangeError; nothing else (no ValueError,
    UnicodeError, SystemError, ...);
  * a refused call changes nothing: the args' is_set() of every leaf and every set leaf's value
    are compared before and after;
  * deleters run exactly once: at the end of each batch, with every object gone, the fake
    producer's deleter count equals its export count.
Callables: every entry of CALLABLES (one generator of a snippet each); any public callable of the
package that none of them names is called through GENERIC with random arguments built from its
inspect.signature, so runtime objects added to gclaunch.__all__ are fuzzed from the start. Add
an entry to CALLABLES for a smarter generator.

Exit status: 0 when every case kept the contract, 1 otherwise. The last line:
  fuzz_api: ok|FAIL seed N: C cases in S s (R regressions replayed), F failures

Runtime objects (issue 50): the "seq ..." targets are sequences of calls on Streams, Events,
Graphs and Buffers, valid and invalid (use after close, nested capture, close during capture,
close with views/exports/Args alive, wrong sizes), each step labelled by a model of the objects:
'ok' must return, 'err' must raise gclaunch.Error, 'any' is held to the contract above. With the
fake driver the live streams, events, graphs and allocations must be back after each sequence.

--real (GCL_FUZZ_DRIVER=real): against the real libcuda on a GPU (scripts/h200.sh pyfuzz).
Nothing the driver must trust blindly is drawn (no random stream handles, no kernel writing
through a random pointer), so a crash is gclaunch's; each batch warms the driver up, measures
free device memory (cuMemGetInfo), runs its cases, drops their objects and measures again:
growth beyond the tolerance leak_tolerance() derives (what the driver may keep beyond warm-up:
one 2 MiB block per heap; GCL_FUZZ_LEAK_MB overrides it) is a failure.

Isolation (issue 55): a capturing thread may not allocate, query or synchronize events or
streams, or instantiate graphs (capture mode THREAD_LOCAL); the model labels those steps 'err'
during a capture of the case, and after every case isolate() drops its objects and checks that
no capture and no PE outlives it.
"""
import argparse
import gc
import inspect as pyinspect
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REGRESSIONS = os.path.join(HERE, "fuzz_regressions")
sys.path.insert(0, HERE)

import gcltest as T  # noqa: E402

# --real (or GCL_FUZZ_DRIVER=real, which the saved reproducers inherit): the real libcuda, on a
# GPU; calls that would hand the driver a pointer it must trust (a random stream handle, a
# kernel writing through a random pointer) are left out, so a crash is gclaunch's.
REAL = "--real" in sys.argv or os.environ.get("GCL_FUZZ_DRIVER") == "real"
if REAL:
    os.environ["GCL_FUZZ_DRIVER"] = "real"
    # a PE that a case (or warm_up) starts: one GPU, no NVLink multicast, no network (multigpu.md)
    os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
    os.environ.setdefault("NVSHMEM_REMOTE_TRANSPORT", "none")
FAKE = None if REAL else T.fake_driver()
import gclaunch as g  # noqa: E402

ARGS8 = "i32 a, i32 b, f32 c, f32 d, const f32* p0, f32* p1, u64 n, i32 idx"
MAPS16 = "grid_constant tensormap[16] maps, const void* work, u32 n_work"
NESTED = ("grid_constant struct{tensormap[3] loads, struct{ptr p, u32 n}[4] segs, f32 scale, "
          "struct{i8, u16 h} pair} g, bool flag, f16 h16, bf16 hb, f64 d, u8 small, i16[3] arr")

# --- the world every case runs in (built once per child; the reproducer builds it too) ---------

SETUP = '''
import ctypes as C, gc, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gcltest as T
import fuzz_api as F
g, FAKE, Stream, TorchStream = F.g, F.FAKE, F.Stream, F.TorchStream
W = F.World()
'''


class Stream:
    def __init__(self, ret):
        self.ret = ret

    def __cuda_stream__(self):
        return self.ret


class TorchStream:
    """A type with torch's names: its objects' handles are remembered by launch (one handle for an
    object's life), so the memo meets every handle, good and bad, and objects dying under it."""

    def __init__(self, h):
        self.h = h

    @property
    def cuda_stream(self):
        return self.h

    def __cuda_stream__(self):
        return (0, self.h)


TorchStream.__module__, TorchStream.__qualname__ = "torch.cuda.streams", "Stream"


class World:
    """The objects cases act on: layouts, args (one fully set), a kernel of the fake driver,
    fake tensors over host memory, and the producer that counts deleters."""

    def __init__(self):
        for image, name in (("launchcfg.sm_90.cubin", "bench_args8"),
                            ("megakernel.sm_90.cubin", "megakernel_copy_16")):
            k = next(k for k in g.inspect(T.kernel(image)) if k["name"] == name)
            if FAKE:
                T.declare(FAKE, name, [(p["offset"], p["size"]) for p in k["params"]])
        self.p = T.Producer()
        self.mem = (C.c_float * 65536)()
        self.base = (C.addressof(self.mem) + 255) & ~255
        self.lay = g.Layout(NESTED, 90)
        self.lay8 = g.Layout(ARGS8, 90)
        self.a = g.Args(self.lay)
        self.full = g.Args(self.lay8)
        for i in range(8):
            self.full[i] = 16
        self.ctx = g.Context(0)
        self.mod = self.ctx.load(T.kernel("launchcfg.sm_90.cubin"))
        self.k = self.mod.kernel("bench_args8", ARGS8)
        self.mega = self.ctx.load(T.kernel("megakernel.sm_90.cubin")).kernel("megakernel_copy_16", MAPS16)
        self.ka = self.mega.args()
        self.streams = [0, 1, 2]
        self.steps = {}  # (label, outcome) -> count, of the sequences' steps
        self.s = self.ctx.create_stream()  # wrapped by sequences (Stream.from_handle); never closed
        self.ts = TorchStream(self.s.handle)  # a torch-named stream object that lives: the memo hits
        self.probe = self.ctx.create_event()  # isolate()'s: never given to a case
        # for GENERIC's method calls: a Buffer, an Event and a Graph of one bench_args8 launch
        self.buf, self.ev, self.gs = self.ctx.alloc(4096), self.ctx.create_event(), self.ctx.create_stream()
        with self.gs.capture() as self.graph:
            self.k.launch(1, 32, self.full, stream=self.gs)
        self.files()

    def files(self):
        """Paths of every file type and size for inspect and load (issue 50): a FIFO without a
        writer (a reader that waits on it hangs the case), a directory, /dev/null, a sparse 2 GiB
        file of zeros, a cubin followed by 2 GiB of zeros (a reader that reads whole files
        allocates 2 GiB), a symlink to the FIFO. Removed at exit."""
        import atexit
        import shutil
        import tempfile
        d = tempfile.mkdtemp(prefix="gcl-fuzz-api.")
        atexit.register(shutil.rmtree, d, True)
        self.fifo, self.dir, self.zeros = os.path.join(d, "f.cubin"), d, os.path.join(d, "z.cubin")
        self.tail, self.link = os.path.join(d, "t.cubin"), os.path.join(d, "l.cubin")
        os.mkfifo(self.fifo)
        os.symlink(self.fifo, self.link)
        with open(self.zeros, "wb") as f:
            f.truncate(2 << 30)
        shutil.copy(T.kernel("launchcfg.sm_90.cubin"), self.tail)
        with open(self.tail, "r+b") as f:
            f.truncate(2 << 30)

    def tensor(self, off=0, shape=(8, 16), strides=(64, 1), dtype=(T.KDLFLOAT, 32), device=None,
               versioned=True, read_only=False, major=1):
        return T.FakeTensor(self.p, self.base, shape, dtype=dtype, strides=strides, byte_offset=off,
                            device=device or (T.KDLCUDA, 0), versioned=versioned,
                            read_only=read_only, major=major)

    def leaves(self, args):
        """(path, is_set, value) of every leaf of args: what a refused call must not change."""
        out = []
        for f in args.layout.leaves():
            s = args.is_set(f.path)
            out.append((f.path, s, args[f.path] if s else None))
        return out


import ctypes as C  # noqa: E402  (World uses it; kept here for the reproducers' namespace)

# --- random values ---------------------------------------------------------------------------------

INTS = ["0", "1", "-1", "2", "3", "7", "16", "90", "255", "256", "4095", "4096", "2**31-1", "2**31",
        "2**32-1", "2**32", "2**63-1", "2**63", "2**64-1", "2**64", "-2**31", "-2**63", "-2**63-1",
        "2**2000", "-2**2000", "True", "False"]
FLOATS = ["0.0", "-0.0", "1.5", "1e39", "-1e39", "65504.0", "65520.0", "3.4e38", "3.5e38",
          "float('inf')", "float('-inf')", "float('nan')", "1e-50", "2.0**-149"]
STRS = ["''", "'u32 a'", "'\\xe9'", "'u32 \\xe9'", "'a\\x00b'", "'\\udcff'", "'\\ud800x'", "'x'*300",
        "'g.segs[2].p'", "'g.loads[1]'", "'g.pair.h'", "'g.pair.0'", "'arr'", "'flag'", "'h16'",
        "'g.segs[9]'", "'g..x'", "'g[0]'", "'maps[3]'", "'maps'", "'work'", "'a'*199+'\\xe9'",
        "'sm_90'", "'sm_x'", "'/dev/null'", "'/dev/null\\x00'", "'/nonexistent/k.cubin'"]
KEYS = ["0", "1", "-1", "-2", "8", "11", "-12", "2**63", "-2**63", "2**64", "True", "1.0", "None",
        "'g.segs[2].p'", "'g.segs[2].n'", "'g.scale'", "'g.pair'", "'g.loads'", "'g.loads[2]'",
        "'g.loads[3]'", "'flag'", "'h16'", "'hb'", "'d'", "'small'", "'arr'", "'arr[1]'", "'g'",
        "'nope'", "'g.\\xe9'", "'a\\x00'", "'\\udcff'", "'g.segs[2]'", "'maps'", "'maps[15]'",
        "'work'", "'n_work'", "'a'", "'p0'", "'n'"]
SIGS = ["'u32 a'", "'" + NESTED + "'", "'struct{u8 x} s, f32* p'", "'tensormap[300] m'",
        "'bytes(100000) b'", "'u8[0] a'", "'struct{} s'", "'align(3) u32 a'", "'\\xe9'",
        "'u32 a, u32 a'", "'grid_constant tensormap m'", "'f16 h, bf16 b'", "''", "'ptr'"]


def tensor_expr(r):
    kw = []
    if r.random() < 0.5:
        kw.append(f"off={r.choice([0, 4, 16, 64, 128, 256, 1024, 2**62, -16])}")
    if r.random() < 0.4:
        # a well-formed producer: as many strides as dimensions (or None)
        shape, strides = r.choice([("(8, 16)", ["(64, 1)", "None", "(0, 1)", "(-64, 1)", "(2**62, 1)", "(16, 1)"]),
                                   ("(16,)", ["(1,)", "None", "(2,)"]), ("(0, 16)", ["(64, 1)"]),
                                   ("(1, 1, 1, 1, 1, 1)", ["None"]), ("(2**40, 16)", ["(64, 1)"]),
                                   ("(8, -1)", ["(64, 1)"]), ("(4, 8, 16)", ["(512, 64, 1)", "None"])])
        kw += [f"shape={shape}", f"strides={r.choice(strides)}"]
    if r.random() < 0.3:
        kw.append(f"dtype={r.choice(['(T.KDLFLOAT, 32)', '(T.KDLFLOAT, 16)', '(T.KDLINT, 8)', '(T.KDLFLOAT, 64)', '(99, 7)'])}")
    if r.random() < 0.2:
        kw.append(f"device={r.choice(['(T.KDLCPU, 0)', '(T.KDLCUDA, 1)', '(T.KDLCUDA, -1)'])}")
    if r.random() < 0.2:
        kw.append(f"versioned={r.choice(['True', 'False'])}")
    if r.random() < 0.1:
        kw.append("read_only=True")
    if r.random() < 0.05:
        kw.append("major=2")
    return f"W.tensor({', '.join(kw)})"


def tmap_expr(r):
    box = r.choice(["(8, 16)", "(16,)", "8", "(0, 16)", "(300, 16)", "(-1, 16)", "(2**40, 8)", "()",
                    "(1, 2, 3, 4, 5, 6)", "'ab'", "[8, 16]", "(8.0, 16)"])
    kw = []
    for name, vals in (("swizzle", ["0", "32", "64", "128", "3", "5", "-1", "2**70"]),
                       ("l2", ["0", "64", "256", "7"]), ("interleave", ["0", "1", "2", "3", "-1"]),
                       ("element_strides", ["None", "(1, 1)", "(1,)", "(0, 1)", "(9, 1)", "(-1, 1)"]),
                       ("store", ["True", "False"]), ("oob_nan", ["True", "0"])):
        if r.random() < 0.15:
            kw.append(f"{name}={r.choice(vals)}")
    if r.random() < 0.3:  # im2col: box None or left out (or given: refused), corners W, H, D
        box = r.choice(["None", "None", "(8, 16)"])
        kw.append("im2col=" + r.choice(["(64, 16)", "(1, 4)", "(0, 16)", "(1025, 16)", "(64,)",
                                        "'ab'", "(2**33, 1)", "None", "(8, 2**32)"]))
        for name in ("lower", "upper"):
            if r.random() < 0.5:
                kw.append(f"{name}=" + r.choice(["(0,)", "(-1, -1)", "(3, 0, 0)", "(2**31,)", "()",
                                                 "(0, 0, 0, 0)", "None", "'x'", "[1.5]",
                                                 "(-32769,)", "(-8, 7)"]))
    elif r.random() < 0.05:
        kw.append(r.choice(["lower=(0,)", "upper=(1, 1)"]))  # corners without im2col: refused
    return f"g.TensorMap({tensor_expr(r)}, {box}{''.join(', ' + k for k in kw)})"


def value(r, depth=0):
    """Any value, as Python source."""
    kind = r.randrange(12)
    if kind < 3:
        return r.choice(INTS)
    if kind == 3:
        return r.choice(FLOATS)
    if kind == 4:
        return r.choice(STRS)
    if kind == 5:
        return f"bytes({r.choice([0, 1, 2, 4, 8, 16, 128, 256, 384, 2048])})"
    if kind == 6:
        return tensor_expr(r)
    if kind == 7:
        return tmap_expr(r)
    if kind == 8 and depth < 2:
        n = r.choice([0, 1, 2, 3, 15, 16, 17])
        return "[" + ", ".join(value(r, depth + 1) for _ in range(min(n, 4))) + \
               (f"] + [{value(r, depth + 1)}] * {n - 4}" if n > 4 else "]")
    if kind == 9:
        return r.choice(["None", "object()", "bytearray(8)", "memoryview(bytes(4))", "W.full",
                         "W.lay", "Stream((0, 1))", "1j", "W.base", "W.base + 4"])
    if kind == 10 and depth < 2:
        return f"({value(r, depth + 1)},)"
    return f"[{tmap_expr(r)} for _ in range({r.choice([1, 3, 16])})]"


def stream_expr(r):
    if REAL:  # handles the driver may be given: none, legacy, per-thread, the World's stream
        h = r.choice(["None", "0", "1", "2", "-1", "-5", "2**63", "2**64", "-2**63", "True", "W.s.handle"])
        return r.choice([h, h, f"Stream((0, {h}))", "Stream(5)", "Stream((0,))", "object()", "W.s",
                         f"TorchStream({h})", "W.ts"])
    h = r.choice(["None", "0", "1", "2", "3", "-1", "-5", "12345", "2**63", "2**64", "-2**63",
                  "W.base", "C.addressof(W.mem)", "0x7fff_ffff_f000", "id(object())", "True"])
    return r.choice([h, h, f"Stream((0, {h}))", "Stream(5)", "Stream((0,))", "object()",
                     f"TorchStream({h})", "W.ts"])


def dims_expr(r):
    return r.choice(["1", "32", "(1, 1, 1)", "(2, 3)", "0", "-1", "2**32", "(1, 2**32)", "()",
                     "(1, 2, 3, 4)", "[4, 4]", "1.0", "None", "(True,)"])

# --- the callables ---------------------------------------------------------------------------------
# name -> generator(r) returning (snippet, args_checked): the snippet is one or more statements;
# args_checked names the Args object (a World attribute) a refused call must leave unchanged.


def c_layout(r):
    return f"g.Layout({r.choice(SIGS)}, {r.choice(INTS)})", None


def c_layout_kw(r):
    return f"g.Layout(signature={r.choice(SIGS)}, sm={r.choice(['90', '100', '80', 'None', '90.0'])})", None


def c_field(r):
    return f"W.lay.field({r.choice(KEYS)})", None


def c_layout_misc(r):
    return r.choice(["W.lay.leaves()", "W.lay.params", "W.lay.size", "W.lay.sm", "len(W.lay)",
                     "W.lay.signature", "[p._asdict() for p in W.lay.params]", "repr(W.lay)",
                     "W.k.layout.leaves()", "W.k.layout.signature"]), None


def c_args_new(r):
    return f"g.Args({r.choice(['W.lay', 'W.lay8', 'W.k.layout', 'None', '5', 'W.a'])})", None


def c_setitem(r):
    target = r.choice(["a", "a", "full", "ka"])
    key = r.choice(KEYS)
    return f"W.{target}[{key}] = {value(r)}", target


def c_getitem(r):
    return f"W.{r.choice(['a', 'full', 'ka'])}[{r.choice(KEYS)}]", None


def c_is_set(r):
    return f"W.{r.choice(['a', 'full'])}.is_set({r.choice(KEYS)})", None


def c_buffer_clone(r):
    return r.choice(["W.a.buffer()", "W.full.buffer()", "W.a.clone()", "W.full.clone().buffer()",
                     "repr(W.a)", "W.a.layout"]), None


def c_refresh(r):
    target = r.choice(["a", "ka"])
    return f"W.{target}.refresh({r.choice(KEYS)}, {value(r)})", target


def c_repoint(r):
    target = r.choice(["a", "ka"])
    addr = r.choice(["W.base", "W.base + 4", "0", "-1", "2**64", tensor_expr(r), "[W.base] * 3", value(r)])
    return f"W.{target}.repoint({r.choice(KEYS)}, {addr})", target


def c_tensormap(r):
    return tmap_expr(r), None


def c_describe(r):
    return f"{tmap_expr(r)}.describe()", None


# The World's paths of every file type and size (World.files), for inspect and load.
FILES = ["W.fifo", "W.dir", "'/dev/null'", "W.zeros", "W.tail", "W.link"]


def c_inspect(r):
    src = r.choice(STRS + FILES + ["T.kernel('launchcfg.sm_90.cubin')", "b''", "b'\\x7fELF'", "bytes(64)",
                           "b'.version 8.0\\n.target sm_90\\n.entry k\\xc3\\xa9(.param .u64 p){ret;}'",
                           "b'.version 8.0\\n.entry k(.param .u64 p){ret;}'", "5", "None"])
    arch = r.choice(["None", "90", "'sm_90'", "-1", "2**40", "'sm_\\xe9'", "'90\\x00'", "1001", "90.0"])
    return f"g.inspect({src}, arch={arch})", None


def c_status_name(r):
    return f"g.status_name({r.choice(INTS + ['7', '21', '1.0', 'None', chr(39) + 'x' + chr(39)])})", None


def c_context(r):
    return f"g.Context({r.choice(['0', '1', '-1', '2**40', '2**31', 'None', '0.0', 'device=0'])})", None


def c_load(r):
    src = r.choice(FILES + ["b''", "bytes(100)", "T.kernel('launchcfg.sm_90.cubin')", "'/nonexistent'",
                    "'\\x00'", "5", "b'.version 8.0\\n.target sm_90\\n.visible .entry k(.param .u64 p){ret;}'"])
    return f"W.ctx.load({src})", None


def c_kernel(r):
    name = r.choice(["'bench_args8'", "'nope'", "''", "'\\xe9'", "'a\\x00'", "5", "'\\udcff'"])
    sig = r.choice(["None", repr(ARGS8), "'u64 a'", "'\\xe9'", "5", "''"])
    return f"W.mod.kernel({name}, {sig})", None


def c_launch(r):
    # bench_args8 writes through p1 when idx < 0: on the real driver idx stays >= 0
    last = r.choice(["0", "16", "2**31-1"]) if REAL else value(r)
    args = r.choice(["W.full", "W.full", "W.a", "W.full.clone()", "[16] * 8", "[16] * 7",
                     "[" + ", ".join([value(r) for _ in range(7)] + [last]) + "]", "None", "W.ka"])
    kw = []
    for name, gen in (("shared", lambda: r.choice(INTS)), ("stream", lambda: stream_expr(r)),
                      ("cluster", lambda: dims_expr(r)), ("cooperative", lambda: r.choice(["True", "False"]))):
        if r.random() < 0.35:
            kw.append(f"{name}={gen()}")
    return f"W.k.launch({dims_expr(r)}, {dims_expr(r)}, {args}{''.join(', ' + k for k in kw)})", None


def c_kernel_misc(r):
    return r.choice(["W.k.args()", "W.k.name", "W.k.handle", "W.k.context", "W.mod.log",
                     "W.mod.context", "W.ctx.sm", "W.ctx.name", "W.ctx.handle", "W.ctx.device",
                     "W.ctx.synchronize()", "repr(W.k)", "repr(W.ctx)"]), None


# --- runtime objects: model-checked sequences (streams, events, graphs, buffers) -----------------
# A sequence is a list of steps (one statement or block each, separated by STEP in the snippet);
# every step runs on its own, so the steps after a refused one still run (use after close, close
# during capture, ...). A small model of the objects labels each step: "ok" must return (a valid
# call refused is a finding), "err" must raise gclaunch.Error (misuse accepted is a finding),
# "any" is held to the contract only. A step the model cannot predict (random arguments) makes
# the objects it touches unknown: their later steps are "any".
STEP = "\n#--step--\n"
SIZES = [1, 4, 256, 4096, 1 << 20, 64 << 20]  # 64 MiB: a leaked one is far above the tolerance


def loose(r):
    """Any value where a stream may be taken: on the real driver only a handle it can be given."""
    return stream_expr(r) if REAL else value(r)


class Model:
    def __init__(self, r):
        self.r, self.steps = r, []
        self.streams = {}   # name -> {"open", "capturing", "known", "kernels"}
        self.events = {}    # name -> {"recorded", "captured"}
        self.graphs = {}    # name -> {"ready", "kernels"}
        self.buffers = {}   # name -> {"open", "size", "holders", "known"}
        self.holders = {}   # name of a view / capsule / Args -> the buffer it holds

    def add(self, code, expect):
        """A step and its label. A step labelled 'any' may be a call the driver refuses during a
        capture of this thread (a synchronize of a stream or event the model lost track of, ...),
        and such a refusal invalidates the capture: the model stops predicting what launches into
        this thread's captures do after it (H100, seed 135487169: s0.synchronize() on a stream
        the model no longer knew, then a launch into s1's capture labelled 'ok' gave
        CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)."""
        if expect == "any" and self.captures() != "no":
            self.invalidate()
        self.steps.append((code, expect))

    def pick(self, d, new_prefix):
        if d and self.r.random() < 0.8:
            return self.r.choice(sorted(d))
        return f"{new_prefix}{len(d)}"

    def captures(self, but=None):
        """Whether a stream of this thread (the fuzzer's one thread) captures now, other than
        `but`: "yes", "maybe" (a stream the model lost track of may have begun one) or "no"."""
        open_ = [s for n, s in self.streams.items() if n != but and s["open"] and not s["world"]]
        if any(s["capturing"] and s["known"] for s in open_):
            return "yes"
        return "maybe" if any(s["capturing"] or not s["known"] for s in open_) else "no"

    def unsafe(self, label, but=None):
        """The label of a call the driver refuses while a stream of this thread captures (capture
        mode THREAD_LOCAL, measured on driver 580: cuMemAlloc, cuEventQuery, cuEventSynchronize,
        cuStreamSynchronize, graph instantiation; docs/graphs.md): an 'ok' becomes 'err' during a
        capture, 'any' when the model cannot tell."""
        cap = self.captures(but)
        if label != "ok" or cap == "no":
            return label
        self.invalidate()
        return "err" if cap == "yes" else "any"

    def invalidate(self):
        """A call the driver refuses during a capture also invalidates this thread's captures
        (measured on driver 580: later launches into them give CUDA_ERROR_STREAM_CAPTURE_
        INVALIDATED): the model no longer knows what a capturing stream does."""
        for s in self.streams.values():
            if s["capturing"]:
                s["known"] = False

    def untested(self, label):
        """The label of a call whose behaviour during a capture of this thread was not measured
        (synchronous copies and fills, frees, stream destruction): 'ok' becomes 'any' then."""
        if label != "ok" or self.captures() == "no":
            return label
        self.invalidate()
        return "any"


def q_stream(m):
    r = m.r
    name = f"s{len(m.streams)}"
    how = r.randrange(6)
    if how == 0:
        m.add(f"{name} = g.Stream(W.ctx, {r.choice(['0', '0', '-1', '1', '-2**31', '2**40', 'None'])})", "any")
        m.add(f"{name} = W.ctx.create_stream()", "ok")
    elif how == 1:  # a wrap of a foreign handle: the World's stream (never closed), by int or object
        # (from_handle of a gclaunch.Stream returns that Stream itself: the World's is never used)
        m.add(f"{name} = g.Stream.from_handle({r.choice(['W.s.handle', 'Stream((0, W.s.handle))'])}, W.ctx)", "ok")
        m.streams[name] = {"open": True, "capturing": False, "known": True, "kernels": 0, "world": True}
        return
    elif how == 2:  # of a Context the user drops at once: the Stream keeps what it needs
        m.add(f"{name} = g.Context(0).create_stream()", "ok")
    else:
        m.add(f"{name} = W.ctx.create_stream({r.choice(['0', '0', '-1'])})", "ok")
    m.streams[name] = {"open": True, "capturing": False, "known": True, "kernels": 0, "world": False}


def q_stream_op(m):
    r = m.r
    if not m.streams:
        return q_stream(m)
    n = r.choice(sorted(m.streams))
    s = m.streams[n]
    live = s["open"] and s["known"]
    op = r.randrange(8)
    if s["world"] and op in (2, 3, 6):  # no capture on a wrap of the World's stream (it outlives the case)
        op = 0
    if op == 0:  # synchronize: during its capture the driver refuses and invalidates it; during
        # another capture of this thread it refuses (THREAD_LOCAL)
        m.add(f"{n}.synchronize()", m.unsafe("ok", but=n) if live and not s["capturing"] else
              "err" if not s["open"] else "any")
        if s["capturing"]:
            s["known"] = False
    elif op == 1:  # launch (captured while capturing)
        m.add(f"W.k.launch(1, 32, W.full, stream={n})", "ok" if live else "err" if not s["open"] else "any")
        if live and s["capturing"]:
            s["kernels"] += 1
    elif op == 2:  # begin_capture (nested: refused)
        m.add(f"{n}.begin_capture()", "err" if not s["open"] or (s["capturing"] and s["known"]) else
              "ok" if live else "any")
        if live and not s["capturing"]:
            s["capturing"], s["kernels"] = True, 0
    elif op == 3:  # end_capture
        gname = f"gr{len(m.graphs)}"
        # a capture that launched nothing is refused (the driver's graph would have no kernel node)
        # instantiating the graph is refused while another stream of this thread captures
        ok = live and s["capturing"] and s["kernels"] > 0
        label = m.unsafe("ok", but=n) if ok else "err" if not s["open"] or \
            (live and (not s["capturing"] or not s["kernels"])) else "any"
        m.add(f"{gname} = {n}.end_capture()", label)
        m.graphs[gname] = {"ready": label == "ok", "kernels": s["kernels"], "known": label == "ok"}
        s["capturing"] = False
    elif op == 4:  # close (also during a capture, also twice)
        m.add(f"{n}.close()", ("ok" if s["capturing"] else m.untested("ok")) if s["open"] or s["known"] else "any")
        if not s["world"]:
            s["open"], s["capturing"] = False, False
        else:
            s["known"] = s["open"] = s["capturing"] = False
    elif op == 5:
        m.add(f"assert {n}.closed == {not s['open']} and {n}.is_capturing == {s['capturing']}",
              "ok" if s["known"] else "any")
    elif op == 6:  # with stream.capture() as graph: launches
        k = r.choice([0, 1, 2])
        gname = f"gr{len(m.graphs)}"
        body = "".join(f"\n    W.k.launch(1, 32, W.full, stream={n})" for _ in range(k)) or "\n    pass"
        ok = live and not s["capturing"] and k > 0
        label = m.unsafe("ok", but=n) if ok else "err" if not s["open"] or (live and not s["capturing"]) else "any"
        m.add(f"with {n}.capture() as {gname}:{body}", label)
        m.graphs[gname] = {"ready": label == "ok", "kernels": k, "known": label == "ok"}
    else:  # random arguments
        m.add(f"{n}.{r.choice(['wait', 'record'])}({r.choice([loose(r), stream_expr(r), 'W.s', 'e0' if m.events else 'None'])})", "any")
        s["known"] = False


def q_event_op(m):
    r = m.r
    name = m.pick(m.events, "e")
    if name not in m.events:
        m.add(f"{name} = {r.choice(['W.ctx.create_event()', 'g.Event(W.ctx)', 'g.Context(0).create_event()'])}", "ok")
        m.events[name] = {"recorded": False, "captured": False}
        return
    e = m.events[name]
    sn = r.choice(sorted(m.streams)) if m.streams else None
    s = m.streams.get(sn)
    live = s is not None and s["open"] and s["known"] and not s["capturing"]
    op = r.randrange(6)
    if op == 0 and sn:
        m.add(f"{name}.record({sn})", "ok" if live else "err" if not s["open"] else "any")
        e["recorded"] |= live
        e["captured"] |= not live
    elif op == 1:
        m.add(f"{name}.synchronize()", m.unsafe("ok") if not e["captured"] else "any")
    elif op == 2:
        m.add(f"{name}.is_done", m.unsafe("ok") if not e["captured"] else "any")
    elif op == 3 and sn and len(m.events) > 1:  # elapsed between two records on one stream
        other = r.choice([x for x in sorted(m.events) if x != name])
        ok = live and not e["captured"] and not m.events[other]["captured"] and m.captures() == "no"
        m.add(f"{other}.record({sn}); W.k.launch(1, 32, W.full, stream={sn}); {name}.record({sn}); "
              f"{name}.synchronize(); t = {name} - {other}; assert t >= 0.0 and t == {other}.elapsed_ms({name}), t",
              "ok" if ok else "any")
        if not ok:  # it may have launched into a capture, or stopped half-way
            s["known"] = False
            m.events[other]["captured"] = e["captured"] = True
    elif op == 4 and sn:
        ok = live and not e["captured"]
        m.add(f"{sn}.wait({name})", "ok" if ok else "err" if not s["open"] else "any")
        if not ok:  # waiting for a record inside a capture joins the stream to that capture
            s["known"] = False
    else:
        m.add(f"{name}.{r.choice(['record', 'elapsed_ms', '__sub__'])}({r.choice([loose(r), stream_expr(r)])})", "any")


def q_graph_op(m):
    r = m.r
    if not m.graphs:
        return q_stream_op(m)
    name = r.choice(sorted(m.graphs))
    gr = m.graphs[name]
    known = gr["known"]
    sn = r.choice(sorted(m.streams)) if m.streams else None
    s = m.streams.get(sn)
    live = s is not None and s["open"] and s["known"] and not s["capturing"]
    op = r.randrange(5)
    if op == 0:
        m.add(f"{name}.launch({sn or 'None'})", "ok" if known and gr["ready"] and (live or sn is None) else
              "err" if known and not gr["ready"] else "any")
    elif op == 1:
        m.add(f"assert {name}.kernel_count == {gr['kernels']}", "ok" if known and gr["ready"] else "any")
    elif op == 2:
        node = r.choice([0, 0, 1, 2, -1, 2**40])
        vals, bok = r.choice(["W.full", "[16] * 8", "W.full.clone()", "buffer"]), True
        if vals == "buffer":  # a Buffer as the pointers (whether the graph holds it: not modelled)
            if not m.buffers:
                return q_buffer_op(m)
            bn = r.choice(sorted(m.buffers))
            bok = m.buffers[bn]["open"] and m.buffers[bn]["known"]
            vals = r.choice([f"[1, 2, 1.0, 2.0, {bn}, {bn}, 8, 16]", f"_a = W.full.clone(); _a['p1'] = {bn}; _a"])
            m.buffers[bn]["known"] = False
            if vals.startswith("_a"):
                m.add(vals.rsplit(";", 1)[0], "any")
                vals = "_a"
        m.add(f"{name}.set_args({node}, W.k, {vals})", "ok" if bok and known and gr["ready"] and 0 <= node < gr["kernels"]
              else "err" if known and bok else "any")
    elif op == 3:
        m.add(f"{name}.close()", "ok" if known else "any")
        gr["ready"] = False
    else:
        # (on the real driver the graph may run what set_args wrote: bench_args8 with idx >= 0 only)
        vals = "[" + ", ".join(value(r) for _ in range(7)) + ", 16]" if REAL or r.random() < 0.5 else value(r)
        m.add(f"{name}.set_args({r.choice(INTS)}, {'W.k' if REAL else r.choice(['W.k', 'W.mega', value(r)])}, {vals})", "any")


def q_buffer_op(m):
    r = m.r
    name = m.pick(m.buffers, "b")
    if name not in m.buffers:
        n = r.choice(SIZES)
        label = m.unsafe("ok")  # cuMemAlloc: refused while a stream of this thread captures
        m.add(f"{name} = {r.choice(['W.ctx', 'W.ctx', 'g.Context(0)'])}.alloc({n})", label)
        if label == "ok":
            m.buffers[name] = {"open": True, "size": n, "holders": 0, "known": True}
        return
    b = m.buffers[name]
    live, n = b["open"] and b["known"], b["size"]
    dead = "err" if not b["open"] else "any"
    op = r.randrange(12)
    q_buffer_step(m, name, b, live, n, dead, op)


def q_buffer_step(m, name, b, live, n, dead, op):
    """One step on Buffer `name`. The driver's copies, fills and frees during a capture of this
    thread were not measured: their 'ok' is 'any' then (Model.untested)."""
    r = m.r
    m = _Untested(m)
    if op == 0:  # upload: in range or not
        k, off = r.choice([0, 1, 16, n, n + 1]), r.choice([0, 0, 1, n, n + 1, 2**62])
        m.add(f"{name}.upload(bytes(range(256)) * {k // 256} + bytes(range({k % 256})), offset={off})",
              ("ok" if k + off <= n else "err") if live else dead)
    elif op == 1:  # a round trip
        k = min(n, 4096)
        m.add(f"_x = bytes((i * 7 + 3) & 255 for i in range({k})); {name}.upload(_x); "
              f"assert {name}.download()[:{k}] == _x", "ok" if live else dead)
    elif op == 2:
        v = r.choice(["7", "0", "255", "256", "-1", "2**64", "'x'"])
        good = v in ("7", "0", "255")
        m.add(f"{name}.fill({v}); assert {name}.download(None, offset={max(n - 8, 0)}) == bytes([{v}]) * {min(n, 8)}"
              if good else f"{name}.fill({v})", ("ok" if good else "any") if live else dead)
    elif op == 3:  # download into a wrong-sized or read-only target
        dst = r.choice(["bytearray(8)", f"bytearray({n})", f"bytearray({n + 1})", "bytes(8)", "memoryview(bytearray(16))",
                        "(C.c_float * 4)()", "None", "object()"])
        m.add(f"{name}.download({dst}, offset={r.choice(['0', '1', str(n), str(n + 1), '-1'])})", "any" if live else dead)
    elif op == 4 and m.buffers:  # copy between buffers
        other = r.choice(sorted(m.buffers))
        o = m.buffers[other]
        m.add(f"{name}.copy_from({other})", ("ok" if o["size"] <= n and o["open"] and o["known"] else "any")
              if live else dead)
    elif op == 5:  # a view (held until deleted)
        v = f"v{len(m.holders)}"
        dt, ok = r.choice([("'u8'", True), ("'f32'", n >= 4), ("'f16'", n >= 2), ("'x9'", False), ("5", False)])
        shape = r.choice(["", ", None", f", ({n},)", ", (2, 2)", ", (0,)", ", ()", ", (-1,)"])
        m.add(f"{v} = {name}.view({dt}{shape})", "ok" if live and ok and shape in ("", ", None") else "any" if live else dead)
        m.holders[v] = name
        b["known"] = b["known"] and ok and shape in ("", ", None")
        b["holders"] += 1
    elif op == 6:  # a DLPack export, never consumed (or consumed by a TensorMap and dropped)
        v = f"d{len(m.holders)}"
        how = r.choice([f"{name}.__dlpack__()", f"{name}.__dlpack__(max_version=(1, 0))",
                        f"{name}.__dlpack__(stream={r.choice(['None', '-1', '1', '2', 'W.s.handle'])})"])
        m.add(f"{v} = {how}", "ok" if live and "stream=" not in how else "any" if live else dead)
        m.holders[v] = name
        b["known"] = b["known"] and "stream=" not in how
        b["holders"] += 1
    elif op == 7:  # an Args that holds it
        v = f"a{len(m.holders)}"
        m.add(f"{v} = W.full.clone(); {v}['p1'] = {name}", "ok" if live else dead)
        m.holders[v] = name
        b["holders"] += 1
    elif op == 8 and m.holders:  # drop a holder (views, exports, Args)
        v = r.choice(sorted(m.holders))
        m.add(f"del {v}", "any")
        b2 = m.buffers[m.holders.pop(v)]
        b2["holders"] -= 1
    elif op == 9:  # close: refused while held, then use after close
        m.add(f"{name}.close()", ("err" if b["holders"] else "ok") if live else "any")
        if live and not b["holders"]:
            b["open"] = False
            b["known"] = m.captures() == "no"  # a free during a capture: not measured
    elif op == 10 and n >= 4096:  # a TensorMap of a view, in an Args (which then holds the Buffer)
        v, i = f"m{len(m.holders)}", r.randrange(16)
        if r.random() < 0.6:
            m.add(f"{v} = W.mega.args(); {v}['maps[{i}]'] = g.TensorMap({name}.view('f32', (16, {n // 64})), (16, 16))",
                  "ok" if live else dead)
        else:  # re-pointed: a map and the work pointer moved onto the Buffer
            m.add(f"{v} = W.mega.args(); {v}['maps'] = [g.TensorMap(W.tensor(), (8, 16))] * 16; "
                  f"{v}.repoint({r.choice([repr(f'maps[{i}]'), repr('work'), repr('maps')])}, {name})",
                  "any" if live else dead)
            b["known"] = False
        m.holders[v] = name
        b["holders"] += 1
    else:
        meth = r.choice(["upload", "download", "fill", "view", "copy_from", "__dlpack__"])
        m.add(f"{name}.{meth}({value(r)}{'' if REAL else ', ' + r.choice(INTS)})", "any")
        b["known"] = False


class _Untested:
    """A Model whose add() passes every label through Model.untested (buffer steps)."""

    def __init__(self, m):
        self._m = m

    def __getattr__(self, k):
        return getattr(self._m, k)

    def add(self, code, expect):
        self._m.add(code, self._m.untested(expect))


def q_launch_buffer(m):
    """A launch whose pointer is a Buffer (kept alive by the Args; plain values keep nothing)."""
    r = m.r
    if not m.buffers or not m.streams:
        return q_buffer_op(m)
    bn, sn = r.choice(sorted(m.buffers)), r.choice(sorted(m.streams))
    b, s = m.buffers[bn], m.streams[sn]
    ok = b["open"] and b["known"] and s["open"] and s["known"]
    m.add(f"W.k.launch({r.choice(['1', '(2, 2)'])}, 64, [1, 2, 1.0, 2.0, {bn}, {bn}, 8, 16], stream={sn})",
          "ok" if ok else "err" if not b["open"] or not s["open"] else "any")
    if ok and s["capturing"]:
        s["kernels"] += 1
    elif not ok:
        s["known"] = False


SEQ_OPS = [q_stream, q_stream_op, q_stream_op, q_event_op, q_graph_op, q_buffer_op, q_buffer_op,
           q_launch_buffer]


def sequence(ops):
    def gen(r):
        m = Model(r)
        for _ in range(r.randrange(3, 16)):
            r.choice(ops)(m)
        return STEP.join(f"#{e}\n{c}" for c, e in m.steps), None
    return gen


CALLABLES = {
    "Layout": c_layout, "Layout(kw)": c_layout_kw, "Layout.field": c_field, "Layout.*": c_layout_misc,
    "Args": c_args_new, "Args.__setitem__": c_setitem, "Args.__getitem__": c_getitem,
    "Args.is_set": c_is_set, "Args.buffer/clone": c_buffer_clone, "Args.refresh": c_refresh,
    "Args.repoint": c_repoint, "TensorMap": c_tensormap, "TensorMap.describe": c_describe,
    "inspect": c_inspect, "status_name": c_status_name, "Context": c_context, "Context.load": c_load,
    "Module.kernel": c_kernel, "Kernel.launch": c_launch, "Kernel/Module/Context.*": c_kernel_misc,
    "seq streams+graphs": sequence([q_stream, q_stream_op, q_stream_op, q_graph_op, q_graph_op]),
    "seq events": sequence([q_stream, q_stream_op, q_event_op, q_event_op]),
    "seq buffers": sequence([q_buffer_op, q_buffer_op, q_launch_buffer, q_stream]),
    "seq mixed": sequence(SEQ_OPS),
}
# Public names the generators above cover (anything else public is fuzzed through GENERIC).
COVERED = {"Layout", "Layout.field", "Layout.leaves", "Args", "Args.is_set", "Args.buffer",
           "Args.clone", "Args.refresh", "Args.repoint", "TensorMap", "TensorMap.describe",
           "inspect", "status_name", "Context", "Context.load", "Context.synchronize",
           "Module.kernel", "Kernel.launch", "Kernel.args", "Context.compile", "Param", "Field"}


def public_callables():
    out = []
    for name in g.__all__:
        obj = getattr(g, name)
        if not callable(obj) or (isinstance(obj, type) and issubclass(obj, BaseException)):
            continue
        out.append(name)
        if isinstance(obj, type) and not hasattr(obj, "_fields"):
            out += [f"{name}.{m}" for m in vars(obj) if not m.startswith("_") and callable(getattr(obj, m))]
    return out


def generic(name):
    """A generator for a public callable no entry covers: random arguments by its signature, on
    an instance found in the World (or made by calling the class) for a method."""
    def gen(r):
        owner, _, meth = name.partition(".")
        target = f"g.{owner}"
        if meth:
            inst = {"Layout": "W.lay", "Args": "W.a", "Kernel": "W.k", "Module": "W.mod", "Context": "W.ctx",
                    "Buffer": "W.buf", "Event": "W.ev"}
            if not REAL:  # random set_args then launch: bench_args8 with idx < 0 writes anywhere
                inst["Graph"] = "W.graph"
            target = (inst.get(owner) or f"F.instance(W, g.{owner})") + f".{meth}"
        try:
            params = [p for p in pyinspect.signature(eval(f"g.{name}")).parameters.values()
                      if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        except (TypeError, ValueError):
            params = []
        parts = []
        for p in params:
            if p.default is not p.empty and r.random() < 0.5:
                continue
            v = r.choice([value(r), r.choice(INTS), stream_expr(r)])
            if REAL and p.name in STREAM_PARAMS:  # an int there is a handle the driver trusts
                v = stream_expr(r)
            parts.append(v if p.kind == p.POSITIONAL_ONLY or (p.kind == p.POSITIONAL_OR_KEYWORD and r.random() < 0.7)
                         and not any("=" in x for x in parts) else f"{p.name}={v}")
        return f"{target}({', '.join(parts)})", None
    return gen


STREAM_PARAMS = {"stream", "obj", "event_or_stream", "event", "stop", "start"}


def instance(world, cls):
    """An instance of cls made by the World's objects, for GENERIC's method calls (cached)."""
    cache = world.__dict__.setdefault("_instances", {})
    if cls not in cache:
        for attempt in ((), (world.ctx,), (0,), (world.k,)):
            try:
                cache[cls] = cls(*attempt)
                break
            except Exception:
                continue
        else:
            raise TypeError(f"fuzz_api: no instance of {cls.__name__} (add a World object)")
    return cache[cls]


def table():
    t = dict(CALLABLES)
    for name in public_callables():
        if name not in COVERED:
            t["generic " + name] = generic(name)
    return t

# --- one case ----------------------------------------------------------------------------------------


def make_case(seed, i, names):
    r = random.Random(f"{seed}:{i}")
    name = r.choice(names)
    snippet, checked = TABLE[name](r)
    return name, snippet, checked


class Violation(Exception):
    pass


LIVE = ("stream", "event", "graph", "exec", "memory", "library", "retain")


def live_counts():
    """The fake driver's live objects of each kind (the real one has none to show: None)."""
    return tuple(FAKE.fakecuda_live(k.encode()) for k in LIVE) if FAKE else None


def outcome_of(code, ns):
    """'value', 'Error' or 'TypeError' of one statement; Violation for anything else."""
    try:
        exec(code, ns)
        return "value"
    except Violation:
        raise
    except g.Error as e:
        if isinstance(e, OverflowError) and not isinstance(e, g.RangeError):
            raise Violation(f"an OverflowError that is no gclaunch.RangeError: {e!r}")
        try:
            str(e).encode("utf-8")
        except UnicodeError:
            raise Violation(f"a message that is no valid text: {e!r}")
        ns["__last__"] = repr(e)
        return "Error"
    except TypeError as e:
        ns["__last__"] = repr(e)
        return "TypeError"
    except NameError as e:
        if ns.get("__expect__") == "any":  # a name an earlier refused step did not bind
            return "unbound"
        raise Violation(f"NameError: {e}")
    except AssertionError as e:
        if ns.get("__expect__") == "any":  # a check on objects the model lost track of
            return "unchecked"
        raise Violation(f"a check failed: {e!r}")
    except BaseException as e:  # noqa: B902 -- the contract admits nothing else
        raise Violation(f"{type(e).__name__} outside the contract: {e!r}\n{traceback.format_exc()}")


def isolate(world, ns):
    """Nothing a case made outlives it (issue 55: a capture begun in one case made the next
    cases' allocations fail; a PE started by one kept NVSHMEM's heap for the rest of the batch).
    Its names are dropped with the objects GENERIC made for it, and collected (a Stream that is
    collected ends its capture; a symmetric Buffer frees itself); then no stream of this thread
    may still capture (an event query, which the driver refuses during a capture, must work) and
    a PE still running is stopped. Either left over is a finding."""
    ns.clear()
    world.__dict__.pop("_instances", None)
    for collected in (False, True):  # a collection (slow) only when something is left over
        try:
            world.probe.is_done
            if g.pe_context() is None:
                return
        except g.Error as e:
            if collected:
                raise Violation(f"a capture outlived the case (an event query after it: {e})")
        if not collected:
            gc.collect()
    if g.pe_context() is not None:
        try:
            g.pe_stop()
        except g.Error as e:
            raise Violation(f"a PE outlived the case and cannot be stopped: {e}")


def run_case(snippet, checked, world):
    """Runs one snippet and checks the contract; raises Violation with the reason. A sequence
    (steps joined by STEP, each opened by '#ok', '#err' or '#any') runs step by step, each held to
    its label; then, with its objects gone, the fake driver's live streams, events, graphs and
    memory must be back where they were (nothing leaked, nothing freed twice)."""
    before = world.leaves(getattr(world, checked)) if checked else None
    ns = {"W": world, "g": g, "T": T, "F": sys.modules[__name__], "C": C, "Stream": Stream,
          "TorchStream": TorchStream}
    if STEP not in snippet and not snippet.startswith("#"):
        out = outcome_of(snippet, ns)
        isolate(world, ns)
    else:
        live = live_counts()
        out = "sequence"
        for k, step in enumerate(snippet.split(STEP)):
            expect = step.split("\n", 1)[0][1:]
            ns["__expect__"] = expect
            got = outcome_of(step, ns)
            world.steps[(expect, got)] = world.steps.get((expect, got), 0) + 1
            if (expect == "ok" and got != "value") or (expect == "err" and got != "Error"):
                raise Violation(f"step {k} is labelled {expect!r} but gave {got}: {step.splitlines()[-1]}"
                                + (f" ({ns.get('__last__')})" if got != "value" else ""))
        isolate(world, ns)
        after = live_counts()
        if after != live:
            raise Violation("the fake driver's live objects changed over the sequence: "
                            + ", ".join(f"{k} {a} -> {b}" for k, a, b in zip(LIVE, live, after) if a != b))
        return out
    if checked and out != "value":
        after = world.leaves(getattr(world, checked))
        if repr(after) != repr(before):  # repr: nan equals nan
            diff = [(b, a) for b, a in zip(before, after) if repr(b) != repr(a)]
            raise Violation(f"a refused call changed the args: {diff[:3]}")
    return out


def reproducer(seed, i, name, snippet, checked, why):
    body = ("import os\nos.environ['GCL_FUZZ_DRIVER'] = 'real'  # the real driver\n" if REAL else "")
    body += SETUP.format(here=HERE) + f"\n# fuzz_api seed {seed} case {i} ({name}): {why.splitlines()[0] if why else ''}\n"
    body += f"print(F.run_case({snippet!r}, {checked!r}, W))\n"
    body += "del W\ngc.collect()\n"
    return body


def save(seed, i, text):
    os.makedirs(REGRESSIONS, exist_ok=True)
    path = os.path.join(REGRESSIONS, f"seed{seed}_case{i}.py")
    with open(path, "w") as f:
        f.write(text)
    return path

# --- batches in forked children ------------------------------------------------------------------


def child(seed, first, count, names, wfd):
    """Runs cases first ... first+count-1; writes 'case i' before each, then the outcome counts.
    Exit 0: all kept the contract; 3: a violation (reported on the pipe)."""
    out = os.fdopen(wfd, "w", buffering=1)
    world = World()
    counts, per = {}, {}
    if REAL:
        free_cold = device_free()
        warm_up(world)
        free0 = device_free()
        tol, how = leak_tolerance(world)
        out.write(f"warm_up_mb {(free_cold - free0) / 2**20:.1f}\n")
    for i in range(first, first + count):
        name, snippet, checked = make_case(seed, i, names)
        out.write(f"case {i}\n")
        try:
            o = run_case(snippet, checked, world)
        except Violation as v:
            out.write(f"violation {i} {str(v)!r}\n")
            os._exit(3)
        counts[o] = counts.get(o, 0) + 1
        per[name] = per.get(name, 0) + 1
    out.write("per " + " ".join(f"{n.replace(' ', '~')}={v}" for n, v in per.items()) + "\n")
    out.write("steps " + " ".join(f"{e}:{o}={v}" for (e, o), v in world.steps.items()) + "\n")
    if REAL:  # device memory: what the batch's cases made is gone with them
        world.__dict__.pop("_instances", None)
        gc.collect()
        world.ctx.synchronize()
        grown = (free0 - device_free()) / 2**20
        out.write(f"device_mb {grown:.1f}\n")
        if grown > tol:
            out.write(f"violation {first + count - 1} {f'device memory grew by {grown:.1f} MiB over cases {first} ... {first + count - 1} (tolerance {tol:.0f} MiB = {how})'!r}\n")
            os._exit(3)
    producer = world.p
    del world
    gc.collect()
    out.write("counts " + " ".join(f"{k}={v}" for k, v in sorted(counts.items())) + "\n")
    # deleters exactly once: with every object gone, each exported tensor's deleter ran once
    if producer.deleted != producer.exported:
        out.write(f"violation {first + count - 1} {f'deleters ran {producer.deleted} times for {producer.exported} exported tensors (cases {first} ... {first + count - 1})'!r}\n")
        os._exit(3)
    os._exit(0)


def device_free():
    """Free device memory in bytes (cuMemGetInfo through ctypes on the real libcuda, in the
    primary context of device 0, which this child retains); None with the fake driver."""
    if not REAL:
        return None
    cu = C.CDLL("libcuda.so.1")
    ctx, free, total = C.c_void_p(), C.c_size_t(), C.c_size_t()
    for call, args in (("cuInit", (0,)), ("cuDevicePrimaryCtxRetain", (C.byref(ctx), 0)),
                       ("cuCtxPushCurrent_v2", (ctx,)), ("cuMemGetInfo_v2", (C.byref(free), C.byref(total))),
                       ("cuCtxPopCurrent_v2", (C.byref(C.c_void_p()),))):
        rc = getattr(cu, call)(*args)
        if rc:
            raise RuntimeError(f"{call} returned {rc}")
    return free.value


def warm_up(world):
    """What the driver or NVSHMEM keeps until the process ends once it was used is made before
    the first measure, so it does not read as a leak (docs/testing.md, "device memory"): the
    first capture, graph launch, event and copies; the allocator's pools (one allocation of each
    power-of-two size class below 2 MiB, and a 64 MiB one); the code heap (every image the cases
    load, loaded and dropped); the local-memory reservation of every kernel the cases launch
    (bench_args8, launched here); NVSHMEM's host library and its one-time device state (its
    library loaded; where it is usable, one PE started, a symmetric Buffer, the PE stopped)."""
    s = world.ctx.create_stream()
    with s.capture() as gr:
        world.k.launch(1, 32, world.full, stream=s)
    gr.launch(s)
    e = s.record()
    b = world.ctx.alloc(64 << 20)
    b.upload(bytes(4096), stream=s)
    b.download(None, offset=(64 << 20) - 16)
    e.synchronize()
    s.synchronize()
    b.close(), gr.close(), s.close()
    pools = [world.ctx.alloc(1 << k) for k in range(21)]
    for p in pools:
        p.close()
    for image in IMAGES:
        world.ctx.load(T.kernel(image))
    if g.nvshmem_info()["found"]:
        try:
            world.ctx.pe_start()
            world.ctx.symmetric_alloc(1 << 20).close()
            g.pe_stop()
        except g.Error as err:  # a PE that cannot start here: the cases' pe_start fails too
            print(f"fuzz_api: warm-up: no PE ({err})", file=sys.stderr)
    del s, gr, e, b, pools
    gc.collect()
    world.ctx.synchronize()


IMAGES = ("launchcfg.sm_90.cubin", "megakernel.sm_90.cubin")  # what World and the cases load
GRANULE_MB = 2  # the driver's allocation and mapping granularity (2 MiB pages)


def leak_tolerance(world):
    """(MiB, how): the device memory a batch may keep without a leak, derived (docs/testing.md):
    at most one partly used 2 MiB block in each driver heap the cases use beyond what warm_up
    filled (device allocations, module code, graph execs, streams and events: 4 x 2 MiB), plus
    the local-memory reservation of a kernel the cases launch that warm_up did not (none now:
    bench_args8 is the only one; local bytes x 2048 threads x SMs each). Anything a case leaks is
    above it: the sequences' Buffers are 64 MiB, a leaked graph, module or stream per case grows
    by at least a block over a batch of 300. GCL_FUZZ_LEAK_MB overrides it."""
    if os.environ.get("GCL_FUZZ_LEAK_MB"):
        return float(os.environ["GCL_FUZZ_LEAK_MB"]), "GCL_FUZZ_LEAK_MB"
    heaps = 4 * GRANULE_MB
    sms = g.device_info(world.ctx.device).multiprocessors
    beyond = []  # the kernels the cases launch that warm_up did not: none (bench_args8 only)
    lmem = sum(k.attribute("local_bytes") * 2048 * sms for k in beyond) / 2**20
    return heaps + lmem, f"{heaps} MiB (4 heaps x {GRANULE_MB} MiB) + {lmem:.0f} MiB local memory"


BATCH_SECONDS = 300  # a batch runs in well under a second a case; past this it hangs


def run_batch(seed, first, count, names):
    """(cases run, failure or None). The World's producer is checked in the child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(BATCH_SECONDS)  # a call that waits (on a FIFO, say) ends as a crash: SIGALRM
        try:
            child(seed, first, count, names, w)
        except BaseException:
            traceback.print_exc()
            os._exit(4)
    os.close(w)
    lines = os.fdopen(r).read().splitlines()
    _, status = os.waitpid(pid, 0)
    last = first - 1
    for line in lines:
        if line.startswith("case "):
            last = int(line.split()[1])
    ran = last - first + 1
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return ran, None, lines
    violation = next((ln for ln in lines if ln.startswith("violation ")), None)
    why = (eval(violation.split(" ", 2)[2]) if violation else
           f"crash: {'signal %d' % os.WTERMSIG(status) if os.WIFSIGNALED(status) else 'exit %d' % os.WEXITSTATUS(status)}")
    return ran, (last, why), lines


def replay_regressions(env):
    files = sorted(f for f in os.listdir(REGRESSIONS) if f.endswith(".py")) if os.path.isdir(REGRESSIONS) else []
    bad = 0
    for f in files:
        p = subprocess.run([sys.executable, os.path.join(REGRESSIONS, f)], env=env, capture_output=True,
                           text=True, timeout=120)
        if p.returncode != 0:
            bad += 1
            print(f"fuzz_api: regression {f} FAILED (exit {p.returncode})\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return len(files), bad


TABLE = table()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--cases", type=int, default=0, help="stop after this many cases (0: by time)")
    ap.add_argument("--batch", type=int, default=300)
    ap.add_argument("--no-save", action="store_true", help="report crashes without saving them")
    ap.add_argument("--real", action="store_true", help="the real libcuda on a GPU (read at import)")
    o = ap.parse_args()
    seed = o.seed if o.seed is not None else random.SystemRandom().randrange(1, 2**31)
    names = sorted(TABLE)
    print(f"fuzz_api: {'the REAL driver' if REAL else 'the fake driver'}, seed {seed} (--seed {seed} replays it); {len(names)} callables: "
          + ", ".join(n for n in names if n.startswith("generic ")) or "no generic ones", flush=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(g.__path__[0]), HERE, env.get("PYTHONPATH", "")])
    # The saved regressions are fake-driver scripts (random handles included): CI replays them.
    replayed, failures = (0, 0) if REAL else replay_regressions(env)
    t0 = time.monotonic()
    first = total = 0
    counts, per, steps, grown, warm = {}, {}, {}, [], []
    while (o.cases and total < o.cases) or (not o.cases and time.monotonic() - t0 < o.seconds):
        n = min(o.batch, o.cases - total) if o.cases else o.batch
        ran, fail, lines = run_batch(seed, first, n, names)
        total += ran + (1 if fail else 0)
        for ln in lines:
            if ln.startswith("device_mb "):
                grown.append(float(ln.split()[1]))
            if ln.startswith("warm_up_mb "):
                warm.append(ln.split()[1])
            for tag, into in (("counts ", counts), ("per ", per), ("steps ", steps)):
                if ln.startswith(tag):
                    for kv in ln.split()[1:]:
                        k, v = kv.rsplit("=", 1)
                        into[k] = into.get(k, 0) + int(v)
        if fail and not any(ln.startswith("case ") for ln in lines):
            failures += 1  # the World itself could not be built (no device?): nothing can run
            print(f"fuzz_api: FAIL: a batch ended before its first case ({fail[1]}); see the traceback above")
            break
        if fail:
            i, why = fail
            failures += 1
            name, snippet, checked = make_case(seed, i, names)
            text = reproducer(seed, i, name, snippet, checked, why)
            where = "" if o.no_save else f" saved as {save(seed, i, text)}"
            print(f"fuzz_api: FAIL seed {seed} case {i} ({name}): {why}\n{textwrap.indent(snippet, '    ')}\n"
                  f"  reproducer{where}:\n{textwrap.indent(text, '    ')}", flush=True)
            first = i + 1
        else:
            first += n
    secs = time.monotonic() - t0
    print(f"fuzz_api: outcomes {' '.join(f'{k}={v}' for k, v in sorted(counts.items()))}")
    print("fuzz_api: executions per target (batches that ended in a failure not counted):")
    for k, v in sorted(per.items(), key=lambda kv: -kv[1]):
        print(f"  - {k.replace('~', ' ')}: {v}")
    print(f"fuzz_api: sequence steps label:outcome {' '.join(f'{k}={v}' for k, v in sorted(steps.items()))}")
    if REAL:
        print(f"fuzz_api: device memory kept by warm-up (MiB): {' '.join(warm) or 'none measured'}")
        print(f"fuzz_api: device memory per batch (MiB, tolerance derived per batch, docs/testing.md): "
              + (f"max {max(grown):.1f}, min {min(grown):.1f} over {len(grown)} batches" if grown else "no batch measured"))
    print(f"fuzz_api: {'ok' if failures == 0 else 'FAIL'} seed {seed}: {total} cases in {secs:.0f} s "
          f"({replayed} regressions replayed), {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
