#!/usr/bin/python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""A checkpoint or snapshot on a full file system: one clear error on every rank, no hang.

On a small tmpfs (mounted in a private mount namespace, so nothing is left mounted whatever
happens): a checkpoint is written, the file system is filled to leave less than the next one
needs, and the next checkpoint (and a snapshot) must fail within the time limit with "No space
left on device", while the previous checkpoint stays loadable. Once space is back, the series
continues. Skips (77) where no mount namespace or tmpfs can be made (not root).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import io_driver

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from proctree import end_tree  # noqa: E402

SKIP = 77
INSIDE = "FUNNEL_FULL_FS_NAMESPACE"
LIMIT = 60  # seconds for one MPI job; a hang ends it and fails the test


def run(args, command, directory, ranks, count=None):
    """Runs the tool; returns (exit status, output). A job still running at LIMIT is a hang."""
    cmd = [args.mpiexec, args.np_flag, str(ranks), args.tool, command, directory, args.mode,
           args.seed] + ([str(count)] if count is not None else [])
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    try:
        out, _ = job.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        end_tree(job)
        out, _ = job.communicate()
        sys.exit(f"FAILED: '{' '.join(cmd)}' hung (killed after {LIMIT} s); output:\n{out}")
    return job.returncode, out


def fill(mount, leave):
    """Fills the file system, then frees all but about `leave` bytes."""
    filler = os.path.join(mount, "filler")
    with open(filler, "wb") as f:
        block = b"\0" * 65536
        try:
            while True:
                f.write(block)
                f.flush()
        except OSError:
            pass
    free = os.statvfs(mount).f_bavail * os.statvfs(mount).f_frsize
    size = os.path.getsize(filler)
    os.truncate(filler, max(0, size - max(0, leave - free)))
    return filler


def expect_no_space(what, status, out):
    if status == 0 or "No space left on device" not in out:
        sys.exit(f"FAILED: {what} on a full file system: exit {status}, expected a failure "
                 f"saying 'No space left on device'; output:\n{out}")
    lines = [line for line in out.splitlines() if "No space left on device" in line]
    print(f"{what}: exit {status}: {lines[0]}")


def inside(args):
    mount = tempfile.mkdtemp(prefix="funnel-fullfs-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        print(f"skipped: cannot mount a tmpfs: {mounted.stderr.strip()}")
        return SKIP
    try:
        ckpt = os.path.join(mount, "ckpt")
        status, out = run(args, "write", ckpt, args.ranks, 1)
        if status != 0:
            sys.exit(f"FAILED: the first checkpoint (with room) failed: {out}")
        filler = fill(mount, args.leave)
        status, out = run(args, "write", ckpt, args.ranks, 1)
        expect_no_space(f"checkpoint on {args.ranks} rank(s)", status, out)
        status, out = run(args, "verify", ckpt, args.ranks)
        if status != 0 or "step 1 ok" not in out:
            sys.exit(f"FAILED: the previous checkpoint does not load after the failure: {out}")
        print("the previous checkpoint (step 1) still loads, bitwise")
        status, out = run(args, "snapshots", os.path.join(mount, "snap"), args.ranks, 2)
        expect_no_space(f"snapshot on {args.ranks} rank(s)", status, out)
        os.unlink(filler)
        status, out = run(args, "write", ckpt, args.ranks, 1)
        status2, out2 = run(args, "verify", ckpt, args.ranks)
        if status != 0 or status2 != 0 or "step 2 ok" not in out2:
            sys.exit(f"FAILED: with space back, the series does not continue: {out}{out2}")
        print("with space back the series continues: step 2 written and verified")
        return 0
    finally:
        subprocess.run(["umount", "-l", mount], check=False)
        os.rmdir(mount)


def main():
    parser = io_driver.parser(__doc__)
    parser.add_argument("--ranks", type=int, default=3)
    parser.add_argument("--seed", default="12345")
    parser.add_argument("--leave", type=int, default=200 * 1024,
                        help="bytes left free for the failing checkpoint (less than it needs)")
    args = parser.parse_args()
    if os.environ.get(INSIDE) == "1":
        return inside(args)
    unshare = shutil.which("unshare")
    probe = subprocess.run([unshare, "--mount", "--propagation", "private", "true"],
                           capture_output=True, text=True, check=False) if unshare else None
    if probe is None or probe.returncode != 0:
        reason = probe.stderr.strip() if probe else "no unshare command"
        print(f"skipped: no private mount namespace for a small tmpfs: {reason}")
        return SKIP
    env = dict(os.environ, **{INSIDE: "1"})
    return subprocess.run([unshare, "--mount", "--propagation", "private", sys.executable] +
                          sys.argv, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
