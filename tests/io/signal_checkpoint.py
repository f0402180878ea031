#!/usr/bin/python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""SIGUSR1 (to mpirun, which forwards it to every rank, as Slurm's --signal=B:USR1 does to the
job step) and SIGTERM (to one rank only) must make the job checkpoint the current step on all
ranks and exit with funnel::io::termination_request::requeue_exit_code (75); the checkpoint
must then verify and read back bitwise on another number of ranks."""
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from proctree import descendants, end_tree  # noqa: E402

import io_driver

REQUEUE = 75


def one_case(args, target, signum, seed):
    with tempfile.TemporaryDirectory(prefix="funnel-signal-") as tmp:
        ckpt = os.path.join(tmp, "ckpt")
        job = subprocess.Popen(
            [args.mpiexec, args.np_flag, "2", args.tool, "signal", ckpt, args.mode, seed],
            stdout=subprocess.PIPE, text=True, start_new_session=True)
        if job.stdout.readline().strip() != "ready":
            job.kill()
            return f"{target}: job did not start"
        time.sleep(random.uniform(0.1, 0.4))
        if target == "mpirun":
            os.kill(job.pid, signum)
        else:
            ranks = descendants(job.pid)
            if not ranks:
                job.kill()
                return "no rank processes found under mpirun"
            os.kill(random.choice(ranks), signum)
        try:
            out, _ = job.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            end_tree(job)
            return f"{target} {signal.Signals(signum).name}: job did not stop"
        if job.returncode != REQUEUE:
            return (f"{target} {signal.Signals(signum).name}: exit status {job.returncode}, "
                    f"expected {REQUEUE}; output: {out!r}")
        step = int(out.split()[-1])
        check = subprocess.run([args.mpiexec, args.np_flag, "3", args.tool, "verify", ckpt,
                                args.mode, seed], stdout=subprocess.PIPE, text=True, check=False)
        if check.returncode != 0 or check.stdout.split()[:3] != ["step", str(step), "ok"]:
            return f"{target}: checkpoint of step {step} does not verify: {check.stdout!r}"
        print(f"{signal.Signals(signum).name} to {target}: checkpointed step {step}, "
              f"exit {REQUEUE}, verified on 3 ranks")
        return None


def main():
    parser = io_driver.parser(__doc__)
    args = parser.parse_args()
    seed = str(random.randrange(1, 10**9))
    failures = [f for f in (one_case(args, "mpirun", signal.SIGUSR1, seed),
                            one_case(args, "one rank", signal.SIGTERM, seed),
                            one_case(args, "one rank", signal.SIGUSR1, seed)) if f]
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
