#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Draws report.png from funnel-report's report.json: per GPU, a timeline (busy fraction and
ranks whose work ran at once, per bin) and a bar per rank (its GPU time).

Usage: funnel-report-plot.py REPORT_JSON [REPORT_PNG]   (default: report.png beside the JSON)
Exit status: 0 drawn; 3 this python3 has no matplotlib (funnel-report then says so in one
line); 2 bad arguments; 1 the JSON cannot be read or the PNG written.
"""
import json
import os
import sys

NO_MATPLOTLIB = 3


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) not in (2, 3) else sys.stdout)
        return 0 if len(argv) == 2 else 2
    source = argv[1]
    target = argv[2] if len(argv) == 3 else os.path.join(os.path.dirname(source), "report.png")
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display on compute nodes
        import matplotlib.pyplot as plt
    except ImportError:
        return NO_MATPLOTLIB
    try:
        with open(source, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f"funnel-report-plot: cannot read {source}: {e}", file=sys.stderr)
        return 1

    gpus = report.get("gpus", [])
    if not gpus:
        print(f"funnel-report-plot: {source} has no GPU to draw", file=sys.stderr)
        return 1
    fig, axes = plt.subplots(len(gpus), 2, figsize=(13, 3.4 * len(gpus)), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 2]})
    for row, gpu in zip(axes, gpus):
        draw_timeline(row[0], gpu)
        draw_ranks(row[1], gpu)
    machine = report.get("machine", {})
    fig.suptitle(f"funnel-report: {machine.get('host', '?')}, job wall "
                 f"{report.get('job', {}).get('wall_s', 0):.2f} s, funnel "
                 f"{report.get('funnel_version', '?')}", fontsize=11)
    fig.tight_layout()
    try:
        fig.savefig(target, dpi=110)
    except OSError as e:
        print(f"funnel-report-plot: cannot write {target}: {e}", file=sys.stderr)
        return 1
    return 0


def draw_timeline(ax, gpu):
    timeline = gpu.get("timeline", {})
    busy = timeline.get("busy", [])
    at_once = timeline.get("ranks_at_once", [])
    width = timeline.get("bin_s", 0) or 1
    t = [width * (i + 0.5) for i in range(len(busy))]
    ax.fill_between(t, [100 * b for b in busy], step="mid", alpha=0.35, color="tab:blue",
                    label="busy (%)")
    ax.set_ylim(0, 105)
    ax.set_xlabel("time since the job's start (s)")
    ax.set_ylabel("GPU busy (%)", color="tab:blue")
    twin = ax.twinx()
    twin.step(t, at_once, where="mid", color="tab:red", linewidth=1.2, label="ranks at once")
    twin.set_ylim(0, max(1.0, len(gpu.get("ranks", [])) * 1.05, max(at_once, default=0) * 1.05))
    twin.set_ylabel("ranks whose work ran at once", color="tab:red")
    index = gpu.get("index", -1)
    name = f"GPU {index}" if index >= 0 else gpu.get("uuid", "GPU")
    ax.set_title(f"{name} {gpu.get('name', '')}: MPS {gpu.get('mps', '?')}, busy "
                 f"{100 * gpu.get('busy_fraction', 0):.0f} %, "
                 f"{gpu.get('kernel_ranks_at_once', 0):.1f} ranks' kernels at once", fontsize=10)


def draw_ranks(ax, gpu):
    ranks = gpu.get("ranks", [])
    labels = [r.get("label", "?").replace("local rank ", "l").replace("rank ", "") for r in ranks]
    kernels = [r.get("kernel_s", 0) for r in ranks]
    total = [r.get("gpu_s", 0) for r in ranks]
    colors = ["tab:gray" if r.get("ended_early") else "tab:green" for r in ranks]
    x = range(len(ranks))
    ax.bar(x, total, color=colors, alpha=0.45, label="GPU time (kernels and copies)")
    ax.bar(x, kernels, color=colors, label="kernels")
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=8 if len(ranks) <= 24 else 6,
                       rotation=0 if len(ranks) <= 24 else 90)
    ax.set_xlabel("rank (grey: ended early)")
    ax.set_ylabel("GPU time (s)")
    ax.set_title(gpu.get("verdict", {}).get("text", ""), fontsize=8, wrap=True)
    ax.legend(fontsize=7, loc="lower right")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
