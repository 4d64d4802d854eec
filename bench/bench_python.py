#!/usr/bin/env python3
"""Host cost of `import gclaunch` launches against C gcl_launch, cuda.core and CuPy (issue 26).

Same protocol as bench/launch.c and bench/peers.py (host submit time per launch, median of 15
repetitions of 2000 launches after warm-up, kernels/launchcfg.cu's bench_args8 re-setting one
argument per launch, a non-blocking stream), all Python peers in this one process:

  gclaunch Args        k.launch(1, 32, args, stream=h) after args[7] = i      (prepared Args)
  gclaunch values      k.launch(1, 32, [a, b, c, d, p0, p1, n, i], stream=h)  (8 plain values)
  ... and the same values with stream= a torch stream object, torch.cuda.current_stream()
  (fetched per launch, as users write it), a gclaunch.Stream, a CuPy and a cuda.core stream
  object, and with gclaunch Buffers as the two pointers
  cuda.core launch     peers.py's bench_cuda_core (numpy scalars + cuda.core Buffers, its own
                       non-blocking stream); also on torch's current stream with int pointers
  CuPy RawKernel       peers.py's bench_cupy
Targets (issue 32): values <= prepared + 150 ns; every gclaunch form ahead of cuda.core.
Targets (issue 56), against C gcl_launch measured in the same run (BUILD/bench/bench_launch run
once per run, between the Python peers, its case (a) "8 args", path "gcl_launch params"):
prepared Args <= 1.10x, plain values <= 1.15x, values with a foreign stream object (torch, CuPy,
cuda.core) <= 1.15x. The verdicts are printed, not asserted. (c) measures the same ratios in
pairs inside this process, against C's loop run by the extension (Kernel._launch_loop_c): the
drift between the bench_launch subprocess and the Python peers cancels there.

--fake: no GPU needed. The CPU side of the same calls against tests/fakecuda (GCL_LIBCUDA set to
BUILD/tests/fakecuda/libfakecuda.so): prepared Args vs 8 plain values vs values with Buffers and
stream objects, ns per launch; and Args.repoint of 240 maps per form of the addresses (a list of
ints, array.array, NumPy). The fake's launch is not the driver's: only the differences between
the forms (the argument conversion) mean anything; the numbers are labelled so.

and the megakernel's descriptors: 240 tensor maps from 240 torch views (bench_maps240's
tensormap[240]) set and launched, per iteration:

  gclaunch set+launch    args['m'] = [TensorMap(t, box) for t in views]; k.launch(...)
  gclaunch refresh       args.refresh('m', [...]) over views alternating between two buffers
  gclaunch repoint       args.repoint('m', [addresses]) (ints) + launch; and from host arrays of
                         the addresses (array.array('Q'), NumPy uint64, a torch int64 CPU tensor)
  cuda.core route        [StridedMemoryView(t, -1).as_tensor_map(box) for t in views] + one launch
  cuda.core replace      [d.replace_address(t) for d, t in ...] + one launch
  __dlpack__ alone       240 x t.__dlpack__(max_version, stream=-1): the producer's share

    python3 bench/bench_python.py BUILD [--runs R] [--launch-csv FILE] [--csv FILE] [--maps-only]

--maps-only: only (b); run it again with GCL_DLPACK_C_API=0 to time the __dlpack__ protocol path.

--launch-csv: bench_launch's CSV of the same call, for the ratios against C gcl_launch, instead of
running bench_launch in this run (then the C number comes from another run: say so when quoting).
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402  (the same protocol and the cuda.core / CuPy measurements)

ARGS8 = "i32 a, i32 b, f32 c, f32 d, const f32* p0, f32* p1, u64 n, i32 idx"
MAPS240 = "grid_constant tensormap[240] m, i32 idx, u64* out"
MAP_ITERS, MAP_REPS = 20, 11


def arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def ratio_lines(rows, gcl=None):
    """The issue's targets against the medians of rows (us)."""
    med = {k: peers.median(v) for k, v in rows.items()}
    core = med.get("cuda.core launch")
    prep = med.get("gclaunch Args")
    out = []
    if prep is not None:
        for name, us in med.items():
            if name.startswith("gclaunch values"):
                d = 1000 * (us - prep)
                out.append(f"  {name:45s} - prepared = {d:+7.0f} ns  (target <= +150: "
                           f"{'met' if d <= 150 else 'NOT met'})")
    if core:
        for name, us in med.items():
            if name.startswith("gclaunch"):
                out.append(f"  cuda.core / {name:45s} = {core / us:5.2f}x  "
                           f"({'ahead' if us < core else 'NOT ahead'})")
    if gcl:
        out.extend(c_ratio_lines(med, gcl))
    return out


