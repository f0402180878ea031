#!/usr/bin/python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Draws funnel-bench's plots (PNG) from its JSON.

usage: plot.py BENCH_JSON OUT_DIR

Writes, for each benchmark that ran:
  share-<workload>.png     aggregate throughput vs ranks per GPU, with and without MPS, and ideal
  stencil.png              heat3d effective bandwidth vs the device copy; ranks sharing one grid
  pipeline-timeline.png    the per-stream timeline of one pipelined pass (from its Chrome trace)
  temporal-blocking.png    cell-updates/s vs steps per pass k
  pool.png                 time per step: preallocated, funnel pool, raw allocator
  scaling.png              strong and weak scaling efficiency
Exit status: 0 on success, 2 for bad arguments, 3 when matplotlib is not installed.
"""
import json
import os
import sys


def save(plt, fig, out, filename):
    """Lays out, writes out/filename (PNG, 120 dpi), closes the figure; returns the path."""
    fig.tight_layout()
    path = os.path.join(out, filename)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def load_trace(bench, json_path):
    """The pipeline trace: the recorded path, else the same name in bench-runs/ beside the JSON
    (the JSON may have been copied from the GPU machine)."""
    if isinstance(bench.get("raw", {}).get("trace"), dict):
        return bench["raw"]["trace"]
    recorded = bench.get("raw", {}).get("trace_file")
    if not recorded:
        return None
    # report.py merges several files and records where each benchmark came from.
    source = bench.get("_source_json", json_path)
    candidates = [recorded,
                  os.path.join(os.path.dirname(os.path.abspath(source)), "bench-runs",
                               os.path.basename(recorded))]
    for path in candidates:
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
    return None


def plot_share(plt, bench, out):
    written = []
    for workload, points in bench["raw"].get("points", {}).items():
        series = {}
        for p in points:
            series.setdefault(p["launch"], []).append((p["ranks"], p["rate"]))
        if not series:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        single = None
        for label, pts in series.items():
            pts.sort()
            ax.plot([r for r, _ in pts], [v for _, v in pts], marker="o", label=label)
            if single is None:
                single = dict(pts).get(1)
        if single:
            ranks = sorted({r for pts in series.values() for r, _ in pts})
            ax.plot(ranks, [r * single for r in ranks], linestyle="--", color="gray",
                    label="ideal (N x 1 rank)")
        ax.set_xlabel("ranks per GPU")
        ax.set_ylabel("kernels/s" if workload == "synthetic" else "cell-updates/s")
        ax.set_title(f"share: {workload}")
        ax.set_xscale("log", base=2)
        ax.legend()
        ax.grid(True, alpha=0.3)
        written.append(save(plt, fig, out, f"share-{workload}.png"))
    return written


def plot_stencil(plt, bench, out):
    resident = [c for c in bench["raw"].get("resident", []) if "stencil_bytes_per_s" in c]
    splits = {key: bench["raw"].get(key, {}) for key in ("shared", "split", "split-x")}
    splits = {key: s for key, s in splits.items() if s.get("runs")}
    if not resident and not splits:
        return []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    ax = axes[0]
    labels = [f"{c['n']}^3 {c['dtype']}" for c in resident]
    x = range(len(resident))
    ax.bar([i - 0.2 for i in x], [c["copy_bytes_per_s"] / 1e9 for c in resident], 0.4,
           label="device copy")
    ax.bar([i + 0.2 for i in x], [c["stencil_bytes_per_s"] / 1e9 for c in resident], 0.4,
           label="heat3d effective")
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_ylabel("GB/s")
    ax.set_title("resident heat3d vs device copy")
    ax.legend()
    ax = axes[1]
    for key, split in splits.items():
        runs = split["runs"]
        one = next((r["cell_updates_per_s"] for r in runs if r["ranks"] == 1), None)
        if not one:
            continue
        ax.plot([r["ranks"] for r in runs], [r["cell_updates_per_s"] / one for r in runs],
                marker="o", label=split.get("grid", key))
    if splits:
        ax.axhline(1.0, linestyle="--", color="gray", label="1 rank owns the grid")
        ax.set_xscale("log", base=2)
        ax.legend()
    ax.set_xlabel("ranks on one GPU")
    ax.set_ylabel("fraction of one rank's cell-updates/s")
    ax.set_title("ranks splitting one grid")
    return [save(plt, fig, out, "stencil.png")]


def plot_timeline(plt, trace, out):
    events = trace.get("traceEvents", []) if trace else []
    tracks = {e["tid"]: e["args"]["name"] for e in events
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = [e for e in events if e.get("ph") == "X"]
    if not spans:
        return []
    tids = sorted({e["tid"] for e in spans})
    t0 = min(e["ts"] for e in spans)
    fig, ax = plt.subplots(figsize=(10, 1 + 0.6 * len(tids)))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for row, tid in enumerate(tids):
        bars = [((e["ts"] - t0) / 1e3, e["dur"] / 1e3) for e in spans if e["tid"] == tid]
        ax.broken_barh(bars, (row - 0.4, 0.8), color=colors[row % len(colors)])
    ax.set_yticks(range(len(tids)))
    ax.set_yticklabels([tracks.get(t, str(t)) for t in tids])
    ax.set_xlabel("ms")
    ax.set_title("pipeline: one pipelined pass")
    return [save(plt, fig, out, "pipeline-timeline.png")]


def plot_blocking(plt, bench, out):
    curve = bench["raw"].get("temporal_blocking", [])
    if not curve:
        return []
    fig, ax = plt.subplots(figsize=(6, 4))
    ks = [c["steps_per_pass"] for c in curve]
    ax.plot(ks, [c["cell_updates_per_s"] for c in curve], marker="o")
    for c in curve:
        ax.annotate(c["bound"], (c["steps_per_pass"], c["cell_updates_per_s"]),
                    textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("steps per pass k")
    ax.set_ylabel("cell-updates/s")
    ax.set_title("temporal blocking (label: what bounds the pass)")
    ax.grid(True, alpha=0.3)
    return [save(plt, fig, out, "temporal-blocking.png")]


def plot_pool(plt, bench, out):
    raw = bench["raw"]
    if "preallocated" not in raw:
        return []
    steps = raw["steps"]
    names = ["preallocated", "funnel pool", raw.get("raw_allocator_name", "raw")]
    values = [1e3 * raw[k]["median_s"] / steps for k in ("preallocated", "pool", "raw_allocator")]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(names, values, color=["gray", "tab:blue", "tab:red"])
    ax.set_ylabel("ms per step")
    ax.set_title("pool: buffers allocated and freed every step")
    return [save(plt, fig, out, "pool.png")]


def plot_scaling(plt, bench, out):
    rows = bench.get("rows", [])
    if not rows:
        return []
    fig, ax = plt.subplots(figsize=(9, 1 + 0.3 * len(rows)))
    ax.barh([r["case"] for r in rows], [r["ratio"] for r in rows])
    ax.axvline(0.95, linestyle="--", color="gray", label="goal 0.95 (auto)")
    ax.set_xlabel("efficiency (G GPUs / G x 1 GPU)")
    ax.set_title("scaling")
    ax.legend()
    return [save(plt, fig, out, "scaling.png")]


def draw(json_path, out):
    """Draws every plot the JSON has data for; returns the files written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(json_path) as f:
        doc = json.load(f)
    os.makedirs(out, exist_ok=True)
    benches = {k: v for k, v in doc.get("benchmarks", {}).items() if v.get("status") == "ok"}
    written = []
    if "share" in benches:
        written += plot_share(plt, benches["share"], out)
    if "stencil" in benches:
        written += plot_stencil(plt, benches["stencil"], out)
    if "pipeline" in benches:
        written += plot_timeline(plt, load_trace(benches["pipeline"], json_path), out)
        written += plot_blocking(plt, benches["pipeline"], out)
    if "pool" in benches:
        written += plot_pool(plt, benches["pool"], out)
    if "scaling" in benches:
        written += plot_scaling(plt, benches["scaling"], out)
    return written


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) != 2 else sys.stdout)
        return 0 if len(argv) == 2 else 2
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot.py: matplotlib is not installed (apt install python3-matplotlib)",
              file=sys.stderr)
        return 3
    for name in draw(argv[1], argv[2]):
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
