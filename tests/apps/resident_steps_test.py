#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""funnel-stencil's resident steps under real mpirun (driver for ctest).

  converge -- RANKS ARGS...   jacobi2d (ARGS: a small grid, -nccheck N, no -niter) reads its
                              norm one step late and drops the step enqueued meanwhile when it
                              converged; the run must still stop exactly where the reference
                              does: after the first checked update k whose norm is <= 1e-8.
                              Checks: the run stops at such a k; a run of k - 1 updates does not
                              converge (so no earlier check did); the field of RANKS ranks
                              stopped by convergence is bitwise the field of 1 rank run for
                              exactly k updates.
  stall -- RANKS ARGS...      one rank is stopped (SIGSTOP) mid-run: its neighbours' halo
                              watchdog (FUNNEL_HALO_TIMEOUT=2) ends the job within seconds, with
                              a line naming the stopped rank; nothing is left running.
  kill -- RANKS ARGS...       one rank is killed (SIGKILL) mid-run: the job ends within seconds
                              with a non-zero status; nothing is left running, and a one-rank
                              run of the same ARGS (10 steps) works right after it.
Common options: --app PATH --mpiexec PATH --np-flag FLAG [--preflags ...]
Exit status 0 when every check passed, 1 otherwise (77: skipped).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from proctree import descendants, kill_all, run_job  # noqa: E402

TIMEOUT = 180
TOLERANCE = 1.0e-8


def fail(message):
    sys.exit(f"FAILED: {message}")


def mpirun_cmd(ctx, ranks, args):
    return [ctx.mpiexec, ctx.np_flag, str(ranks)] + ctx.preflags + [ctx.app] + args


def run(ctx, ranks, args, name):
    """One run; returns (summary dict, field bytes)."""
    summary = os.path.join(ctx.workdir, name + ".json")
    field = os.path.join(ctx.workdir, name + ".field")
    cmd = mpirun_cmd(ctx, ranks, args + ["--quiet", "--summary", summary, "--field-dump", field])
    proc = run_job(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                   timeout=TIMEOUT, cwd=ctx.workdir)
    if proc.returncode != 0:
        fail(f"({proc.returncode}) {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    with open(summary, encoding="utf-8") as f:
        result = json.load(f)
    with open(field, "rb") as f:
        return result, f.read()


def converge(ctx, rest):
    ranks, args = int(rest[0]), rest[1:]
    nccheck = int(args[args.index("-nccheck") + 1])
    big = 100000
    first, field = run(ctx, ranks, args + ["-niter", str(big)], "converged")
    k = first["last_step"]
    norm = first["final_norm"]
    print(f"{ranks} rank(s): converged after update {k}, norm {norm:.3e}")
    if not 0 < k < big or norm > TOLERANCE:
        fail(f"expected a convergence stop before {big} with norm <= {TOLERANCE}: "
             f"update {k}, norm {norm}")
    if (k - 1) % nccheck != 0 and k % 100 != 0:
        fail(f"update {k} is not a checked update (-nccheck {nccheck}, and every 100th)")
    before, _ = run(ctx, ranks, args + ["-niter", str(k - 1)], "before")
    if before["last_step"] != k - 1 or not before["final_norm"] > TOLERANCE:
        fail(f"a run of {k - 1} updates stopped at {before['last_step']} with norm "
             f"{before['final_norm']}: an earlier check had converged")
    _, exact = run(ctx, 1, args + ["-niter", str(k), "--dims", "1,1"], "exact")
    if exact != field:
        fail(f"the field of {ranks} rank(s) stopped by convergence differs from 1 rank run "
             f"for exactly {k} updates (was the step run past the check dropped?)")
    print("OK")


def rank_pids(root):
    """pid of each funnel-stencil rank under mpirun, by OMPI_COMM_WORLD_RANK."""
    pids = {}
    for pid in descendants(root):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
            with open(f"/proc/{pid}/comm", encoding="utf-8") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm.startswith("funnel-stencil") and b"OMPI_COMM_WORLD_RANK" in env:
            pids[int(env[b"OMPI_COMM_WORLD_RANK"])] = pid
    return pids


def stall(ctx, rest, sig=signal.SIGSTOP):
    ranks, args = int(rest[0]), rest[1:]
    env = dict(os.environ, FUNNEL_HALO_TIMEOUT="2")
    cmd = mpirun_cmd(ctx, ranks, args)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ctx.workdir, start_new_session=True)
    stopped = None
    try:
        deadline = time.time() + 60
        while time.time() < deadline and stopped is None:
            time.sleep(0.5)
            pids = rank_pids(proc.pid)
            if len(pids) == ranks:
                time.sleep(1.0)  # into the steps
                stopped = pids[1]
                os.kill(stopped, sig)
        if stopped is None:
            fail("the ranks did not start")
        started = time.time()
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            hung = rank_pids(proc.pid).get(0)
            where = ""
            if hung and shutil.which(os.environ.get("FUNNEL_DEBUGGER", "cuda-gdb")):
                where = subprocess.run(
                    [os.environ.get("FUNNEL_DEBUGGER", "cuda-gdb"), "-p", str(hung), "-batch",
                     "-ex", "thread apply all bt"], stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, text=True, timeout=60, check=False).stdout
            fail("the job did not end within 30 s of one rank being stopped; rank 0 is at:\n"
                 + "\n".join(line for line in where.splitlines() if line.startswith("#"))[:6000])
        took = time.time() - started
    finally:
        kill_all(descendants(proc.pid) + ([stopped] if stopped else []))
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print(f"job ended {took:.1f} s after rank 1 got {signal.Signals(sig).name}, "
          f"exit status {proc.returncode}")
    if proc.returncode == 0:
        fail(f"exit status 0 although a rank was stopped\n{out}\n{err}")
    left = [p for p in descendants(proc.pid)]
    if sig == signal.SIGKILL:
        if left:
            fail(f"processes left after the job: {left}")
        steps = args.index("--steps")
        after = run_job(mpirun_cmd(ctx, 1, args[:steps] + ["--steps", "10", "--quiet"]
                                   + args[steps + 2:] + ["--dims", "1,1,1"]),
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        timeout=TIMEOUT, cwd=ctx.workdir)
        if after.returncode != 0:
            fail(f"a run right after the killed job failed ({after.returncode}):\n{after.stderr}")
        print("a one-rank run right after it: OK")
        print("OK")
        return
    lines = [line for line in err.splitlines() if "stalled" in line]
    if not any("neighbour rank 1 " in line and "is stopped" in line for line in lines):
        fail(f"no line names the stopped rank 1:\n{err}")
    print(lines[0])
    print("OK")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app", required=True)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--np-flag", default="-np")
    parser.add_argument("--preflags", default="")
    parser.add_argument("command", choices=["converge", "stall", "kill"])
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    ctx = parser.parse_args()
    ctx.preflags = ctx.preflags.split()
    rest = ctx.rest[1:] if ctx.rest[:1] == ["--"] else ctx.rest
    if "--backend" in rest and rest[rest.index("--backend") + 1] == "cuda":
        probe = subprocess.run([ctx.app, "--backend", "cuda", "--n", "4,4,4", "--steps", "1",
                                "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=TIMEOUT, check=False)
        if probe.returncode != 0:
            print("skipped: the cuda backend is not usable here")
            sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="funnel-resident-") as workdir:
        ctx.workdir = workdir
        if ctx.command == "kill":
            stall(ctx, rest, signal.SIGKILL)
        else:
            {"converge": converge, "stall": stall}[ctx.command](ctx, rest)


if __name__ == "__main__":
    main()