# Issue 56: (row, target) of the Python launches against C gcl_launch; "foreign" rows are every
# "gclaunch values, <library> stream object" measured.
C_TARGETS = (("gclaunch Args", 1.10), ("gclaunch values", 1.15), ("foreign", 1.15))


def c_ratio_lines(med, gcl):
    out = []
    for row, target in C_TARGETS:
        names = [n for n in med if n.startswith("gclaunch values, ") and n.endswith("stream object")
                 and "current_stream" not in n] if row == "foreign" else [row]
        for name in names:
            if name not in med:
                out.append(f"  {name:45s} / C gcl_launch: not measured")
                continue
            r = med[name] / gcl
            out.append(f"  {name:45s} / C gcl_launch = {r:5.2f}x  (target <= {target:.2f}: "
                       f"{'met' if r <= target else 'NOT met'})")
    return out


def c_launch_run(build):
    """One run of bench_launch (C, this machine, now): its "8 args" gcl_launch params median (us),
    or None when it is not there or found no GPU."""
    exe = os.path.join(build, "bench", "bench_launch")
    if not os.path.exists(exe):
        print(f"C gcl_launch: not measured: {exe} is not built")
        return None
    with tempfile.NamedTemporaryFile(suffix=".csv") as f:
        r = subprocess.run([exe, "--runs", "1", "--no-graph", "--csv", f.name], capture_output=True,
                           text=True)
        if r.returncode != 0:
            print(f"C gcl_launch: bench_launch exited {r.returncode}: {r.stderr.strip()[-300:]}")
            return None
        return peers.launch_csv_medians(f.name).get("gcl_launch params")


def stream_objects(torch):
    """(name, stream object) of every library present, each a non-blocking stream."""
    objs = [("torch stream object", torch.cuda.Stream())]
    try:
        import cupy as cp
        objs.append(("CuPy stream object", cp.cuda.Stream(non_blocking=True)))
    except ImportError:
        pass
    try:
        try:
            from cuda.core import Device
        except ImportError:
            from cuda.core.experimental import Device
        dev = Device(0)
        dev.set_current()
        objs.append(("cuda.core stream object", dev.create_stream()))
    except ImportError:
        pass
    return objs


def cuda_core_torch_stream(torch, cubin):
    """cuda.core's launch on torch's current stream, numpy scalars and int pointers."""
    import numpy as np
    try:
        from cuda.core import Device, LaunchConfig, ObjectCode, launch
    except ImportError:
        from cuda.core.experimental import Device, LaunchConfig, ObjectCode, launch
    dev = Device(0)
    dev.set_current()
    stream = dev.create_stream(torch.cuda.current_stream())
    k = ObjectCode.from_cubin(open(cubin, "rb").read()).get_kernel("bench_args8")
    p0, p1 = torch.zeros(16, device="cuda"), torch.zeros(16, device="cuda")
    q0, q1 = np.uint64(p0.data_ptr()), np.uint64(p1.data_ptr())
    cfg = LaunchConfig(grid=1, block=32)
    a, b, c, d, n = np.int32(1), np.int32(2), np.float32(3), np.float32(4), np.uint64(5)

    def one(i):
        launch(stream, cfg, k, a, b, c, d, q0, q1, n, np.int32(i))

    return peers.timed(one, stream.sync)


