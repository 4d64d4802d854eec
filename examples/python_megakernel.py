#!/usr/bin/env python3
"""A megakernel host in Python: 16 TMA descriptors in ONE grid-constant parameter, picked by a
run-time index on the device, encoded from torch views at non-zero storage offsets.

kernels/megakernel.cu's megakernel_globals_16 takes one struct (the shape of ThunderKittens'
globals or CUTLASS Params):
    struct Globals { TM maps[16]; const WorkItem *work; unsigned n_work; };
Each work item copies one box from maps[src] to maps[dst] (TMA load, then TMA store).

    PYTHONPATH=build/python python3 examples/python_megakernel.py [build]
"""
import os
import sys

import gclaunch as g

build = sys.argv[1] if len(sys.argv) > 1 else "build"
try:
    import torch
    ctx = g.Context(0)
except (ImportError, g.Error) as e:
    print(f"python_megakernel: needs torch and a CUDA GPU ({e}); the layout it would use:")
    lay = g.Layout("grid_constant struct{tensormap[16] maps, const void* work, u32 n_work} g", 90)
    for f in lay.leaves()[14:]:
        print(f"  {f.path:12s} offset {f.offset:5d} size {f.size:3d} {f.kind}")
    sys.exit(0)

k = ctx.load(os.path.join(build, "kernels", "megakernel.fatbin")).kernel(
    "megakernel_globals_16", "grid_constant struct{tensormap[16] maps, const void* work, u32 n_work} g")

# 8 sources: 32 x 64 float views into one allocation, each at a storage offset (byte_offset != 0)
big = torch.randn(8 * 32 + 1, 68, device="cuda")
srcs = [big[1 + 32 * i: 33 + 32 * i, 4:68] for i in range(8)]
out = torch.zeros(8, 32, 64, device="cuda")

args = k.args()
args["g.maps"] = ([g.TensorMap(s, (32, 64)) for s in srcs] +                        # maps 0-7: loads
                  [g.TensorMap(out[i], (32, 64), store=True) for i in range(8)])   # 8-15: stores
# WorkItem {src, dst, rank, bytes, sc[3], dc[3]}: copy tile i from map i to map 15 - i
work = torch.tensor([[i, 15 - i, 2, 32 * 64 * 4, 0, 0, 0, 0, 0, 0] for i in range(8)],
                    dtype=torch.int32, device="cuda")
args["g.work"], args["g.n_work"] = work, 8

k.launch(8, 32, args, stream=torch.cuda.current_stream())
torch.cuda.synchronize()
ok = all(torch.equal(out[7 - i], srcs[i]) for i in range(8))
print(f"python_megakernel: 8 tiles through 16 grid-constant descriptors: {'ok' if ok else 'WRONG'}")
sys.exit(0 if ok else 1)
