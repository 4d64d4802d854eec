#!/usr/bin/env python3
"""Launch cost of the Python peers on the kernel bench_launch uses for case (a).

Host submit time per launch of kernels/launchcfg.cu's bench_args8 (8 scalars/pointers), each
launch re-setting one argument, median of 15 repetitions of 2000 launches after warm-up -- the
same protocol as bench/launch.c, so the numbers sit beside its table (compare within one run of
the same machine; these machines are noisy).

    python3 bench/peers.py build/kernels/launchcfg.sm_90.cubin [--csv FILE] [--runs R]
                           [--launch-csv FILE]

--runs R repeats each peer's measurement R times (as bench_launch --runs) and prints every run
and the spread. --launch-csv reads the CSV bench_launch wrote in the same call and prints each
peer's median against gcl_launch (kernelParams) and the fastest raw path on the same kernel.

Peers: CuPy RawModule/RawKernel, cuda.core launch(). A peer that is not installed is reported as
such, not timed. Neither can pass a by-value array of tensor maps, so cases (b) and (c) of
bench_launch have no peer row.
"""
import sys
import time

REPS, LAUNCHES, WARMUP = 15, 2000, 200


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def timed(launch_one, sync):
    for i in range(WARMUP):
        launch_one(i)
    sync()
    per = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        for i in range(LAUNCHES):
            launch_one(i)
        per.append((time.perf_counter() - t0) / LAUNCHES)
        sync()
    return median(per) * 1e6


def bench_cupy(cubin):
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(path=cubin)
    k = mod.get_function("bench_args8")
    p0 = cp.zeros(16, dtype=cp.float32)
    p1 = cp.zeros(16, dtype=cp.float32)
    stream = cp.cuda.Stream(non_blocking=True)
    a, b, c, d, n = np.int32(1), np.int32(2), np.float32(3), np.float32(4), np.uint64(5)

    def one(i):
        k((1,), (32,), (a, b, c, d, p0, p1, n, np.int32(i)), stream=stream)

    return timed(one, stream.synchronize)


def bench_cuda_core(cubin):
    import numpy as np

    try:
        from cuda.core import Device, LaunchConfig, ObjectCode, launch
    except ImportError:
        from cuda.core.experimental import Device, LaunchConfig, ObjectCode, launch
    dev = Device(0)
    dev.set_current()
    stream = dev.create_stream()
    code = ObjectCode.from_cubin(open(cubin, "rb").read())
    k = code.get_kernel("bench_args8")
    buf0 = dev.allocate(64, stream=stream)
    buf1 = dev.allocate(64, stream=stream)
    cfg = LaunchConfig(grid=1, block=32)
    a, b, c, d, n = np.int32(1), np.int32(2), np.float32(3), np.float32(4), np.uint64(5)

    def one(i):
        launch(stream, cfg, k, a, b, c, d, buf0, buf1, n, np.int32(i))

    return timed(one, stream.sync)


def arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def launch_csv_medians(path):
    """Median over runs of case '8 args' per path, from bench_launch's CSV."""
    per = {}
    with open(path) as f:
        next(f)
        for line in f:
            case, path_name, us = line.split(",")[:3]
            if case == "8 args":
                per.setdefault(path_name, []).append(float(us))
    return {k: median(v) for k, v in per.items()}


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cubin = sys.argv[1]
    csv, runs, launch_csv = arg("--csv"), int(arg("--runs", "1")), arg("--launch-csv")
    rows = []
    for name, fn in (("cupy RawKernel", bench_cupy), ("cuda.core launch", bench_cuda_core)):
        try:
            per_run = [fn(cubin) for _ in range(runs)]
            rows.append((name, per_run))
            spread = 100.0 * (max(per_run) / min(per_run) - 1)
            print(f"{name:18s} (a) 8 scalars/pointers: {median(per_run):6.2f} us/launch "
                  f"(runs: {' '.join(f'{u:.2f}' for u in per_run)}; spread {spread:.1f}%)")
        except Exception as e:  # a missing or incompatible peer is reported, not timed
            print(f"{name:18s} not measured: {type(e).__name__}: {e}")
    if launch_csv and rows:
        m = launch_csv_medians(launch_csv)
        gcl = m.get("gcl_launch params")
        raw = min(m.get(k, float("inf")) for k in
                  ("cuLaunchKernel params", "cuLaunchKernel extra", "cuLaunchKernelEx",
                   "cuLaunchKernelEx extra"))
        print(f"same call, bench_launch case (a): gcl_launch {gcl:.3f} us, fastest raw {raw:.3f} us")
        for name, per_run in rows:
            print(f"{name:18s} / gcl_launch = {median(per_run) / gcl:.2f}x, "
                  f"/ fastest raw = {median(per_run) / raw:.2f}x")
    if csv:
        with open(csv, "w") as f:
            f.write("peer,case,us_per_launch,run\n")
            for name, per_run in rows:
                for r, us in enumerate(per_run):
                    f.write(f"{name},args8,{us:.3f},{r + 1}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