class Launches:
    """bench_args8 on a torch stream: the kernel, prepared Args, the two buffers' addresses, and
    the forms (a) and (c) time (prepared(i), values_on(stream)(i))."""

    def __init__(self, g, torch, cubin):
        self.ctx = g.Context(0)
        self.k = self.ctx.load(cubin).kernel("bench_args8", ARGS8)
        self.bufs = torch.zeros(16, device="cuda"), torch.zeros(16, device="cuda")
        self.s = torch.cuda.Stream()
        self.h = self.s.cuda_stream
        self.a = self.k.args()
        self.p0a, self.p1a = (b.data_ptr() for b in self.bufs)
        for i, v in enumerate([1, 2, 3.0, 4.0, self.p0a, self.p1a, 5, 0]):
            self.a[i] = v

    def prepared(self):
        a, k, h = self.a, self.k, self.h

        def prepared(i):
            a[7] = i
            k.launch(1, 32, a, stream=h)
        return prepared

    def values_on(self, obj):
        k, p0a, p1a = self.k, self.p0a, self.p1a

        def values(i):
            k.launch(1, 32, [1, 2, 3.0, 4.0, p0a, p1a, 5, i], stream=obj)
        return values


def gclaunch_launches(g, torch, cubin):
    L = Launches(g, torch, cubin)
    ctx, k, s, h, a, p0a, p1a = L.ctx, L.k, L.s, L.h, L.a, L.p0a, L.p1a
    prepared = L.prepared()

    def values(i):
        k.launch(1, 32, [1, 2, 3.0, 4.0, p0a, p1a, 5, i], stream=h)

    r = {"gclaunch Args": peers.timed(prepared, s.synchronize),
         "gclaunch values": peers.timed(values, s.synchronize)}
    cur = torch.cuda.current_stream

    def values_current(i):
        k.launch(1, 32, [1, 2, 3.0, 4.0, p0a, p1a, 5, i], stream=cur())

    r["gclaunch values, torch.cuda.current_stream()"] = peers.timed(values_current, torch.cuda.synchronize)
    gs = g.Stream.from_handle(s)

    def values_gclaunch_stream(i):
        k.launch(1, 32, [1, 2, 3.0, 4.0, p0a, p1a, 5, i], stream=gs)

    r["gclaunch values, gclaunch.Stream"] = peers.timed(values_gclaunch_stream, s.synchronize)
    for name, obj in stream_objects(torch):
        sync = torch.cuda.synchronize

        def values_obj(i, obj=obj):
            k.launch(1, 32, [1, 2, 3.0, 4.0, p0a, p1a, 5, i], stream=obj)

        r[f"gclaunch values, {name}"] = peers.timed(values_obj, sync)
    b0, b1 = ctx.alloc(64), ctx.alloc(64)

    def values_buffers(i):
        k.launch(1, 32, [1, 2, 3.0, 4.0, b0, b1, 5, i], stream=h)

    r["gclaunch values, gclaunch Buffers"] = peers.timed(values_buffers, s.synchronize)
    return r


