#!/usr/bin/env python3
"""Plots bench_descriptors' CSV: bandwidth against K per placement, one panel per dtype x tile.

usage: plot_descriptors.py descriptors.csv out.png   (needs matplotlib; the H200 image has it)
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
    panels = defaultdict(lambda: defaultdict(list))
    copy = {}
    for r in rows:
        key = (r["dtype"], f'{r["box_w"]}x{r["box_h"]}')
        panels[key][r["placement"]].append((int(r["k"]), float(r["GBps"])))
        copy[key] = float(r["memcpy_GBps"])
    def tile_key(key):
        w, h = key[1].split("x")
        return (key[0], int(w) * int(h), int(w))

    keys = sorted(panels, key=tile_key)
    cols = 4
    nrows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3.2 * nrows), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        for placement, pts in sorted(panels[key].items()):
            pts.sort()
            ax.plot([k for k, _ in pts], [g for _, g in pts], marker="o", label=placement)
        ax.axhline(copy[key], color="gray", linestyle="--", label="cuMemcpyDtoD")
        ax.set_xscale("log", base=2)
        ax.set_title(f"{key[0]} tile {key[1]}")
        ax.set_xlabel("descriptors K")
        ax.set_ylabel("GB/s (read + written)")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle("TMA copy bandwidth by descriptor placement (H200)")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
