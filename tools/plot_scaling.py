#!/usr/bin/env python3
"""Figures of the simulated clusters (docs/scaling.md) from the benchmark
scripts' own outputs.

    tools/plot_scaling.py transposes TABLE.md OUT.png
    tools/plot_scaling.py steps STEPS.csv OUT.png

transposes  TABLE.md is what bench/smpi_transposes.sh prints (its markdown
            table: ranks, grid, process grid, ms per forward + backward pair
            for alltoallv, pairwise and rma, the fastest, what auto picks;
            other lines are ignored). One panel per grid: ms per pair
            against the rank count, one line per algorithm, the ones
            `--fft-transpose auto` picked circled.
steps       STEPS.csv holds whole simulated MD steps (columns system,
            platform, ranks, npme, comm, ms_per_step, comm_share, cpu,
            source; lines starting with # are comments): one row of panels
            per system, ns/day, parallel efficiency against the fewest
            ranks of the same platform and backend, and the communication
            share, against the rank count; PME on every rank (npme 0) as
            lines, separate PME ranks (npme > 0) as crosses (rma: +), rma dashed.

Both print what they read (rows per series) and exit non-zero on a table
they cannot read. Needs Python 3 and matplotlib (Debian:
python3-matplotlib).
"""
import argparse
import csv
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ALGORITHMS = ("alltoallv", "pairwise", "rma")
PLATFORMS = {"gbe": "GbE", "10gbe": "10GbE", "torus": "3D torus", "ib-fattree": "fat tree (IB-like)"}
COLOURS = {"gbe": "tab:red", "10gbe": "tab:orange", "torus": "tab:green", "ib-fattree": "tab:blue"}
DT_PS = 0.002  # both systems' md.mdp


