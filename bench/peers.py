#!/usr/bin/env python3
"""Launch cost of the Python peers on the kernel bench_launch uses for case (a).

Host submit time per launch of kernels/launchcfg.cu's bench_args8 (8 scalars/pointers), each
launch re-setting one argument, median of 15 repetitions of 2000 launches after warm-up -- the
same protocol as bench/launch.c, so the numbers sit beside its table (compare within one run of
the same machine; these machines are noisy).

    python3 bench/peers.py build/kernels/launchcfg.sm_90.cubin [--csv FILE]

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


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cubin = sys.argv[1]
    csv = sys.argv[sys.argv.index("--csv") + 1] if "--csv" in sys.argv else None
    rows = []
    for name, fn in (("cupy RawKernel", bench_cupy), ("cuda.core launch", bench_cuda_core)):
        try:
            us = fn(cubin)
            rows.append((name, us))
            print(f"{name:18s} (a) 8 scalars/pointers: {us:6.2f} us/launch")
        except Exception as e:  # a missing or incompatible peer is reported, not timed
            print(f"{name:18s} not measured: {type(e).__name__}: {e}")
    if csv:
        with open(csv, "w") as f:
            f.write("peer,case,us_per_launch\n")
            for name, us in rows:
                f.write(f"{name},args8,{us:.3f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