def fake_profile(build, runs):
    """The CPU side against tests/fakecuda: ns per launch of each form (fake-driver numbers)."""
    import ctypes as C
    fake = os.path.join(build, "tests", "fakecuda", "libfakecuda.so")
    lib = C.CDLL(fake)
    import gclaunch as g
    cubin = os.path.join(build, "kernels", "launchcfg.sm_90.cubin")
    info = next(k for k in g.inspect(cubin) if k["name"] == "bench_args8")
    n = len(info["params"])
    off = (C.c_size_t * n)(*[p["offset"] for p in info["params"]])
    size = (C.c_size_t * n)(*[p["size"] for p in info["params"]])
    lib.fakecuda_set_params(b"bench_args8", n, off, size)
    ctx = g.Context(0)
    k = ctx.load(cubin).kernel("bench_args8", ARGS8)
    s = ctx.create_stream()
    h = s.handle
    b0, b1 = ctx.alloc(64), ctx.alloc(64)
    p0, p1 = b0.ptr, b1.ptr
    a = k.args()
    for i, v in enumerate([1, 2, 3.0, 4.0, p0, p1, 5, 0]):
        a[i] = v

    class Foreign:
        def __cuda_stream__(self):
            return (0, h)

    foreign = Foreign()

    def prepared(i):
        a[7] = i
        k.launch(1, 32, a, stream=h)

    def prepared_only_launch(i):
        k.launch(1, 32, a, stream=h)

    vals8 = [1, 2, 3.0, 4.0, p0, p1, 5, 0]
    keys = range(8)

    def convert_only(i):  # the conversion without the fake's launch (its 32 KB record copy)
        for j in keys:
            a[j] = vals8[j]

    def loop_only(i):  # the same loop storing into a list: the interpreter's share of convert_only
        for j in keys:
            vals8[j] = vals8[j]

    forms = {
        "8 x args[j] = v, no launch": convert_only,
        "8 x list[j] = v, no launch (baseline)": loop_only,
        "prepared Args (args[7] = i; launch)": prepared,
        "prepared Args, launch alone": prepared_only_launch,
        "prepared Args, gclaunch.Stream": lambda i: k.launch(1, 32, a, stream=s),
        "prepared Args, __cuda_stream__ object": lambda i: k.launch(1, 32, a, stream=foreign),
        "prepared Args, stream=None": lambda i: k.launch(1, 32, a),
        "8 plain values, int stream": lambda i: k.launch(1, 32, [1, 2, 3.0, 4.0, p0, p1, 5, i], stream=h),
        "8 plain values, gclaunch.Stream": lambda i: k.launch(1, 32, [1, 2, 3.0, 4.0, p0, p1, 5, i], stream=s),
        "8 plain values, __cuda_stream__ object": lambda i: k.launch(1, 32, [1, 2, 3.0, 4.0, p0, p1, 5, i], stream=foreign),
        # a new object per launch, as torch.cuda.current_stream() gives one
        "8 plain values, new __cuda_stream__ object": lambda i: k.launch(1, 32, [1, 2, 3.0, 4.0, p0, p1, 5, i], stream=Foreign()),
        "8 values, 2 gclaunch Buffers": lambda i: k.launch(1, 32, [1, 2, 3.0, 4.0, b0, b1, 5, i], stream=h),
    }
    rows = {}
    for _ in range(runs):
        for name, fn in forms.items():
            rows.setdefault(name, []).append(peers.timed(fn, lambda: None) * 1000)
    print(f"FAKE DRIVER (tests/fakecuda, no GPU): CPU-side ns per launch, median of {runs} runs "
          f"(each the median of {peers.REPS} x {peers.LAUNCHES}); only differences between forms "
          "are meaningful")
    conv = peers.median(rows["8 x args[j] = v, no launch"]) - peers.median(rows["8 x list[j] = v, no launch (baseline)"])
    print(f"  converting 8 values (args[j] = v minus the loop): {conv:.0f} ns (fake-driver build, this machine)")
    base = peers.median(rows["prepared Args (args[7] = i; launch)"])
    for name, per in rows.items():
        med = peers.median(per)
        print(f"  {name:42s} {med:8.0f} ns  ({med - base:+6.0f} ns vs prepared)  runs: "
              f"{' '.join(f'{u:.0f}' for u in per)}")
    fake_repoints(g, lib, ctx, os.path.join(build, "kernels", "launchcfg.sm_90.cubin"))
    return 0


