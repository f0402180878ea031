#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""What srun and mpirun return when a signal stops funnel-stencil, and the README's job scripts
run as written there (driver for ctest; docs/stencil.md has the table these checks hold to).

  mpirun RANKS    under mpirun alone: SIGUSR1 to mpirun -> 75; SIGUSR1 and SIGTERM to the
                  ranks -> 75; SIGTERM to mpirun -> 1, the ranks having checkpointed (the
                  --summary says "interrupted")
  srun RANKS      under srun in a real single-node Slurm (run inside tests/launch/
                  slurm-harness.sh): SIGUSR1 to srun -> 75; scancel --signal=USR1 (how
                  --signal=USR1@T arrives) -> 75; scancel (SIGTERM to the tasks) -> 75; SIGTERM to
                  srun -> the step is cancelled, no checkpoint
  recipe NAME     the README's "recipe: NAME" script (srun or mpirun) submitted with sbatch
                  (in the harness), made to run here (2 tasks on this node, the host backend,
                  a small grid, the launch tests' stand-ins for the NVIDIA tools): the warning
                  Slurm sends for --signal (scancel --signal=USR1, or with --batch for B:)
                  stops the run at a step with a checkpoint, the script requeues the job, and
                  the requeued job restarts from that checkpoint and completes (exit 0)
Options: --app PATH --launcher PATH (funnel-run) --fake-bin DIR --mpiexec PATH --readme PATH
Exits 77 (skipped) when srun/sbatch is missing (outside the harness).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from driver_support import check, exit_status, ranks_of
from proctree import end_tree  # noqa: E402 (driver_support puts tests/support on the path)

TIMEOUT = 90
RECIPE_STEPS = 100000


def app_args(ctx, name):
    return ["--backend", "host", "--n", "24,20,16", "--steps", "100000000", "--quiet",
            "--checkpoint-dir", os.path.join(ctx.workdir, f"ckpt-{name}"), "--summary",
            os.path.join(ctx.workdir, f"{name}.json")]


def stopped(ctx, name, launcher, ranks, send, want_status, want_checkpoint=True):
    """Starts the app under `launcher`, and once the ranks step (the plan's last line is printed
    just before the first step) sends the signal with send(proc); checks the launcher's status
    and the checkpoint."""
    proc = subprocess.Popen(launcher + [ctx.app] + app_args(ctx, name), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ctx.workdir)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("  halo:"):
            break
    time.sleep(1.0)
    send(ctx, proc, ranks)
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        end_tree(proc)
        check(False, f"{name}: no exit after the signal")
        return
    out = "".join(seen) + out
    latest = os.path.exists(os.path.join(ctx.workdir, f"ckpt-{name}", "latest"))
    print(f"{name}: launcher returned {proc.returncode}, checkpoint {latest}")
    check(proc.returncode == want_status,
          f"{name}: launcher returned {proc.returncode}, expected {want_status}\n{out[-2000:]}")
    check(latest == want_checkpoint, f"{name}: checkpoint written: {latest}")
    if want_checkpoint:
        with open(os.path.join(ctx.workdir, f"{name}.json")) as f:
            check(json.load(f)["interrupted"], f"{name}: the summary is not 'interrupted'")


def to_process(sig):
    return lambda ctx, proc, ranks: os.kill(proc.pid, sig)


def to_ranks(sig):
    def send(ctx, proc, ranks):
        pids = ranks_of(proc.pid, ctx.app)
        check(len(pids) == ranks, f"{len(pids)} of {ranks} ranks found below the launcher")
        for pid in pids:
            os.kill(pid, sig)
    return send


def case_mpirun(ctx, ranks):
    launcher = [ctx.mpiexec, "-np", str(ranks)]
    stopped(ctx, "usr1-to-mpirun", launcher, ranks, to_process(signal.SIGUSR1), 75)
    stopped(ctx, "usr1-to-ranks", launcher, ranks, to_ranks(signal.SIGUSR1), 75)
    stopped(ctx, "term-to-ranks", launcher, ranks, to_ranks(signal.SIGTERM), 75)
    stopped(ctx, "term-to-mpirun", launcher, ranks, to_process(signal.SIGTERM), 1)


def need_slurm():
    if not (shutil.which("srun") and shutil.which("sbatch") and os.environ.get("SLURM_CONF")):
        print("skipped: needs the Slurm of tests/launch/slurm-harness.sh")
        sys.exit(77)


def job_of_step():
    out = subprocess.run(["squeue", "-h", "-o", "%i"], stdout=subprocess.PIPE, text=True).stdout
    return out.split()[0] if out.split() else None


def case_srun(ctx, ranks):
    need_slurm()
    launcher = ["srun", "--mpi=pmix", "--overcommit", "-N", "1", "-n", str(ranks)]

    def scancel(*options):
        return lambda ctx, proc, ranks: subprocess.run(["scancel", *options, job_of_step()])

    stopped(ctx, "usr1-to-srun", launcher, ranks, to_process(signal.SIGUSR1), 75)
    stopped(ctx, "scancel-usr1", launcher, ranks, scancel("--signal=USR1"), 75)
    stopped(ctx, "scancel", launcher, ranks, scancel(), 75)
    stopped(ctx, "term-to-srun", launcher, ranks, to_process(signal.SIGTERM), 137,
            want_checkpoint=False)


# ---- the README's job scripts ----------------------------------------------------------------
def recipe_script(ctx, name):
    """The README's script for `name`, made to run here; every substitution must apply, so a
    changed recipe fails the test rather than running something else."""
    with open(ctx.readme) as f:
        readme = f.read()
    match = re.search(r"<!-- recipe: " + name + r"\b.*?-->\n```sh\n(.*?)```", readme, re.S)
    if not check(match, f"README has no 'recipe: {name}' block"):
        return None
    script = match.group(1)
    # Steps for a few seconds on a fast machine: the warning comes well before the end, and the
    # requeued run still finishes quickly on a slow one.
    app = f"{ctx.app} --backend host --quiet --n 24,20,16 --steps {RECIPE_STEPS}"
    substitutions = [
        (r"funnel-stencil --n 1024,1024,1024 --steps 100000", app),
        (r"\bfunnel-run\b", ctx.launcher),
        # OpenMPI here needs Slurm's PMIx under srun.
        (r"^srun ", "srun --mpi=pmix --overcommit ") if name == "srun" else
        (r"^mpirun ", f"{ctx.mpiexec} --oversubscribe "),
    ]
    for pattern, replacement in substitutions:
        script, count = re.subn(pattern, replacement, script, flags=re.M)
        check(count > 0, f"recipe {name}: '{pattern}' not found")
    # This Slurm has no GPUs to give.
    return re.sub(r"^#SBATCH --gpus-per-node=.*\n", "", script, flags=re.M)


def job_field(job, field):
    out = subprocess.run(["scontrol", "show", "job", job], stdout=subprocess.PIPE,
                         text=True).stdout
    match = re.search(field + r"=(\S+)", out)
    return match.group(1) if match else ""


def wait_until(what, condition, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return check(False, f"timed out waiting for {what}")


def case_recipe(ctx, name):
    need_slurm()
    script = recipe_script(ctx, name)
    if script is None:
        return
    path = os.path.join(ctx.workdir, f"{name}.sbatch")
    with open(path, "w") as f:
        f.write(script)
    output = os.path.join(ctx.workdir, f"{name}.out")
    env = dict(os.environ, SCRATCH=ctx.workdir, PATH=ctx.fake_bin + os.pathsep +
               os.environ["PATH"], FAKE_GPU_COUNT="1", FUNNEL_TMPDIR=ctx.workdir,
               FUNNEL_REAPER_INTERVAL="0.2", FUNNEL_MPS_QUIT_WAIT="5")
    job = subprocess.run(["sbatch", "--parsable", "--nodes=1", "--ntasks-per-node=2",
                          "--overcommit", "--open-mode=append", f"--output={output}", path],
                         stdout=subprocess.PIPE, text=True, env=env, check=True).stdout.strip()
    print(f"recipe {name}: job {job}")

    def log():
        try:
            with open(output) as f:
                return f.read()
        except OSError:
            return ""
    try:
        # The plan's last line is printed just before the first step.
        if not wait_until("the first step", lambda: "  halo:" in log(), 60):
            return
        # How Slurm delivers --signal=USR1@T (to the steps' tasks) and B:USR1@T (to the script).
        subprocess.run(["scancel", "--signal=USR1"] + (["--batch"] if name == "mpirun" else []) +
                       [job])
        if not wait_until("the requeue", lambda: job_field(job, "Restarts") == "1", 60):
            return
        # A requeued job waits a minute or two before it may start again (slurmd refuses a job
        # credential from the second its previous one was revoked in): once the node has
        # finished with the first run and that second has passed, let it start now.
        def requeued_and_idle():
            node = subprocess.run(["sinfo", "-h", "-o", "%t"], stdout=subprocess.PIPE,
                                  text=True).stdout.split()
            return job_field(job, "JobState") == "PENDING" and node == ["idle"]
        if not wait_until("the node to be idle after the first run", requeued_and_idle, 60):
            return
        time.sleep(2.0)
        subprocess.run(["scontrol", "update", f"JobId={job}", "StartTime=now"])
        wait_until("the requeued job's end",
                   lambda: job_field(job, "JobState") in ("COMPLETED", "FAILED", "CANCELLED"),
                   120)
    finally:
        text = log()
        print(text[-3000:])
        subprocess.run(["scancel", job], stderr=subprocess.DEVNULL)
        # Once the job's ranks are gone, funnel-run's reaper stops the job's MPS daemon and
        # removes the job directory: nothing of it may stay (and the test's own directory is
        # removed only after it, not while the reaper still works in it).
        wait_until("funnel-run's reaper to remove the job directory",
                   lambda: not any(name.startswith("funnel-run-")
                                   for name in os.listdir(ctx.workdir)), 30)
    state, code = job_field(job, "JobState"), job_field(job, "ExitCode")
    check(state == "COMPLETED" and code == "0:0", f"recipe {name}: job {state} {code}")
    stop = re.search(r"stopped by a signal at step (\d+): checkpoint written, exit status 75", text)
    if check(stop, f"recipe {name}: the first run was not stopped with a checkpoint"):
        step = int(stop.group(1))
        check(f"ckpt-{step:08d}" in text, f"recipe {name}: no restart from ckpt-{step:08d}")
        check(re.search(rf"steps {step}\.\.{RECIPE_STEPS} \(", text),
              f"recipe {name}: the requeued run did not finish from step {step}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["mpirun", "srun", "recipe"])
    parser.add_argument("arg")
    parser.add_argument("--app", required=True)
    parser.add_argument("--launcher", default="")
    parser.add_argument("--fake-bin", default="")
    parser.add_argument("--mpiexec", default="mpirun")
    parser.add_argument("--readme", default="")
    ctx = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="funnel-recipes-") as workdir:
        ctx.workdir = workdir
        if ctx.case == "recipe":
            case_recipe(ctx, ctx.arg)
        else:
            {"mpirun": case_mpirun, "srun": case_srun}[ctx.case](ctx, int(ctx.arg))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
