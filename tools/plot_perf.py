#!/usr/bin/env python3
"""Figures from putmd performance reports (`putmd run -perf FILE.json`).

    tools/plot_perf.py [-o DIR] [--prefix NAME] FILE.json [FILE.json ...]

writes, under DIR (default: the current directory):
  NAME-stages.png     stage breakdown (average seconds per step over the PP
                      ranks, top-level stages stacked) per run, ordered by
                      rank count
  NAME-scaling.png    ns/day and parallel efficiency against the rank count
                      (efficiency relative to the run with fewest ranks:
                      (P_N / N) / (P_1 / N_1), N counting PP and PME ranks)
  NAME-messages.png   message-size histograms per communication phase (one
                      panel per run that has communication)
  NAME-dlb.png        dynamic load balancing: the domain boundaries (nm
                      along each balanced dimension) over the steps, one
                      panel per run that balanced (only when one did)
NAME defaults to "perf". Needs Python 3 and matplotlib (Debian:
python3-matplotlib); the JSON format is docs/perf-schema.json.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        if d.get("format") != "putmd-perf":
            sys.exit(f"{p}: not a putmd performance report (format {d.get('format')!r})")
        d["_path"] = p
        d["_ranks"] = d["ranks"]["pp"] + d["ranks"]["pme"]
        runs.append(d)
    runs.sort(key=lambda d: (d["_ranks"], d["_path"]))
    return runs


def label(d):
    r = d["ranks"]
    s = f"{r['pp']} PP"
    if r["pme"]:
        s += f"+{r['pme']} PME"
    return s


def stages_figure(runs, path):
    keys = []  # top-level stages in first-seen order
    names = {}
    for d in runs:
        for s in d["stages"]:
            if s["parent"] is None and s["key"] not in keys:
                keys.append(s["key"])
                names[s["key"]] = s["name"]
    keys.append("rest")
    names["rest"] = "Rest"
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(runs) + 3), 4.5))
    bottoms = [0.0] * len(runs)
    cmap = plt.get_cmap("tab20")
    for i, k in enumerate(keys):
        vals = []
        for d in runs:
            steps = max(1, d["steps"])
            if k == "rest":
                v = max(0.0, d["rest_seconds"])
            else:
                v = sum(s["seconds_avg"] for s in d["stages"] if s["key"] == k)
            vals.append(1e3 * v / steps)
        ax.bar(range(len(runs)), vals, bottom=bottoms, color=cmap(i % 20), label=names[k])
        bottoms = [b + v for b, v in zip(bottoms, vals)]
    ax.set_xticks(range(len(runs)))
    ax.set_xticklabels([label(d) for d in runs])
    ax.set_ylabel("ms per step (average over PP ranks)")
    ax.set_title("Where the time goes")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def scaling_figure(runs, path):
    """ns/day (left) and parallel efficiency (right) against the rank count,
    one line per PME layout: PME on every rank, or with separate PME ranks.
    Efficiency is relative to the run with the fewest ranks of all."""
    first = runs[0]
    base = first["performance"]["ns_per_day"] / first["_ranks"] if first["_ranks"] > 0 else 0
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 4))
    groups = [("PME on every rank", [d for d in runs if d["ranks"]["pme"] == 0], "o-"),
              ("separate PME ranks", [d for d in runs if d["ranks"]["pme"] > 0], "s--")]
    for name, group, style in groups:
        if not group:
            continue
        n = [d["_ranks"] for d in group]
        p = [d["performance"]["ns_per_day"] for d in group]
        eff = [(pi / ni) / base * 100 if base > 0 else 0 for pi, ni in zip(p, n)]
        ax1.plot(n, p, style, label=name)
        ax2.plot(n, eff, style, label=name)
    ax1.set_xlabel("ranks (PP + PME)")
    ax1.set_ylabel("ns/day")
    ax1.set_title("Performance")
    ax2.set_xlabel("ranks (PP + PME)")
    ax2.set_ylabel("parallel efficiency (%)")
    ax2.set_ylim(0, 110)
    ax2.set_title(f"Efficiency (relative to {first['_ranks']} rank{'s' if first['_ranks'] > 1 else ''})")
    for ax in (ax1, ax2):
        ax.legend(fontsize="small")
        ax.set_xticks(sorted({d["_ranks"] for d in runs}))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# one colour per phase in every panel
PHASE_COLOURS = {"halo-x": "tab:blue", "halo-f": "tab:orange", "migration": "tab:green", "energies": "tab:purple",
                 "pme": "tab:red", "setup": "tab:grey"}


def messages_figure(runs, path):
    with_comm = [d for d in runs if d["communication"]["phases"]]
    panels = max(1, len(with_comm))
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4.5), squeeze=False)
    for ax, d in zip(axes[0], with_comm):
        bins = d["communication"]["histogram_bins"]
        phases = [ph for ph in d["communication"]["phases"] if ph["messages"] > 0]
        width = 0.8 / max(1, len(phases))
        for j, ph in enumerate(phases):
            ax.bar([i + j * width for i in range(len(bins))], ph["histogram"], width=width, label=ph["phase"],
                   color=PHASE_COLOURS.get(ph["phase"], "grey"))
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(bins))])
        ax.set_xticklabels(bins, fontsize=8)
        ax.set_yscale("symlog")
        ax.set_ylabel("messages (all PP ranks)")
        ax.set_title(f"Message sizes, {label(d)}")
        ax.legend(fontsize=7)
    if not with_comm:
        axes[0][0].text(0.5, 0.5, "no run with communication", ha="center", va="center")
        axes[0][0].set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def dlb_figure(runs, path):
    """The boundaries after each balance, in nm from the box origin along
    each dimension with more than one slab; False when no run balanced."""
    balanced = [d for d in runs if d.get("dlb") and d["dlb"]["history"]]
    if not balanced:
        return False
    fig, axes = plt.subplots(1, len(balanced), figsize=(5 * len(balanced), 4), squeeze=False)
    for ax, d in zip(axes[0], balanced):
        dlb = d["dlb"]
        widths = dlb["slab_widths_nm_end"]
        steps = [h["step"] for h in dlb["history"]]
        for dim in range(3):
            n, columns = dlb["domains"][dim], dlb["columns"][dim]
            if n < 2:
                continue
            box = sum(widths[dim][:n])  # the box's perpendicular width along dim
            first = True
            for c in range(columns):  # staggered: each column's boundaries
                for k in range(1, n):
                    ax.plot(steps, [h["bounds"][dim][c * (n + 1) + k] * box for h in dlb["history"]], marker=".",
                            color=["tab:blue", "tab:orange", "tab:green"][dim],
                            label=f"{'xyz'[dim]} boundaries" if first else None)
                    first = False
        ax.set_xlabel("step")
        ax.set_ylabel("boundary position (nm)")
        ax.set_title(f"Domain boundaries, {label(d)}\nimbalance {100 * dlb['first_imbalance']:.0f}% -> "
                     f"{100 * dlb['last_imbalance']:.0f}%", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="putmd -perf JSON files")
    ap.add_argument("-o", "--outdir", default=".")
    ap.add_argument("--prefix", default="perf")
    a = ap.parse_args()
    runs = load(a.files)
    os.makedirs(a.outdir, exist_ok=True)
    out = {k: os.path.join(a.outdir, f"{a.prefix}-{k}.png") for k in ("stages", "scaling", "messages")}
    stages_figure(runs, out["stages"])
    scaling_figure(runs, out["scaling"])
    messages_figure(runs, out["messages"])
    dlb = os.path.join(a.outdir, f"{a.prefix}-dlb.png")
    if dlb_figure(runs, dlb):
        out["dlb"] = dlb
    for p in out.values():
        print("wrote", p)


if __name__ == "__main__":
    main()
