#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""funnel-report end to end on synthetic records (report_make_records): the lines on stderr,
the exit status, and report.json read back with python's json module (a reader that shares no
code with funnel-report).

Usage: report_cli_test.py CASE --report FUNNEL_REPORT --make-records TOOL --work DIR
Cases: mps_on time_sliced damaged unwritable usage empty plot. Exit 0 passed, 1 failed,
77 skipped.
"""
import argparse
import json
import os
import shutil
import stat
import subprocess
import sys

SKIP = 77


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


def run(cmd, **kwargs):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kwargs)
    return p.returncode, p.stdout, p.stderr.splitlines()


def line_starting(lines, text):
    for line in lines:
        if line.startswith(text):
            return line
    raise Failure(f"no line starting {text!r} in:\n" + "\n".join(lines))


def report_of(args, scenario, *extra):
    records = os.path.join(args.work, "records")
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    subprocess.run([args.make_records, scenario, records], check=True)
    out = os.path.join(args.work, "report")
    rc, _, lines = run([args.report, records, "--out", out, "--plot", "off", *extra])
    print("\n".join(lines))
    data = None
    path = os.path.join(out, "report.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    return rc, lines, data, records, out


def near(a, b, tol=1e-6):
    return abs(a - b) <= tol


def case_mps_on(args):
    rc, lines, data, records, out = report_of(args, "mps_on", "--option", "policy=packed")
    check(rc == 0, f"status {rc}")
    p = "funnel-report: "
    check(line_starting(lines, p + "node synthetic-node: 4 records in ").endswith("job wall 10.00 s"),
          "first line")
    line_starting(lines, p + "GPU 0 GPU-00000000-1111-2222-3333-444444444444 (Synthetic GPU): "
                  "4 ranks, MPS on, wall 10.00 s")
    line_starting(lines, p + "  busy 80 % of the job (kernels 80 %, copies 1 %); ranks at once "
                  "4.0 (kernels 4.0), at most 4")
    line_starting(lines, p + "  verdict: MPS let 4.0 ranks' kernels run at once; the GPU was busy "
                  "80 % of the job")
    check(lines[-1] == p + "written: " + os.path.join(out, "report.json"), "last line")
    g = data["gpus"][0]
    check(near(g["busy_fraction"], 0.8), "busy_fraction")
    check(near(g["kernel_ranks_at_once"], 4.0), "kernel_ranks_at_once")
    check(g["max_ranks_at_once"] == 4, "max_ranks_at_once")
    check(near(g["time_at_count_s"][4], 8.0), "time_at_count_s")
    check(g["verdict"]["rule"] == "mps_concurrent", "rule")
    check(len(g["timeline"]["busy"]) == 400, "timeline bins")
    check(near(sum(g["timeline"]["busy"]) * g["timeline"]["bin_s"], 8.0, 1e-6), "timeline area")
    check(all(near(r["gpu_s"], 8.0) for r in g["ranks"]), "per-rank GPU time")
    check(data["options"]["launcher"] == {"policy": "packed"}, "launcher options")
    check(data["machine"]["cuda_driver_version"] == "13.0", "machine")
    check(data["job"]["clock"] == "monotonic", "clock")
    check(near(data["job"]["start_realtime_s"], 1767225600.0), "job start")
    check(data["missing"] == [] and data["damaged"] == [], "nothing missing")


def case_time_sliced(args):
    rc, lines, data, _, _ = report_of(args, "time_sliced", "--mps", "off")
    check(rc == 0, f"status {rc}")
    p = "funnel-report: "
    line_starting(lines, p + "  GPU time per rank: min 500.0 ms (rank 0), max 500.0 ms (rank 0), "
                  "mean 500.0 ms, CV 0.00")
    line_starting(lines, p + "  verdict: the GPU was busy 20 %: 4 ranks time-sliced, try --mps on")
    g = data["gpus"][0]
    check(near(g["busy_fraction"], 0.2) and near(g["ranks_at_once"], 1.0), "figures")
    check(g["mps"] == "off" and data["options"]["mps"] == "off", "mps")


def case_damaged(args):
    rc, lines, data, _, _ = report_of(args, "damaged", "--expect-ranks", "5")
    check(rc == 0, f"status {rc}")
    p = "funnel-report: "
    line_starting(lines, p + "node synthetic-node: 5 records in ")
    line_starting(lines, p + "  busy 20 % of the job")
    line_starting(lines, p + "ended early (no end marker; their records so far count):")
    text = " ".join(x[len(p):].strip() for x in lines)  # the list may wrap
    for rank in ("rank 1 (last seen at 10.00 s)", "rank 2 (last seen at 5.00 s)",
                 "rank 3 (last seen at 6.00 s)"):
        check(rank in text, f"{rank} ended early")
    line_starting(lines, p + "damaged: junk.record: not a funnel record (no chunk magic)")
    cut = line_starting(lines, p + "damaged: rank-1.record: chunk ")
    check("cut short" in cut, cut)
    bad = line_starting(lines, p + "damaged: rank-2.record: chunk ")
    check("checksum mismatch" in bad, bad)
    line_starting(lines, p + "missing: local rank 4 (no record")
    check(data["missing"] == ["local rank 4"], "missing in json")
    check(len(data["damaged"]) == 3, "damaged in json")
    ranks = {r["label"]: r for r in data["ranks"]}
    check(ranks["rank 3"]["ended_early"] and near(ranks["rank 3"]["end_s"], 6.0), "rank 3")
    check(not ranks["rank 0"]["ended_early"], "rank 0")
    check(near(data["gpus"][0]["busy_s"], 2.0), "the damaged records' spans still count")
    check(data["gpus"][0]["mps"] == "off", "mps from the records")


def case_unwritable(args):
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    records = os.path.join(args.work, "records")
    subprocess.run([args.make_records, "time_sliced", records], check=True)
    blocker = os.path.join(args.work, "a-file")
    with open(blocker, "w", encoding="utf-8") as f:
        f.write("x")
    rc, _, lines = run([args.report, records, "--out", os.path.join(blocker, "report")])
    print("\n".join(lines))
    check(rc == 1, f"status {rc}")
    line_starting(lines, "funnel-report:   verdict:")  # the block is printed all the same
    check(lines[-1].startswith("funnel-report: cannot write the report to '" + blocker), lines[-1])
    check(sum(1 for x in lines if "cannot write" in x) == 1, "one line")
    # A directory the user may not write (root may write anywhere: checked as others only).
    if os.geteuid() != 0:
        locked = os.path.join(args.work, "locked")
        os.makedirs(locked)
        os.chmod(locked, stat.S_IRUSR | stat.S_IXUSR)
        rc, _, lines = run([args.report, records, "--out", locked])
        os.chmod(locked, stat.S_IRWXU)
        check(rc == 1 and "Permission denied" in lines[-1], lines[-1])


def case_usage(args):
    rc, _, lines = run([args.report, args.work, "--mps", "maybe"])
    check(rc == 2 and len(lines) == 1, f"status {rc}: {lines}")
    check(lines[0].startswith("funnel-report: error: --mps 'maybe' is not valid"), lines[0])
    rc, _, lines = run([args.report])
    check(rc == 2 and len(lines) == 1, f"status {rc}: {lines}")
    rc, _, lines = run([args.report, os.path.join(args.work, "no-such-dir")])
    check(rc == 3 and len(lines) == 1, f"status {rc}: {lines}")
    check("cannot read the record directory" in lines[0], lines[0])
    rc, _, lines = run([args.report, args.work, "--job-start", "yesterday"])
    check(rc == 2 and "--job-start 'yesterday' is not valid" in lines[0], lines)
    rc, out, _ = run([args.report, "--help"])
    check(rc == 0 and "Exit status" in out and "--expect-ranks" in out, "help")


def case_empty(args):
    rc, lines, data, _, _ = report_of(args, "empty", "--expect-ranks", "2")
    check(rc == 0, f"status {rc}")
    line_starting(lines, "funnel-report: no rank left a usable record")
    line_starting(lines, "funnel-report: missing: local rank 0, local rank 1")
    check(data["gpus"] == [] and data["job"]["records"] == 0, "empty report")


def python_with_matplotlib():
    for python in ("/usr/bin/python3", shutil.which("python3")):
        if python and subprocess.run([python, "-c", "import matplotlib"],
                                     capture_output=True).returncode == 0:
            return python
    return None


def case_plot(args):
    python = python_with_matplotlib()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    records = os.path.join(args.work, "records")
    subprocess.run([args.make_records, "mps_on", records], check=True)
    # A python3 without matplotlib (a stand-in module that fails to import): one line, status 0.
    fake = os.path.join(args.work, "no-matplotlib")
    os.makedirs(fake)
    with open(os.path.join(fake, "matplotlib.py"), "w", encoding="utf-8") as f:
        f.write("raise ImportError('no matplotlib here')\n")
    env = dict(os.environ, PYTHONPATH=fake)
    rc, _, lines = run([args.report, records, "--python", sys.executable], env=env)
    print("\n".join(lines))
    check(rc == 0, f"status {rc}")
    line_starting(lines, f"funnel-report: report.png skipped: {sys.executable} has no matplotlib")
    check(not os.path.exists(os.path.join(records, "report.png")), "no png")
    if python is None:
        print("skipped: no python3 with matplotlib here")
        return SKIP
    rc, _, lines = run([args.report, records, "--python", python])
    print("\n".join(lines))
    png = os.path.join(records, "report.png")
    check(rc == 0 and lines[-1].endswith(", " + png), lines[-1])
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "a PNG")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case")
    parser.add_argument("--report", required=True)
    parser.add_argument("--make-records", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    case = globals().get("case_" + args.case)
    if case is None:
        print(f"unknown case {args.case}", file=sys.stderr)
        return 2
    try:
        return case(args) or 0
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