def repoint_forms(addrs):
    """The forms a repoint of many maps takes: a list of ints, and host arrays of uint64 (one block,
    no Python int per address)."""
    import array
    forms = {"list of ints": addrs, "array.array('Q')": [array.array("Q", a) for a in addrs]}
    forms["list of ints"] = addrs
    try:
        import numpy as np
        forms["numpy uint64"] = [np.array(a, dtype=np.uint64) for a in addrs]
    except ImportError:
        pass
    return forms


def fake_repoints(g, lib, ctx, cubin):
    """Args.repoint of bench_maps240's 240 maps against the fake driver, per form of the addresses
    (no launch): us per call and ns per map (fake-driver numbers: the fake's replace is a C call
    like the driver's, so the differences between forms are the extension's)."""
    import ctypes as C
    info = next(k for k in g.inspect(cubin) if k["name"] == "bench_maps240")
    n = len(info["params"])
    lib.fakecuda_set_params(b"bench_maps240", n, (C.c_size_t * n)(*[p["offset"] for p in info["params"]]),
                            (C.c_size_t * n)(*[p["size"] for p in info["params"]]))
    k = ctx.load(cubin).kernel("bench_maps240", MAPS240)
    tile = 64 * 64 * 4
    mem = ctx.alloc(2 * 240 * tile)
    a = k.args()
    a["m"] = [g.TensorMap(mem.view("f32", (64, 64)), (64, 64))] * 240
    a["idx"], a["out"] = 1, mem.ptr
    addrs = [[mem.ptr + (s * 240 + i) * tile for i in range(240)] for s in range(2)]
    print(f"  repoint of 240 maps (Args.repoint, no launch), median of {MAP_REPS} x {MAP_ITERS}:")
    for name, sets in repoint_forms(addrs).items():
        try:
            us = per_iteration(lambda i, sets=sets: a.repoint("m", sets[i & 1]), lambda: None)
        except (TypeError, g.Error) as e:  # an older gclaunch takes only lists
            print(f"    {name:20s} not taken: {type(e).__name__}: {e}")
            continue
        print(f"    {name:20s} {us:8.2f} us  {1000 * us / 240:6.1f} ns/map")


def per_iteration(fn, sync):
    """Median us per call of fn over MAP_REPS repetitions of MAP_ITERS calls (after warm-up)."""
    for _ in range(3):
        fn(0)
    sync()
    per = []
    for r in range(MAP_REPS):
        t0 = time.perf_counter()
        for i in range(MAP_ITERS):
            fn(i)
        per.append((time.perf_counter() - t0) / MAP_ITERS)
        sync()
    return peers.median(per) * 1e6


def views240(torch, buf):
    # 240 views of 64 x 64 floats with a 68-float pitch and a 16-byte storage offset each
    return [buf[i * 64 * 68 + 4:].as_strided((64, 64), (68, 1)) for i in range(240)]


