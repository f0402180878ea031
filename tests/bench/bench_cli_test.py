#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Checks funnel-bench's plumbing on the host backend (driver for ctest).

  quick      `funnel-bench all --quick --backend host --json F`: exit 0, the JSON parses, names
             the machine and the date, and has every benchmark with either finite results or a
             skip reason; the stdout table has a line for each benchmark. With matplotlib, also
             --plot: PNG files appear.
  bad-args   each bad argument: exit 2, one line on stderr naming the bad value, no table
  help       --help of the tool and of each benchmark: exit 0, lists the benchmark's options
  launcher   `share --quick` with ranks started through funnel-run (--mps off, then on) as on a
             GPU, with the launch tests' stand-ins for nvidia-smi / nvidia-cuda-mps-control:
             (b)/(a) rows appear and each worker saw the FUNNEL_MPS funnel-run promised.
             Exits 77 (skip) when funnel-run or the stand-ins are not there.
Options: --bench PATH (the funnel-bench executable), --launcher PATH, --fake-bin DIR
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

BENCHMARKS = ["share", "stencil", "pipeline", "pool", "scaling", "kernels"]
TIMEOUT = 240
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "apps"))
from driver_support import check, exit_status  # noqa: E402
from proctree import run_job  # noqa: E402 (driver_support puts tests/support on the path)


def run(bench, args, cwd=None):
    return run_job([bench] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   text=True, timeout=TIMEOUT, cwd=cwd)


def finite_positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def has_matplotlib():
    for py in ("/usr/bin/python3", sys.executable):
        if os.path.exists(py) and subprocess.run(
                [py, "-c", "import matplotlib"], stderr=subprocess.DEVNULL).returncode == 0:
            return True
    return False


def cmd_quick(bench):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out", "bench.json")
        plots = os.path.join(tmp, "plots")
        args = ["all", "--quick", "--backend", "host", "--json", path]
        want_plots = has_matplotlib()
        if want_plots:
            args += ["--plot", plots]
        proc = run(bench, args, cwd=tmp)
        print(proc.stdout)
        check(proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}")
        check(os.path.exists(path), "no JSON written")
        if not os.path.exists(path):
            return
        with open(path) as f:
            doc = json.load(f)  # raises (test fails) when not JSON
        check(doc.get("tool") == "funnel-bench", "tool name missing")
        check(len(doc.get("date", "")) >= 20, "date missing")
        machine = doc.get("machine", {})
        for key in ("host", "gpu_name", "nvidia_driver", "cuda_runtime", "mpi", "date"):
            check(key in machine, f"machine.{key} missing")
        check(machine.get("mpi", "") != "", "MPI version empty")
        benches = doc.get("benchmarks", {})
        table = proc.stdout.splitlines()
        for name in BENCHMARKS:
            b = benches.get(name)
            check(b is not None, f"benchmark {name} missing from the JSON")
            if b is None:
                continue
            check(any(line.startswith(name) for line in table), f"no table line for {name}")
            status = b.get("status")
            check(status in ("ok", "skipped"), f"{name}: status {status}: {b.get('reason')}")
            if status == "skipped":
                check(len(b.get("reason", "")) > 5, f"{name}: skipped without a reason")
                continue
            rows = b.get("rows", [])
            check(len(rows) > 0, f"{name}: ok but no rows")
            for row in rows:
                for key in ("baseline", "funnel", "ratio"):
                    check(finite_positive(row.get(key)), f"{name} {row.get('case')}: {key} = "
                          f"{row.get(key)}")
                if "goal" in row:
                    # Host runs never claim a goal met or missed: the goals are for an H100.
                    check(row.get("goal_applies") is False and row.get("met") is None,
                          f"{name} {row.get('case')}: goal judged on the host backend")
            check(isinstance(b.get("raw"), dict) and b["raw"], f"{name}: no raw timings")
        # On this machine scaling needs 2 GPUs and must say so.
        if "scaling" in benches:
            check(benches["scaling"]["status"] == "skipped" and
                  "needs 2 GPUs" in benches["scaling"].get("reason", ""),
                  "scaling is not skipped with 'needs 2 GPUs'")
        # --split-dims funnel,x (the quick default): both splits of the small grid, each row
        # naming the decomposition the run really had.
        stencil = benches.get("stencil", {})
        if stencil.get("status") == "ok":
            cases = [r["case"] for r in stencil["rows"]]
            check("2 ranks split 8x4x4 along x (2x1x1)" in cases, f"stencil: no x row: {cases}")
            check(any(c.startswith("2 ranks split 8x4x4 (") for c in cases),
                  f"stencil: no row of funnel's own split: {cases}")
            check({"split", "split-x"} <= set(stencil["raw"]), "stencil: raw split runs missing")
        # The numbers are this run's: the share worker's per-rank times are real measurements.
        share = benches.get("share", {})
        if share.get("status") == "ok":
            points = share["raw"]["points"]["synthetic"]
            for p in points:
                per_rank = p["detail"]["per_rank_s"]
                check(len(per_rank) == p["ranks"], "share: one time per rank expected")
                check(all(finite_positive(t) for t in per_rank), "share: bad per-rank time")
        if want_plots:
            pngs = [f for f in os.listdir(plots) if f.endswith(".png")] if os.path.isdir(plots) \
                else []
            check(len(pngs) >= 4, f"--plot wrote {pngs}")
            for f in pngs:
                check(os.path.getsize(os.path.join(plots, f)) > 1000, f"{f} is empty")


