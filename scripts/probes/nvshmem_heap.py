"""Probe: which symmetric_alloc sizes NVSHMEM survives on this GPU (each size in its own child,
since a failing one may end the process). Prints one line per size: ok / refused (message) / died (status)."""
import multiprocessing as mp, os, sys
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
os.environ.setdefault("NVSHMEM_REMOTE_TRANSPORT", "none")

def child(n, q):
    import gclaunch as g
    ctx = g.Context(0)
    ctx.pe_start()
    try:
        b = ctx.symmetric_alloc(n)
        q.put(f"ok")
        b.close()
    except Exception as e:
        q.put(f"refused {type(e).__name__}: {e}")
    try:
        b = ctx.symmetric_alloc(1 << 20); b.close(); q.put("then 1 MiB ok")
    except Exception as e:
        q.put(f"then 1 MiB refused {e}")
    g.pe_stop()

if __name__ == "__main__":
    mp.set_start_method("spawn")
    for n in [1 << 30, 3 << 30, 16 << 30, 70 << 30, 100 << 30, 1 << 40, 2**63 - 1]:
        q = mp.Queue(); p = mp.Process(target=child, args=(n, q)); p.start(); p.join(120)
        msgs = []
        while not q.empty(): msgs.append(q.get())
        print(f"{n:>20} ({n / 2**30:.1f} GiB): exit {p.exitcode}; {msgs}", flush=True)
