#!/usr/bin/python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Turns funnel-bench JSON into docs/performance.md (written to stdout).

usage: report.py BENCH_JSON [BENCH_JSON ...] [--images DIR] [--link PREFIX] [--no-plots]

On the GPU machine (scripts/gpu/run-all.sh build,bench writes gpu-out/bench.json), then here:
    scripts/bench/report.py gpu-out/bench.json > docs/performance.md
Several JSON files merge (e.g. the one-GPU run and the two-GPU run of `funnel-bench scaling`):
for each benchmark the rows of every file where it ran add up, else the first that skipped it counts.
Plots are drawn with matplotlib (scripts/bench/plot.py) into --images (default
docs/performance) and linked as PREFIX/name.png (default: performance, relative to docs/).
Every goal appears with met / NOT MET; goals not met get what limits them and what would close
the gap.
"""
import argparse
import datetime
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ORDER = ["share", "stencil", "pipeline", "pool", "scaling"]

TITLES = {
    "share": "share: ranks sharing one GPU, time-sliced vs MPS",
    "stencil": "stencil: heat3d vs a device copy; ranks splitting one grid",
    "pipeline": "pipeline: host-resident grid streamed through the GPU",
    "pool": "pool: buffers allocated and freed every step",
    "scaling": "scaling: 1 to all GPUs of a node",
}

PLOTS = {
    "share": ["share-synthetic.png", "share-heat3d.png"],
    "stencil": ["stencil.png"],
    "pipeline": ["pipeline-timeline.png", "temporal-blocking.png"],
    "pool": ["pool.png"],
    "scaling": ["scaling.png"],
}

# What usually limits each goal, and what would close the gap: printed for goals not met, as
# the starting point of the analysis (the raw figures in the JSON say which applies).
LIMITS = {
    ("share", "vs ideal"):
        "Ranks compete for SMs once N x blocks nears the SM count, and each MPS client adds "
        "launch latency. Check the worker JSON (funnel_mps must be \"on\") and the per-rank "
        "times; a lower CUDA_MPS_ACTIVE_THREAD_PERCENTAGE or fewer blocks per rank keeps the GPU "
        "unsaturated.",
    ("share", "(b)/(a)"):
        "Needs MPS really serving the ranks (nvidia-smi shows M+C) and kernels shorter than the "
        "time slice. For heat3d the case is latency-bound, not GPU-bound: each rank owns a 96^3 "
        "box (split along x), one rank's step takes about 60 us on an H100, and the per-step IPC "
        "halo handshake (an MPI message and an interprocess-event wait per neighbour) costs more "
        "(halo share 76% at N = 8 in the run's summary). The synthetic case, without halos, "
        "reaches 8.7. A device-side handshake (flags in IPC memory instead of per-step MPI "
        "messages) or one CUDA graph per step would close it.",
    ("stencil", "vs copy"):
        "Nsight Compute (512^3 float, rows padded so each row's interior starts on 16 bytes, "
        "H100): the kernel keeps L2 at 94% of its peak throughput and DRAM at 79%, a copy L2 at "
        "82% and DRAM at 90%. It reads the copy's DRAM bytes (4% more) but moves 1.6 times its L2 "
        "traffic: the rows either side and the planes around each z-chunk are re-read from L2. "
        "Variants that cut the L2 traffic (register column marches, a cp.async z-march: "
        "tests/kernels/heat3d_tiling_probe) need more registers or a barrier a plane, lose "
        "occupancy and keep DRAM at 68-81%; the best reach 0.89-0.91 of the copy. Even a plain "
        "copy in the kernel's thread shape (16 bytes of two planes a thread) runs DRAM at 74%. "
        "`scripts/gpu/kernel-bounds.sh limits` measures it again.",
    ("stencil", "ranks split"):
        "Between ranks on one GPU under MPS each step is, per rank, one exchange kernel that "
        "copies the faces, signals the neighbours and waits for them, then the update; blocks "
        "of 8 steps run as one CUDA graph. Stream launches and stream memory operations are "
        "front-end work the GPU does one MPS client at a time (tests/halo/step_probe.cu); what "
        "is left grows with N: two kernels per rank-step, and along x one-cell-wide faces whose "
        "every value is its own memory transaction (docs/halo.md). Exchanging every k steps "
        "through k-deep halos is the next step.",
    ("pipeline", "serial / pipelined"):
        "The speed-up is at most (T_H2D + T_kernel + T_D2H) / max(...); with copies dominating "
        "it cannot exceed about 2. Check that both copy directions overlap (bidirectional rate).",
    ("pipeline", "bound / pipelined"):
        "The bound takes each copy direction at its rate alone, but with both directions "
        "running the link carries less than their sum (H100: 55 + 55 GB/s alone, 90 GB/s "
        "together). Against the bound with both directions at once (the 'bidirectional bound' "
        "row) the pipelined pass measured 0.98 on the H100 and 0.96 on the H200.",
    ("pipeline", "k-curve"):
        "Redundant halo computation grows with k (k planes each side per chunk); larger chunks "
        "keep it small.",
    ("pool", "pool / preallocated"):
        "Each stream-ordered allocate/free pair costs a few microseconds of host time; with many "
        "small buffers per step that shows. Grouping a step's buffers into one allocation closes "
        "it.",
    ("pool", "high-water"):
        "The CUDA pool reserves in 2 MiB granules, so small buffers round up; a release threshold "
        "or one slab per step keeps the high-water near the footprint.",
    ("scaling", "staged"):
        "Staged MPI (`--halo mpi`, the path between nodes) copies each face device-to-host, "
        "sends it and copies it back, and the host waits for the messages every exchange: with "
        "two steps per launch (a halo two cells deep, on by default for fields larger than L2) "
        "the steps after an exchange cannot overlap it, so half of each step pair waits for the "
        "link (halo share 0.45-0.54 in the summaries). One step per launch with the overlapped "
        "order, as the 545 G updates/s of the earlier commit ran, is the likely way back; not "
        "measured yet.",
    ("scaling", ""):
        "Ranks of a node reach the other GPUs through peer access by default (`--halo auto`, "
        "peer-ordered links: faces written over NVLink, ordered on the GPUs, steps in CUDA "
        "graphs). A figure under its goal here is the share of the exchange in a step: strong "
        "scaling halves each GPU's work while the faces stay the same size.",
}


def si(value):
    if value is None:
        return "n/a"
    prefixes = ["", " k", " M", " G", " T", " P"]
    p = 0
    v = float(value)
    while abs(v) >= 1000 and p < 5:
        v /= 1000
        p += 1
    return f"{v:.4g}{prefixes[p]}"


# The line from which a hand-written part of docs/performance.md starts (runs that are not
# funnel-bench JSON: scripts/gpu/dense-sharing.sh, resident-steps.sh); --keep carries it over.
KEEP_MARKER = "<!-- hand-written from here on: kept by report.py --keep -->"


def merge(paths):
    """One benchmark entry per name: the rows of every file where it ran, else the first mention."""
    docs = []
    for p in paths:
        with open(p) as f:
            docs.append((p, json.load(f)))
    merged = {}
    for path, doc in docs:
        for name, bench in doc.get("benchmarks", {}).items():
            bench = dict(bench)
            bench["_source_json"] = os.path.abspath(path)
            bench["_machine"] = doc.get("machine", {})
            bench["_quick"] = doc.get("quick", False)
            bench["_backend"] = doc.get("backend", "?")
            if (name in merged and merged[name]["status"] == "ok" and bench["status"] == "ok"):
                # The same benchmark run in parts (e.g. scaling per problem): rows and runs add up.
                first = merged[name]
                first["rows"] = first.get("rows", []) + bench.get("rows", [])
                runs = first.get("raw", {}).get("runs", []) + bench.get("raw", {}).get("runs", [])
                first.setdefault("raw", {})["runs"] = runs
            elif name not in merged or (merged[name]["status"] != "ok" and bench["status"] == "ok"):
                merged[name] = bench
    return docs, merged


def limits_for(name, case):
    for (bench, key), text in LIMITS.items():
        if bench == name and key in case:
            return text
    return "See the raw figures in the JSON."


def met_text(row):
    if "goal" not in row:
        return "-"
    if not row.get("goal_applies", True):
        return "n/a (host)"
    return "met" if row.get("met") else "**NOT MET**"


def rows_table(name, rows):
    out = ["| case | baseline | funnel | ratio | goal | met? |",
           "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        unit = f" {r['unit']}" if r.get("unit") else ""
        out.append(f"| {r['case']} | {r['baseline_name']}: {si(r['baseline'])}{unit} | "
                   f"{r['funnel_name']}: {si(r['funnel'])}{unit} | {r['ratio']:.3f} | "
                   f"{r.get('goal', '-')} | {met_text(r)} |")
    return out


def machine_lines(docs):
    out = ["| run | host | GPU | driver | CUDA | MPI | date | options |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for path, doc in docs:
        m = doc.get("machine", {})
        gpus = m.get("gpus", [])
        gpu = f"{len(gpus)} x {m.get('gpu_name')}" if gpus else "none (host backend)"
        opts = "--quick" if doc.get("quick") else "defaults"
        out.append(f"| {os.path.basename(os.path.dirname(os.path.abspath(path)))}/"
                   f"{os.path.basename(path)} | {m.get('host', '?')} | {gpu} | "
                   f"{m.get('nvidia_driver') or '-'} | {m.get('cuda_runtime') or '-'} | "
                   f"{m.get('mpi', '?')} | {doc.get('date', '?')} | {doc.get('command', '?')} "
                   f"{opts} |")
    return out


def draw_plots(merged, images):
    """Draws the plots of the merged benchmarks into `images`; returns the names written."""
    try:
        import plot
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    doc = {"benchmarks": {k: v for k, v in merged.items()}}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "merged.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return [os.path.basename(p) for p in plot.draw(path, images)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json", nargs="+", help="funnel-bench --json files")
    parser.add_argument("--images", default="docs/performance",
                        help="where the plots are drawn (default docs/performance)")
    parser.add_argument("--link", default="performance",
                        help="path of --images as seen from the markdown file (default "
                             "performance, i.e. docs/performance from docs/performance.md)")
    parser.add_argument("--no-plots", action="store_true", help="draw and link no plots")
    parser.add_argument("--keep", metavar="FILE",
                        help="carry over the hand-written part of FILE (e.g. the current "
                             "docs/performance.md): everything from its line '" + KEEP_MARKER +
                             "' on")
    a = parser.parse_args()
    kept = []
    if a.keep:
        with open(a.keep) as f:
            lines = f.read().splitlines()
        if KEEP_MARKER not in lines:
            parser.error(f"{a.keep}: no line '{KEEP_MARKER}' to keep from")
        kept = [""] + lines[lines.index(KEEP_MARKER):]
    for p in a.json:
        if not os.path.exists(p):
            parser.error(f"{p}: no such file")
    docs, merged = merge(a.json)
    drawn = set()
    if not a.no_plots:
        names = draw_plots(merged, a.images)
        if names is None:
            print("report.py: matplotlib missing, no plots drawn", file=sys.stderr)
        else:
            drawn = set(names)

    out = ["# funnel performance", "",
           f"<!-- generated by scripts/bench/report.py on "
           f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC from "
           f"{', '.join(os.path.basename(p) for p in a.json)}; do not edit by hand -->", ""]
    if any(d.get("quick") or d.get("backend") != "cuda" for _, d in docs):
        out += ["> **These figures are not measurements of funnel's speed.** At least one input "
                "comes from a `--quick` run or the host backend, which only checks that every "
                "benchmark runs. Regenerate from the GPU machine (below).", ""]
    out += ["Regenerate (the GPU machine writes `gpu-out/`; `funnel-bench scaling` needs two GPUs, "
            "so run it on `nvidia-h200-x2` and pass both files):", "",
            "```sh",
            "scripts/gpu/run-all.sh build,bench            # on the GPU machine: gpu-out/bench.json",
            "scripts/bench/report.py --keep docs/performance.md gpu-out/bench.json > new.md "
            "&& mv new.md docs/performance.md",
            "# with the two-GPU run: report.py gpu-out/bench.json gpu-out-x2/bench.json > ...",
            "```", "",
            "Each benchmark runs its baseline and funnel back to back in one process tree "
            "(warm-up, repeated, median; the pipeline keeps the fastest pass), so the ratios hold "
            "on a shared node. Goals are those of issue 7 and issue 5, for an H100.", "",
            "## Machine", ""] + machine_lines(docs) + [""]

    goal_rows = [(n, r) for n in ORDER if merged.get(n, {}).get("status") == "ok"
                 for r in merged[n].get("rows", []) if "goal" in r]
    out += ["## Goals", "", "| benchmark | case | ratio | goal | met? |",
            "| --- | --- | --- | --- | --- |"]
    for n, r in goal_rows:
        out.append(f"| {n} | {r['case']} | {r['ratio']:.3f} | {r['goal']} | {met_text(r)} |")
    for n in ORDER:
        b = merged.get(n)
        if b is None:
            out.append(f"| {n} | not in the input | - | - | not run |")
        elif b["status"] != "ok":
            out.append(f"| {n} | {b['status']}: {b.get('reason', '')} | - | - | not run |")
    out.append("")
    missed = [(n, r) for n, r in goal_rows if r.get("goal_applies", True) and not r.get("met")]
    if missed:
        out += ["### Goals not met: what limits them", ""]
        for n, r in missed:
            out.append(f"- **{n} — {r['case']}** ({r['ratio']:.3f}, goal {r['goal']}): "
                       f"{limits_for(n, r['case'])}")
        out.append("")

    for n in ORDER:
        b = merged.get(n)
        out += [f"## {TITLES[n]}", ""]
        if b is None:
            out += ["Not in the input files.", ""]
            continue
        if b["status"] != "ok":
            out += [f"{b['status']}: {b.get('reason', '')}", ""]
            continue
        m = b["_machine"]
        where = m.get("gpu_name") if m.get("gpus") else "the host backend (no GPU)"
        out += [f"On {where} ({m.get('host', '?')}, {m.get('date', '?')}).", ""]
        out += rows_table(n, b.get("rows", [])) + [""]
        notes = [r for r in b.get("rows", []) if r.get("note")]
        for r in notes:
            out.append(f"- {r['case']}: {r['note']}")
        for note in b.get("notes", []):
            out.append(f"- {note}")
        if notes or b.get("notes"):
            out.append("")
        for png in PLOTS[n]:
            if png in drawn:
                out += [f"![{png}]({a.link}/{png})", ""]
    print("\n".join(out + kept))
    return 0


if __name__ == "__main__":
    sys.exit(main())
