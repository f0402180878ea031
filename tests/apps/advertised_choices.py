#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Runs every choice a program's --help advertises, at a tiny size (driver for ctest).

  stencil    funnel-stencil --help: each `--opt a|b|c` choice, one run each on 2 ranks; the run
             must end with 0 and its --summary must show the choice where it names it
  bench      funnel-bench --help of every benchmark: each choice of `--opt a|b` and of lists
             `--opt a|b[,...]` with --quick; the benchmark must report "ok" in its JSON
  funnel-run funnel-run --help: each choice of `--opt a|b` (and --policy's, named in its text)
             under mpirun with the stand-ins for the NVIDIA tools (tests/launch/fake-bin),
             starting funnel-stencil on the host backend
With --gpu only the choices that need a GPU run (--backend cuda, --kernel cuda, scaling), and
without one the test reports skipped (77); without --gpu those are left out. An option with
choices this driver has no recipe for fails the test, so a new advertised path gets one.
Options: --app/--bench/--launcher PATH, --mpiexec PATH, --fake-bin DIR
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from driver_support import gpu_visible
from proctree import run_job  # noqa: E402 (driver_support puts tests/support on the path)

TIMEOUT = 120
OPTION = re.compile(r"^  (--[a-z0-9-]+)[ ]+(\S+)")
WORD = re.compile(r"[a-z][a-z0-9-]*")


def advertised(help_text):
    """[(option, [choices])] from the lines `  --opt a|b|c ...` of a help text; upper-case
    alternatives are placeholders (N|auto advertises auto only)."""
    found = []
    for line in help_text.splitlines():
        match = OPTION.match(line)
        if not match or "|" not in match.group(2):
            continue
        token = match.group(2).replace("[,...]", "").strip("[]")
        words = [w for w in token.split("|") if WORD.fullmatch(w)]
        if words:
            found.append((match.group(1), words))
    return found


class Runner:
    def __init__(self, ctx, workdir):
        self.ctx = ctx
        self.workdir = workdir
        self.failures = []
        self.ran = 0

    def run(self, what, cmd, env=None):
        self.ran += 1
        try:
            proc = run_job(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT, cwd=self.workdir, env=env)
        except subprocess.TimeoutExpired:
            self.failures.append(f"{what}: no exit within {TIMEOUT} s")
            return None
        print(f"{what}: exit {proc.returncode}")
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr)[-1500:]
            self.failures.append(f"{what}: exit {proc.returncode}: {' '.join(cmd)}\n{tail}")
            return None
        return proc

    def mpirun(self, ranks):
        return [self.ctx.mpiexec, "-np", str(ranks), "--oversubscribe"]


# ---- funnel-stencil ---------------------------------------------------------------------------
STENCIL_BASE = ["--backend", "host", "--n", "12,10,8", "--steps", "2", "--quiet"]


def stencil_recipe(option, choice, workdir):
    """(arguments, needs a GPU, summary key that must show the choice) for one choice, None for
    an option this driver does not know."""
    base = STENCIL_BASE
    if option == "--problem" and choice == "jacobi2d":
        base = ["--backend", "host", "--n", "12,10", "--steps", "2", "--quiet"]
    recipes = {
        "--problem": ([], False, "problem"),
        "--backend": ([], choice == "cuda", None if choice == "auto" else "backend"),
        "--kernel": (["--backend", "cuda"] if choice == "cuda" else [], choice == "cuda", "kernel"),
        "--mode": ([], False, "mode"),
        "--halo": ([], False, None),
        "--halo-overlap": ([], False, "halo_overlap"),
        "--graphs": ([], False, "graphs"),
        "--placement": ([], False, "placement"),
        "--halo-depth": ([], False, None),
        "--steps-per-launch": ([], False, None),
        "--row-align": ([], False, None),  # 16 (a number): the stencil_*_rows16 tests
        "--dtype": ([], False, "dtype"),
        "--output-overlap": (["--output-every", "1", "--output-dir",
                              os.path.join(workdir, f"out-{choice}")], False, None),
    }
    if option not in recipes:
        return None
    extra, gpu, key = recipes[option]
    return base + [option, choice] + extra, gpu, key


def cmd_stencil(ctx, runner):
    help_text = subprocess.run([ctx.app, "--help"], stdout=subprocess.PIPE, text=True,
                               check=True).stdout
    choices = advertised(help_text)
    print("advertised:", choices)
    for option, words in choices:
        for choice in words:
            recipe = stencil_recipe(option, choice, runner.workdir)
            if recipe is None:
                runner.failures.append(f"no recipe for {option} {choice}: add one to this driver")
                continue
            args, gpu, key = recipe
            if gpu != ctx.gpu:
                continue
            summary = os.path.join(runner.workdir, "summary.json")
            proc = runner.run(f"funnel-stencil {option} {choice}",
                              runner.mpirun(2) + [ctx.app] + args + ["--summary", summary])
            if proc is None:
                continue
            with open(summary) as f:
                shown = json.load(f)
            if key is not None and shown.get(key) != choice:
                runner.failures.append(f"{option} {choice}: the summary says {key} = "
                                       f"{shown.get(key)}")