def read_transposes(path):
    """{grid: {algorithm: [(ranks, ms)]}}, {grid: [(ranks, ms of the pick)]}"""
    row = re.compile(r"^\|\s*(\d+)\s*\|\s*(\d+)\^3\s*\|\s*(\d+x\d+)\s*\|\s*([0-9.]+)\s*\|\s*([0-9.]+)\s*\|\s*([0-9.]+)"
                     r"\s*\|\s*(\w+)\s*\|\s*(\w+)\s*\|")
    times, picks = {}, {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.startswith("| ") or line.startswith("| ranks"):
                continue
            m = row.match(line)
            if not m:
                sys.exit(f"{path}:{n}: not a row of bench/smpi_transposes.sh's table: {line.strip()}")
            ranks, grid = int(m.group(1)), int(m.group(2))
            ms = dict(zip(ALGORITHMS, (float(m.group(k)) for k in (4, 5, 6))))
            for a in ALGORITHMS:
                times.setdefault(grid, {}).setdefault(a, []).append((ranks, ms[a]))
            if m.group(8) not in ms:
                sys.exit(f"{path}:{n}: auto picked {m.group(8)!r}, not one of {', '.join(ALGORITHMS)}")
            picks.setdefault(grid, []).append((ranks, ms[m.group(8)]))
    if not times:
        sys.exit(f"{path}: no rows of bench/smpi_transposes.sh's table")
    return times, picks


def transposes_figure(path, out):
    times, picks = read_transposes(path)
    grids = sorted(times)
    fig, axes = plt.subplots(1, len(grids), figsize=(4.2 * len(grids), 3.8), squeeze=False)
    for ax, grid in zip(axes[0], grids):
        for a, style in zip(ALGORITHMS, ("o-", "s-", "^--")):
            pts = sorted(times[grid][a])
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=a)
        pk = sorted(picks[grid])
        ax.plot([p[0] for p in pk], [p[1] for p in pk], "o", markersize=12, markerfacecolor="none",
                markeredgecolor="black", label="auto's pick")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{grid}^3 grid")
        ax.set_xlabel("ranks")
        ax.set_ylabel("ms per forward + backward pair")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("3D-FFT transposes on the simulated GbE cluster (bench/smpi_transposes.sh)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    for grid in grids:
        print(f"{grid}^3: " + ", ".join(f"{a} {len(times[grid][a])} rank counts" for a in ALGORITHMS))
    print(f"wrote {out}")


def read_steps(path):
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    need = ("system", "platform", "ranks", "npme", "comm", "ms_per_step", "comm_share", "cpu")
    if not rows or any(k not in rows[0] for k in need):
        sys.exit(f"{path}: expected the columns {', '.join(need)}")
    for k, r in enumerate(rows, 2):
        try:
            r["ranks"], r["npme"], r["ms"] = int(r["ranks"]), int(r["npme"]), float(r["ms_per_step"])
            r["share"] = float(r["comm_share"]) if r["comm_share"] else None
        except ValueError as e:
            sys.exit(f"{path}: data row {k - 1}: {e}")
        if r["platform"] not in PLATFORMS:
            sys.exit(f"{path}: data row {k - 1}: platform {r['platform']!r} is not one of {', '.join(PLATFORMS)}")
        if r["comm"] not in ("p2p", "rma") or r["ms"] <= 0 or r["ranks"] < 1:
            sys.exit(f"{path}: data row {k - 1}: backend {r['comm']!r}, {r['ms']} ms, {r['ranks']} ranks")
    return rows


def steps_figure(path, out):
    rows = read_steps(path)
    systems = list(dict.fromkeys(r["system"] for r in rows))
    fig, axes = plt.subplots(len(systems), 3, figsize=(14, 4 * len(systems)), squeeze=False)
    for row_axes, system in zip(axes, systems):
        mine = [r for r in rows if r["system"] == system]
        series = {}
        for r in mine:
            series.setdefault((r["platform"], r["comm"], r["npme"] == 0), []).append(r)
        for (platform, comm, every), pts in sorted(series.items()):
            pts.sort(key=lambda r: r["ranks"])
            colour = COLOURS[platform]
            name = f"{PLATFORMS[platform]}, {comm}" + ("" if every else ", separate PME ranks")
            style = dict(color=colour, label=name)
            if every:
                style.update(linestyle="--" if comm == "rma" else "-", marker="o")
            else:
                style.update(linestyle="none", marker="+" if comm == "rma" else "x", markersize=9)
            x = [r["ranks"] for r in pts]
            row_axes[0].plot(x, [86400 * DT_PS / r["ms"] for r in pts], **style)  # ns/day
            base = pts[0]
            if every:
                row_axes[1].plot(x, [base["ms"] * base["ranks"] / (r["ms"] * r["ranks"]) for r in pts], **style)
            shares = [(r["ranks"], 100 * r["share"]) for r in pts if r["share"] is not None]
            if shares:
                row_axes[2].plot([s[0] for s in shares], [s[1] for s in shares], **style)
            print(f"{system}: {name}: {len(pts)} rank counts ({', '.join(str(v) for v in x)})")
        for ax, ylabel in zip(row_axes, ("ns/day", "parallel efficiency (vs fewest ranks)", "communication (% of run)")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("simulated ranks")
            ax.set_ylabel(ylabel)
            ax.set_title(system)
            ax.grid(True, which="both", alpha=0.3)
        row_axes[0].set_yscale("log")
        row_axes[1].set_yscale("log")
    # one legend for all panels: every series named once
    named = {}
    for ax in axes.flat:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            named.setdefault(name, handle)
    fig.legend(list(named.values()), list(named.keys()), loc="lower center", ncol=4, fontsize=8)
    fig.suptitle("Simulated MD steps (SimGrid SMPI), bench/results/smpi-steps.csv")
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("transposes", "steps"))
    p.add_argument("data")
    p.add_argument("out")
    a = p.parse_args()
    (transposes_figure if a.what == "transposes" else steps_figure)(a.data, a.out)


if __name__ == "__main__":
    main()
