#!/usr/bin/env python3
"""Figures and tables from bench_descriptors' CSVs (issue 27).

  plot_descriptors.py plot TABLE.csv [RELAUNCH.csv] OUTDIR
      one figure per tile size, OUTDIR/descriptors_<N>k.png: bandwidth against K, one line per
      placement, one panel per work order, cuMemcpyDtoD as the ceiling; with RELAUNCH.csv also
      OUTDIR/descriptors_relaunch.png (time per step against K). Needs matplotlib.
  plot_descriptors.py tables TABLE.csv [RELAUNCH.csv]
      the Markdown tables of bench/RESULTS.md (no matplotlib needed).
"""
import csv
import sys
from collections import defaultdict

PLACEMENTS = ["P", "S", "G", "G+prefetch", "D", "H", "T"]  # T: gcl_tensormap_table
ORDERS = ["tensor", "shuffled"]
COLORS = {"P": "tab:blue", "S": "tab:orange", "G": "tab:green", "G+prefetch": "tab:olive",
          "D": "tab:purple", "H": "tab:brown", "T": "tab:red"}  # the same colour for a placement in every figure


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def by_tile(rows):
    """{tile_bytes: {order: {placement: [(k, GBps)]}}} and {tile_bytes: {order: {k: memcpy}}}."""
    lines = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    copy = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        t, o, k = int(r["tile_bytes"]), r["order"], int(r["k"])
        lines[t][o][r["placement"]].append((k, float(r["GBps"])))
        copy[t][o][k] = float(r["memcpy_GBps"])
    return lines, copy


def k_axis(ax, ks):
    """log2 K axis, ticks at the measured K."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks)
    ax.set_xticklabels([str(k) for k in ks])
    ax.minorticks_off()
    ax.set_xlabel("descriptors K")


def plot_tile(plt, tile, lines, copy, out):
    fig, axes = plt.subplots(1, len(ORDERS), figsize=(11, 4.2), sharey=True)
    for ax, order in zip(axes, ORDERS):
        for p in PLACEMENTS:
            pts = sorted(lines[order].get(p, []))
            if pts:
                ax.plot([k for k, _ in pts], [g for _, g in pts], marker="o", label=p,
                        color=COLORS[p])
        ceil = sorted(copy[order].items())
        ax.plot([k for k, _ in ceil], [g for _, g in ceil], color="gray", linestyle="--",
                label="cuMemcpyDtoD")
        k_axis(ax, [k for k, _ in ceil])
        ax.set_title(f"work order: {order}")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("GB/s (read + written)")
    axes[0].set_ylim(bottom=0)
    axes[-1].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"TMA copy, bf16 tiles of {tile // 1024} KiB: bandwidth by descriptor "
                 "placement (H200)")
    fig.tight_layout()
    fig.savefig(f"{out}/descriptors_{tile // 1024}k.png", dpi=110)
    plt.close(fig)


def plot_relaunch(plt, rows, out):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, mode in zip(axes, ["direct", "graph"]):
        for p in PLACEMENTS:
            pts = sorted((int(r["k"]), float(r["step_us"])) for r in rows
                         if r["mode"] == mode and r["placement"] == p)
            if pts:
                ax.plot([k for k, _ in pts], [u for _, u in pts], marker="o", label=p,
                        color=COLORS[p])
        k_axis(ax, sorted({int(r["k"]) for r in rows}))
        ax.set_yscale("log")
        ax.set_yticks([30, 50, 100, 200, 400, 700])
        ax.set_yticklabels(["30", "50", "100", "200", "400", "700"])
        ax.set_title(f"new buffers every step, {mode} launch")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("us per step (host and device overlapped)")
    axes[-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{out}/descriptors_relaunch.png", dpi=110)
    plt.close(fig)


def plot(table, relaunch, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines, copy = by_tile(read(table))
    for tile in sorted(lines):
        plot_tile(plt, tile, lines[tile], copy[tile], out)
    if relaunch:
        plot_relaunch(plt, read(relaunch), out)


def table_md(rows):
    """Per tile and order: GB/s (% of cuMemcpyDtoD) per placement, rows K."""
    lines, copy = by_tile(rows)
    frac = {(int(r["tile_bytes"]), r["order"], r["placement"], int(r["k"])): float(r["fraction"])
            for r in rows}
    for tile in sorted(lines):
        for order in ORDERS:
            print(f"\n{tile // 1024} KiB tiles, {order} order:\n")
            print("| K | " + " | ".join(PLACEMENTS) + " | cuMemcpyDtoD |")
            print("|---:|" + "---:|" * (len(PLACEMENTS) + 1))
            for k in sorted(copy[tile][order]):
                cells = []
                for p in PLACEMENTS:
                    g = dict(lines[tile][order].get(p, [])).get(k)
                    cells.append("--" if g is None else
                                 f"{g:.0f} ({100 * frac[(tile, order, p, k)]:.1f}%)")
                print(f"| {k} | " + " | ".join(cells) + f" | {copy[tile][order][k]:.0f} |")


def relaunch_md(rows):
    for mode in ["direct", "graph"]:
        print(f"\nRelaunch, {mode}: re-point us / host us / step us / kernel us per step\n")
        print("| K | " + " | ".join(p for p in PLACEMENTS if p != "G+prefetch") + " |")
        print("|---:|" + "---:|" * (len(PLACEMENTS) - 1))
        ks = sorted({int(r["k"]) for r in rows})
        for k in ks:
            cells = []
            for p in PLACEMENTS:
                if p == "G+prefetch":
                    continue
                r = [x for x in rows if x["mode"] == mode and x["placement"] == p and int(x["k"]) == k]
                cells.append("--" if not r else "{:.1f} / {:.1f} / {:.1f} / {:.1f}".format(
                    *(float(r[0][f]) for f in ("repoint_us", "host_us", "step_us", "kernel_us"))))
            print(f"| {k} | " + " | ".join(cells) + " |")


def main(argv):
    if len(argv) >= 3 and argv[0] == "plot":
        plot(argv[1], argv[2] if len(argv) == 4 else None, argv[-1])
    elif len(argv) >= 2 and argv[0] == "tables":
        table_md(read(argv[1]))
        if len(argv) == 3:
            relaunch_md(read(argv[2]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