BAD = [
    (["nosuch"], "nosuch"),
    (["pool", "--steps", "x"], "'x'"),
    (["pool", "--steps", "0"], "'0'"),
    (["pool", "--bogus"], "--bogus"),
    (["pool", "--json"], "--json"),
    (["stencil", "--dtypes", "float,int"], "float,int"),
    (["stencil", "--sizes", "16,,32"], "16,,32"),
    (["share", "--ranks", "1,-2"], "1,-2"),
    (["pipeline", "--gib", "-1"], "'-1'"),
    (["pipeline", "--gib", "nan"], "'nan'"),
    (["pool", "--backend", "gpu"], "gpu"),
    (["pool", "--repeat", "0"], "'0'"),
    (["all", "--n", "5"], "--n"),
    (["pool", "extra"], "extra"),
    (["pool", "--quick=1"], "--quick"),
    (["pool", "--backend", "cuda"], "cuda"),  # no GPU here: unsupported, said in one line
    (["stencil", "--split-grid", "768,96"], "'768,96'"),
    (["stencil", "--split-dims", "funnel,y"], "funnel,y"),
    (["kernels", "--regions", "24x96"], "'24x96'"),
    (["kernels", "--regions", "24x96x1"], "'24x96x1'"),
    (["kernels", "--regions", "24x96x96,,8x8x8"], "''"),
    (["kernels", "--regions", "2000000x2000000x2"], "2^40"),
    (["kernels", "--shapes", "32x32x2"], "32x32x2"),
    (["kernels", "--planes", "-1"], "'-1'"),
]


def cmd_bad_args(bench):
    with tempfile.TemporaryDirectory() as tmp:
        for args, token in BAD:
            proc = run(bench, args + ["--json", os.path.join(tmp, "x.json")]
                       if "--json" not in args else args, cwd=tmp)
            lines = [line for line in proc.stderr.splitlines() if line.strip()]
            what = " ".join(args)
            check(proc.returncode == 2, f"'{what}': exit {proc.returncode}, expected 2")
            check(len(lines) == 1, f"'{what}': {len(lines)} stderr lines: {proc.stderr!r}")
            check(token in proc.stderr, f"'{what}': message does not name {token}: "
                  f"{proc.stderr!r}")
            check("benchmark" not in proc.stdout, f"'{what}': printed a table")
            check(not os.path.exists(os.path.join(tmp, "x.json")), f"'{what}': wrote JSON")
        # No arguments at all: the usage on stderr, exit 2.
        proc = run(bench, [])
        check(proc.returncode == 2 and "Usage" in proc.stderr, "no arguments: usage + exit 2")


def cmd_help(bench):
    proc = run(bench, ["--help"])
    check(proc.returncode == 0, "--help exit status")
    for name in BENCHMARKS + ["all"]:
        check(f"  {name}" in proc.stdout, f"--help does not list {name}")
        sub = run(bench, [name, "--help"])
        check(sub.returncode == 0, f"{name} --help: exit {sub.returncode}")
        check(f"Usage: funnel-bench {name}" in sub.stdout, f"{name} --help: usage")
        for common in ("--json", "--plot", "--quick", "--backend"):
            check(common in sub.stdout, f"{name} --help lacks {common}")
    check("--sizes" in run(bench, ["stencil", "--help"]).stdout, "stencil --help lacks --sizes")
    check("--gib" in run(bench, ["pipeline", "--help"]).stdout, "pipeline --help lacks --gib")


def cmd_launcher(bench, launcher, fake_bin):
    if not (launcher and os.access(launcher, os.X_OK) and fake_bin and os.path.isdir(fake_bin)):
        print(f"skipped: funnel-run ({launcher}) or the NVIDIA stand-ins ({fake_bin}) missing")
        sys.exit(77)
    env = dict(os.environ, PATH=fake_bin + os.pathsep + os.environ["PATH"], FAKE_GPU_COUNT="1",
               FUNNEL_BENCH_LAUNCH_ON_HOST="1", FUNNEL_BENCH_LAUNCHER=launcher)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "share.json")
        proc = run_job([bench, "share", "--quick", "--backend", "host", "--ranks", "1,2",
                        "--workloads", "synthetic", "--json", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=TIMEOUT, cwd=tmp, env=env)
        print(proc.stdout)
        check(proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}")
        if proc.returncode != 0:
            return
        with open(path) as f:
            share = json.load(f)["benchmarks"]["share"]
        check(share["status"] == "ok", f"share: {share.get('reason')}")
        cases = [r["case"] for r in share["rows"]]
        check("synthetic N=2 (b)/(a)" in cases, f"no (b)/(a) row: {cases}")
        points = share["raw"]["points"]["synthetic"]
        launches = sorted({p["launch"] for p in points})
        check(launches == ["funnel-run --mps off", "funnel-run --mps on"], f"launches {launches}")
        for p in points:
            want = "on" if p["mps"] else "off"
            check(p["detail"].get("funnel_mps") == want,
                  f"N={p['ranks']} {p['launch']}: worker saw FUNNEL_MPS={p['detail'].get('funnel_mps')}")
            check(len(p["detail"]["per_rank_s"]) == p["ranks"], "one time per rank expected")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", required=True)
    parser.add_argument("--launcher", default="")
    parser.add_argument("--fake-bin", default="")
    parser.add_argument("command", choices=["quick", "bad-args", "help", "launcher"])
    a = parser.parse_args()
    if a.command == "launcher":
        cmd_launcher(a.bench, a.launcher, a.fake_bin)
    else:
        {"quick": cmd_quick, "bad-args": cmd_bad_args, "help": cmd_help}[a.command](a.bench)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
