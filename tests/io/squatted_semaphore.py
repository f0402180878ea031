#!/usr/bin/python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Another user's names in /dev/shm must not stop a shared-file write (array_file.hpp,
staging_suffix).

Open MPI's OMPIO opens a POSIX semaphore named after the last name of each file it opens for
writing (/dev/shm/sem.OMPIO_<name>) and fails the open when another user holds that name. A
second identity (uid 4242, no account) creates those names for the files funnel writes
(checkpoint.h5, the snapshot files s-00000001.h5 ...); a third (4243) then writes 3 checkpoints
and 3 snapshots in shared mode and reads the checkpoint back. The writes must succeed, the
planted names stay as they were, and the job leaves no name of its own in /dev/shm. Skips (77)
unless root with setpriv.
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import io_driver

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from mpi_dirs import own_mpi_dirs  # noqa: E402

ATTACKER, VICTIM = 4242, 4243
SHM = io_driver.SHM


def as_user(uid, command, env=None, timeout=120):
    return subprocess.run(["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups",
                           "--"] + command, capture_output=True, text=True, env=env,
                          timeout=timeout)


def main():
    args = io_driver.parser(__doc__).parse_args()
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        print("skipped: needs root and setpriv (util-linux) to play two other users")
        return 77
    if not os.path.isdir(SHM) or not os.stat(SHM).st_mode & stat.S_ISVTX:
        print(f"skipped: no sticky {SHM}")
        return 77
    names = ["checkpoint.h5"] + [f"s-{step:08d}.h5" for step in (1, 2, 3)]
    planted = {}
    failures = []
    with tempfile.TemporaryDirectory(prefix="funnel-squat-") as tmp:
        os.chmod(tmp, 0o755)
        work = os.path.join(tmp, "victim")
        os.mkdir(work, 0o700)
        os.chown(work, VICTIM, VICTIM)
        # Open MPI's directories there too: the test's own is not the victim's to write.
        env = {**own_mpi_dirs(work), "HOME": work, "OMPI_MCA_btl_vader_backing_directory": work}
        try:
            for name in names:
                path = os.path.join(SHM, "sem.OMPIO_" + name)
                if os.path.lexists(path):
                    continue  # someone else's already: squatted all the same
                made = as_user(ATTACKER, ["sh", "-c", f"umask 022 && : > '{path}'"])
                if made.returncode != 0:
                    print(f"skipped: uid {ATTACKER} cannot create {path}: {made.stderr.strip()}")
                    return 77
                planted[path] = os.lstat(path).st_ino
            before = io_driver.shm_names()
            for what, command in (("checkpoints", "write"), ("snapshots", "snapshots")):
                run = as_user(VICTIM, [args.mpiexec, args.np_flag, "2", args.tool, command,
                                       os.path.join(work, what), args.mode, "7", "3"], env=env)
                print(f"{what}: exit {run.returncode}; {run.stdout.split()[-2:]}")
                if run.returncode != 0 or "wrote 3" not in run.stdout:
                    failures.append(f"{what} with squatted names: exit {run.returncode}\n"
                                    f"{run.stdout[-800:]}{run.stderr[-1500:]}")
            read = as_user(VICTIM, [args.mpiexec, args.np_flag, "2", args.tool, "verify",
                                    os.path.join(work, "checkpoints"), args.mode, "7"], env=env)
            if read.returncode != 0 or "step 3 ok" not in read.stdout:
                failures.append(f"reading the checkpoint back: exit {read.returncode}\n"
                                f"{read.stdout[-800:]}{read.stderr[-1500:]}")
            left = sorted(n for n in io_driver.shm_names() - before
                          if os.lstat(os.path.join(SHM, n)).st_uid == VICTIM)
            if left:
                failures.append(f"the job left names in {SHM}: {left}")
            for path, inode in planted.items():
                st = os.lstat(path) if os.path.lexists(path) else None
                if st is None or st.st_ino != inode or st.st_uid != ATTACKER:
                    failures.append(f"{path}, planted by uid {ATTACKER}, was removed or replaced")
            staged = [n for d in ("checkpoints", "snapshots") for _, folders, files in
                      os.walk(os.path.join(work, d)) for n in folders + files
                      if n.endswith(".writing")]
            if staged:
                failures.append(f"staging files left after clean writes: {staged}")
        finally:
            for path in planted:
                if os.path.lexists(path):
                    os.unlink(path)
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"OK: 3 checkpoints and 3 snapshots written past {len(planted)} squatted names")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