def maps240(g, torch, cubin):
    ctx = g.Context(0)
    k = ctx.load(cubin).kernel("bench_maps240", MAPS240)
    s = torch.cuda.Stream()
    h = s.cuda_stream
    bufs = [torch.zeros(240 * 64 * 68 + 64, device="cuda") for _ in range(2)]
    sets = [views240(torch, b) for b in bufs]
    out = torch.zeros(4, dtype=torch.int64, device="cuda")
    a = k.args()
    a["idx"], a["out"] = 1, out.data_ptr()
    box = (64, 64)
    r = {}

    def set_launch(i):
        a["m"] = [g.TensorMap(t, box) for t in sets[i & 1]]
        k.launch(1, 32, a, stream=h)

    def refresh_launch(i):
        a.refresh("m", [g.TensorMap(t, box) for t in sets[i & 1]])
        k.launch(1, 32, a, stream=h)

    addrs = [[t.data_ptr() for t in v] for v in sets]

    def repoint_launch(i):
        a.repoint("m", addrs[i & 1])
        k.launch(1, 32, a, stream=h)

    forms = repoint_forms(addrs)
    forms["torch int64 (CPU)"] = [torch.tensor(x, dtype=torch.int64) for x in addrs]

    def producer(i):
        for t in sets[i & 1]:
            t.__dlpack__(max_version=(1, 3), stream=-1)

    r["gclaunch set 240 maps + launch"] = per_iteration(set_launch, s.synchronize)
    r["gclaunch refresh 240 maps + launch"] = per_iteration(refresh_launch, s.synchronize)
    r["gclaunch repoint 240 maps + launch"] = per_iteration(repoint_launch, s.synchronize)
    for name, sets_ in forms.items():
        if name != "list of ints":
            r[f"gclaunch repoint 240 maps from {name} + launch"] = per_iteration(
                lambda i, x=sets_: (a.repoint("m", x[i & 1]), k.launch(1, 32, a, stream=h)), s.synchronize)
    r["torch __dlpack__ x 240 alone"] = per_iteration(producer, s.synchronize)
    a["m"] = [g.TensorMap(t, box) for t in sets[0]]
    a["idx"] = 1
    r["gclaunch launch alone (tensormap[240])"] = peers.timed(lambda i: k.launch(1, 32, a, stream=h), s.synchronize)
    return r, sets, box


def cuda_core_maps(cubin, sets, box):
    try:
        from cuda.core import Device, LaunchConfig, ObjectCode, launch
        from cuda.core.utils import StridedMemoryView
    except ImportError:
        from cuda.core.experimental import Device, LaunchConfig, ObjectCode, launch
        from cuda.core.experimental.utils import StridedMemoryView
    import numpy as np
    dev = Device(0)
    dev.set_current()
    stream = dev.create_stream()
    k = ObjectCode.from_cubin(open(cubin, "rb").read()).get_kernel("bench_args8")
    b0, b1 = dev.allocate(64, stream=stream), dev.allocate(64, stream=stream)
    cfg = LaunchConfig(grid=1, block=32)
    a, b, c, d, n = np.int32(1), np.int32(2), np.float32(3), np.float32(4), np.uint64(5)

    def as_map(t):
        v = StridedMemoryView(t, stream_ptr=-1)
        try:
            return v.as_tensor_map(box_dim=box)
        except TypeError:
            try:
                from cuda.core import TensorMapDescriptorOptions
            except ImportError:
                from cuda.core.experimental import TensorMapDescriptorOptions
            try:
                return v.as_tensor_map(TensorMapDescriptorOptions(box_dim=box))
            except TypeError:
                return v.as_tensor_map(options=TensorMapDescriptorOptions(box_dim=box))

    descs = [as_map(t) for t in sets[0]]

    def route(i):
        ds = [as_map(t) for t in sets[i & 1]]
        launch(stream, cfg, k, a, b, c, d, b0, b1, n, np.int32(i))
        return ds

    def replace(i):
        for dsc, t in zip(descs, sets[i & 1]):
            dsc.replace_address(t)
        launch(stream, cfg, k, a, b, c, d, b0, b1, n, np.int32(i))

    return {"cuda.core as_tensor_map x 240 + launch": per_iteration(route, stream.sync),
            "cuda.core replace_address x 240 + launch": per_iteration(replace, stream.sync)}


