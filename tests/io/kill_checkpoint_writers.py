#!/usr/bin/python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""kill -9 of checkpoint writers at random instants must never lose the previous checkpoint.

Repeatedly starts an MPI job that writes checkpoints in a loop (continuing from the latest one,
so it also takes over the stale lock the previous victim left; starting the directory over while
no checkpoint was ever published), SIGKILLs the whole job after a
random delay, then checks with a fresh MPI job (1 or 3 ranks, another decomposition) that
`latest` names a complete checkpoint whose every block matches its checksum and reads back
bitwise, at least as new as the last one the writer reported done.
"""
import os
import random
import re
import select
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from mpi_dirs import own_mpi_dirs  # noqa: E402
from proctree import descendants, kill_all  # noqa: E402

import io_driver

NO_CHECKPOINT = 3


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_job(proc):
    victims = [proc.pid] + descendants(proc.pid)
    kill_all(victims)
    proc.wait()
    deadline = time.time() + 10
    while any(alive(p) for p in victims) and time.time() < deadline:
        time.sleep(0.01)


def read_lines(proc, timeout):
    """Lines the job printed within `timeout` seconds (non-blocking after that)."""
    lines, buffer = [], b""
    end = time.time() + timeout
    fd = proc.stdout.fileno()
    while True:
        remaining = end - time.time()
        if remaining <= 0:
            break
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
    lines = buffer.decode(errors="replace").splitlines()
    return lines


# What Open MPI's OMPIO leaves in /dev/shm when a rank is killed while it opens a shared file
# (docs/security.md, residual risks): its semaphore, named after the staged file, or glibc's
# temporary name for it. Only ours, and only names older than LEAK_AGE: a temporary name of a
# test running beside this one lives for microseconds.
LEAK = re.compile(r"sem\.(OMPIO_[0-9a-f]{16}\.h5|[A-Za-z0-9]{6})")
LEAK_AGE = 10.0


def remove_leaks(before):
    """Removes this user's leaked names that were not in `before`, once LEAK_AGE old."""
    candidates = {}
    for name in io_driver.shm_names() - before:
        try:
            st = os.lstat(os.path.join(io_driver.SHM, name))
        except OSError:
            continue
        if LEAK.fullmatch(name) and st.st_uid == os.geteuid() and st.st_size <= 32:
            candidates[name] = st.st_mtime
    if not candidates:
        return []
    time.sleep(max(0.0, max(candidates.values()) + LEAK_AGE - time.time()))
    removed = []
    for name in sorted(candidates):
        try:
            os.unlink(os.path.join(io_driver.SHM, name))
            removed.append(name)
        except OSError:
            pass
    return removed


def main():
    parser = io_driver.parser(__doc__)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--max-delay", type=float, default=0.6)
    args = parser.parse_args()
    seed = str(random.randrange(1, 10**9))
    started = time.time()
    shm_before = io_driver.shm_names()
    try:
        return run_kills(args, seed, started)
    finally:
        removed = remove_leaks(shm_before)
        if removed:
            print(f"removed {len(removed)} semaphore(s) Open MPI's killed ranks left in "
                  f"{io_driver.SHM}: {removed}")


def run_kills(args, seed, started):
    with tempfile.TemporaryDirectory(prefix="funnel-kill-") as tmp:
        ckpt = os.path.join(tmp, "ckpt")
        # A job killed with SIGKILL cannot clean up after itself: Open MPI would leave its job
        # directory and its shared-memory segments (else in /dev/shm), every iteration of every
        # run of this test. Both go under `tmp`, which is removed at the end.
        killed_env = {**own_mpi_dirs(tmp), "OMPI_MCA_btl_vader_backing_directory": tmp}
        last_done, last_verified, kills_mid_write = 0, 0, 0
        for i in range(args.iterations):
            writer = subprocess.Popen(
                [args.mpiexec, args.np_flag, "2", args.tool, "write", ckpt, args.mode, seed],
                stdout=subprocess.PIPE, start_new_session=True, env=killed_env)
            # Wait for "ready" so the kill lands while checkpoints are being written.
            lines = []
            deadline = time.time() + 30
            while "ready" not in lines and time.time() < deadline and writer.poll() is None:
                lines += read_lines(writer, 0.05)
            if "ready" not in lines:
                kill_job(writer)
                print(f"iteration {i}: writer never became ready: {lines}")
                return 1
            lines += read_lines(writer, random.uniform(0.0, args.max_delay))
            kill_job(writer)
            lines += read_lines(writer, 0.0)
            done = [int(line.split()[1]) for line in lines if line.startswith("wrote ")]
            if done:
                last_done = max(last_done, done[-1])
            # A ckpt-<step>.tmp left behind means the kill landed inside a checkpoint write.
            if os.path.isdir(ckpt) and any(n.endswith(".tmp") for n in os.listdir(ckpt)):
                kills_mid_write += 1
            ranks = "3" if i % 2 else "1"
            check = subprocess.run(
                [args.mpiexec, args.np_flag, ranks, args.tool, "verify", ckpt, args.mode, seed],
                stdout=subprocess.PIPE, text=True, check=False)
            out = check.stdout.strip()
            if check.returncode == NO_CHECKPOINT and last_done == 0:
                print(f"iteration {i}: no checkpoint finished yet")
                continue
            if check.returncode != 0:
                print(f"iteration {i}: verification FAILED (status {check.returncode}): {out}")
                return 1
            step = int(out.split()[1])
            print(f"iteration {i}: killed after step {done[-1] if done else '-'}; "
                  f"latest = step {step}, verified on {ranks} rank(s)")
            if step < last_done or step < last_verified:
                print(f"FAIL: latest step {step} is older than a finished checkpoint "
                      f"({last_done}) or an earlier verified one ({last_verified})")
                return 1
            last_verified = step
        if last_done == 0:
            print("FAIL: no checkpoint was ever completed; the kills tested nothing")
            return 1
    print(f"{args.iterations} kills ({kills_mid_write} inside a checkpoint write), "
          f"last verified step {last_verified}, "
          f"{time.time() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