# ---- funnel-bench -----------------------------------------------------------------------------
def cmd_bench(ctx, runner):
    overview = subprocess.run([ctx.bench, "--help"], stdout=subprocess.PIPE, text=True,
                              check=True).stdout
    commands = re.findall(r"^  ([a-z]+)  ", overview, re.M)
    print("benchmarks:", commands)
    for command in commands:
        if command == "all":
            continue  # the common options are run with each benchmark below
        help_text = subprocess.run([ctx.bench, command, "--help"], stdout=subprocess.PIPE,
                                   text=True, check=True).stdout
        for option, words in advertised(help_text):
            for choice in words:
                needs_gpu = command == "scaling" or choice == "cuda"
                if needs_gpu != ctx.gpu:
                    continue
                out = os.path.join(runner.workdir, f"{command}{option}-{choice}.json")
                backend = [] if option == "--backend" else ["--backend", "auto" if ctx.gpu else
                                                            "host"]
                proc = runner.run(f"funnel-bench {command} {option} {choice}",
                                  [ctx.bench, command, "--quick", option, choice, "--json", out] +
                                  backend)
                if proc is None:
                    continue
                with open(out) as f:
                    result = json.load(f)["benchmarks"][command]
                if result["status"] == "skipped" and ctx.gpu:
                    print(f"  skipped by the benchmark: {result.get('reason')}")
                    runner.not_run.append(f"funnel-bench {command} {option} {choice}")
                elif result["status"] != "ok":
                    runner.failures.append(f"funnel-bench {command} {option} {choice}: "
                                           f"{result['status']}: {result.get('reason')}")


# ---- funnel-run -------------------------------------------------------------------------------
def policy_choices(help_text):
    """--policy's choices, named in its text as `word (default):` / `word:`."""
    match = re.search(r"^  --policy \S+\s+(.*?)\[FUNNEL_POLICY\]", help_text, re.M | re.S)
    return re.findall(r"([a-z][a-z-]+)(?: \(default\))?: ", match.group(1)) if match else []


def cmd_funnel_run(ctx, runner):
    if not (ctx.launcher and os.access(ctx.launcher, os.X_OK) and ctx.fake_bin):
        print("skipped: funnel-run or the NVIDIA stand-ins are missing")
        sys.exit(77)
    help_text = subprocess.run([ctx.launcher, "--help"], stdout=subprocess.PIPE, text=True,
                               check=True).stdout
    choices = advertised(help_text) + [("--policy", policy_choices(help_text))]
    print("advertised:", choices)
    if not choices[-1][1]:
        runner.failures.append("funnel-run --help names no --policy choice")
    tmp = os.path.join(runner.workdir, "funnel-run")
    os.makedirs(tmp)
    env = dict(os.environ, PATH=ctx.fake_bin + os.pathsep + os.environ["PATH"],
               FAKE_GPU_COUNT="2", FUNNEL_TMPDIR=tmp, FUNNEL_JOB_ID=f"choices{os.getpid()}",
               FUNNEL_REAPER_INTERVAL="0.2", FUNNEL_MPS_QUIT_WAIT="5")
    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"):
        env.pop(name, None)
    app = [ctx.app] + STENCIL_BASE
    try:
        for option, words in choices:
            for choice in words:
                runner.run(f"funnel-run {option} {choice}",
                           runner.mpirun(2) + [ctx.launcher, option, choice, "--"] + app, env)
    finally:
        # Stop whatever daemon the runs left (the reaper normally has); then nothing may remain.
        subprocess.run([ctx.launcher, "--cleanup", "--job", env["FUNNEL_JOB_ID"]], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("program", choices=["stencil", "bench", "funnel-run"])
    parser.add_argument("--app", default="")
    parser.add_argument("--bench", default="")
    parser.add_argument("--launcher", default="")
    parser.add_argument("--mpiexec", default="mpirun")
    parser.add_argument("--fake-bin", default="")
    parser.add_argument("--gpu", action="store_true")
    ctx = parser.parse_args()
    if ctx.gpu and not gpu_visible():
        print("skipped: the GPU choices need a GPU and none is visible")
        return 77
    with tempfile.TemporaryDirectory(prefix="funnel-choices-") as workdir:
        runner = Runner(ctx, workdir)
        runner.not_run = []  # choices that need more than this machine has (e.g. 2 GPUs)
        {"stencil": cmd_stencil, "bench": cmd_bench,
         "funnel-run": cmd_funnel_run}[ctx.program](ctx, runner)
    if runner.failures:
        print("FAILED:\n" + "\n".join(runner.failures))
        return 1
    ran = runner.ran - len(runner.not_run)
    if ran == 0:
        print("skipped: no advertised choice of this kind could run here")
        return 77
    print(f"OK: {ran} advertised choices ran" +
          (f"; {len(runner.not_run)} could not run here: " + ", ".join(runner.not_run)
           if runner.not_run else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