def launch_runs(g, torch, build, cubin, runs, launch_csv):
    """(a): every peer, run by run (C gcl_launch first in each run unless --launch-csv); prints the
    table and the targets. Returns (rows, C runs)."""
    rows, c_runs = {}, []
    for run in range(runs):  # the peers interleaved, run by run
        if not launch_csv:
            us = c_launch_run(build)  # C in the same run, between the Python peers
            if us:
                c_runs.append(us)
        try:
            for name, us in gclaunch_launches(g, torch, cubin).items():
                rows.setdefault(name, []).append(us)
        except Exception as e:
            print(f"gclaunch launches: FAILED: {type(e).__name__}: {e}")
        for name, fn in (("cuda.core launch", peers.bench_cuda_core),
                         ("cuda.core launch, torch current stream, int pointers",
                          lambda c: cuda_core_torch_stream(torch, c)),
                         ("cupy RawKernel", peers.bench_cupy)):
            try:
                rows.setdefault(name, []).append(fn(cubin))
            except Exception as e:  # a missing peer is reported, not timed
                print(f"{name}: not measured: {type(e).__name__}: {e}")
    gcl = None
    if launch_csv:
        gcl = peers.launch_csv_medians(launch_csv).get("gcl_launch params")
        print(f"same call, bench_launch case (a) 8 args: C gcl_launch {gcl:.3f} us (from {launch_csv})")
    elif c_runs:
        gcl = peers.median(c_runs)
        print(f"same call, same run, bench_launch case (a) 8 args: C gcl_launch {gcl:.3f} us  runs: "
              f"{' '.join(f'{u:.3f}' for u in c_runs)}")
    if rows:
        print("\n(a) 8-argument kernel, us per launch (median of runs; each run the median of 15 x 2000)")
    for name, per in rows.items():
        ratio = f"{peers.median(per) / gcl:5.2f}x C gcl_launch" if gcl else ""
        print(f"  {name:55s} {peers.median(per):7.3f} us  {ratio}  runs: {' '.join(f'{u:.3f}' for u in per)}")
    if rows:
        print("\n(a) against the targets")
        print("\n".join(ratio_lines(rows, gcl)))
    return rows, c_runs


PAIRS = 61


def paired_ratios(g, torch, cubin, pairs=PAIRS):
    """(c): each Python form against C's loop in this process, in pairs. A pair is one repetition of
    2000 C launches (Kernel._launch_loop_c: gcl_args_set_i32 + gcl_launch in C, no Python between
    launches, bench_launch's "gcl_launch params") and one of 2000 Python launches, in alternating
    order, each after a synchronize; the ratio is the median over the pairs of Python / C. Both
    halves of a pair run on the same machine state, so the drift between runs that the bench_launch
    subprocess of (a) sees cancels. Returns {form: (median ratio, median Python us, median C us)}."""
    L = Launches(g, torch, cubin)
    ctx, k, s, h, a, p0a, p1a = L.ctx, L.k, L.s, L.h, L.a, L.p0a, L.p1a
    prepared = L.prepared()

    values_on = L.values_on
    forms = [("gclaunch Args", prepared), ("gclaunch values", values_on(h)),
             ("gclaunch values, gclaunch.Stream", values_on(g.Stream.from_handle(s)))]
    forms += [(f"gclaunch values, {name}", values_on(obj)) for name, obj in stream_objects(torch)]
    n = peers.LAUNCHES

    def c_rep():
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        k._launch_loop_c(a, 7, n, stream=h)
        t = (time.perf_counter() - t0) / n
        torch.cuda.synchronize()
        return t

    def py_rep(fn):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(n):
            fn(i)
        t = (time.perf_counter() - t0) / n
        torch.cuda.synchronize()
        return t

    out = {}
    for name, fn in forms:
        c_rep(), py_rep(fn)  # warm-up
        ratios, py, c = [], [], []
        for r in range(pairs):
            if r % 2:
                tp, tc = py_rep(fn), c_rep()
            else:
                tc, tp = c_rep(), py_rep(fn)
            ratios.append(tp / tc), py.append(tp * 1e6), c.append(tc * 1e6)
        out[name] = (peers.median(ratios), peers.median(py), peers.median(c))
    return out


def paired_report(g, torch, cubin):
    """(c), printed with the issue-56 targets."""
    try:
        r = paired_ratios(g, torch, cubin)
    except Exception as e:
        print(f"paired ratios: FAILED: {type(e).__name__}: {e}")
        return {}
    print(f"\n(c) paired in this process: Python / C's loop (Kernel._launch_loop_c), median of "
          f"{PAIRS} pairs of {peers.LAUNCHES} launches each")
    for name, (ratio, py, c) in r.items():
        target = 1.10 if name == "gclaunch Args" else 1.15
        verdict = "" if name.endswith("gclaunch.Stream") else \
            f"  (target <= {target:.2f}: {'met' if ratio <= target else 'NOT met'})"
        print(f"  {name:45s} {ratio:5.3f}x  Python {py:6.3f} us, C {c:6.3f} us{verdict}")
    return r


def maps_report(g, torch, cubin):
    """(b): the 240 tensor maps; prints them. Returns the rows, or None when gclaunch's failed."""
    try:
        r, sets, box = maps240(g, torch, cubin)
    except Exception as e:
        print(f"gclaunch maps: FAILED: {type(e).__name__}: {e}")
        return None
    try:
        r.update(cuda_core_maps(cubin, sets, box))
    except Exception as e:
        print(f"cuda.core maps: not measured: {type(e).__name__}: {e}")
    print(f"\n(b) 240 tensor maps from torch views + launch, us per iteration (median of {MAP_REPS} x {MAP_ITERS})")
    for name, us in r.items():
        print(f"  {name:45s} {us:9.1f} us   {1000 * us / 240:7.1f} ns/map")
    core = r.get("cuda.core as_tensor_map x 240 + launch")
    ours = r["gclaunch set 240 maps + launch"]
    own = (ours - r["torch __dlpack__ x 240 alone"] - r["gclaunch launch alone (tensormap[240])"]) / 240
    print(f"  gclaunch's own share per map (set+launch minus __dlpack__ and the launch): {1000 * own:.1f} ns")
    if core:
        print(f"  cuda.core route / gclaunch set+launch = {core / ours:.1f}x")
    return r


def write_csv(csv, rows, maps, c_runs, paired):
    with open(csv, "w") as f:
        f.write("case,us,run\n")
        for name, per in rows.items():
            for i, us in enumerate(per):
                f.write(f"{name},{us:.3f},{i + 1}\n")
        for name, us in maps.items():
            f.write(f"{name},{us:.3f},1\n")
        for i, us in enumerate(c_runs):
            f.write(f"C gcl_launch,{us:.3f},{i + 1}\n")
        for name, (ratio, py, c) in paired.items():
            f.write(f"paired ratio {name} / C loop,{ratio:.4f},1\n")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = sys.argv[1]
    cubin = os.path.join(build, "kernels", "launchcfg.sm_90.cubin")
    runs, launch_csv, csv = int(arg("--runs", "3")), arg("--launch-csv"), arg("--csv")
    if "--fake" in sys.argv:
        os.environ["GCL_LIBCUDA"] = os.path.join(build, "tests", "fakecuda", "libfakecuda.so")
        return fake_profile(build, runs)
    try:
        import torch
    except ImportError:
        print("bench_python.py: the GPU comparison needs torch (and a GPU); --fake times the CPU side "
              "against tests/fakecuda")
        return 2
    import gclaunch as g
    print(f"gclaunch {g.__version__} (abi3 extension) on Python {sys.version.split()[0]}, "
          f"torch {torch.__version__}, {torch.cuda.get_device_name()}, "
          f"DLPack C exchange API {'on' if g.dlpack_c_api else 'off'}"
          f"{'' if hasattr(torch.Tensor, '__dlpack_c_exchange_api__') else ' (torch has none)'}")
    rows, c_runs = launch_runs(g, torch, build, cubin, 0 if "--maps-only" in sys.argv else runs,
                               launch_csv)
    paired = paired_report(g, torch, cubin)
    maps = maps_report(g, torch, cubin)
    if maps is None:
        return 1
    if csv:
        write_csv(csv, rows, maps, c_runs, paired)
    return 0


if __name__ == "__main__":
    sys.exit(main())
