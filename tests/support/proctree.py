# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Process-tree helpers shared by the Python test drivers (reads /proc; Linux only)."""
import os
import signal
import subprocess


def descendants(pid):
    """The pids of every process below pid, parents before their children."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                # "pid (comm) state ppid ...": comm may hold spaces, so split after the ')'.
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(0), []):
            found.append(child)
            todo.append(child)
    return found


def kill_all(pids):
    """SIGKILL to each of pids that is still there."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def end_tree(proc, grace=10.0):
    """Ends a launcher started with subprocess.Popen and every process below it.

    The launcher gets SIGTERM first: mpirun then ends its ranks and removes its own files, which
    SIGKILL would leave behind (its session directory in $TMPDIR, its ranks' segments in
    /dev/shm), and with the launcher alone killed its ranks, each in a process group of its own,
    would run on. Whatever of the tree is left after `grace` seconds gets SIGKILL.
    """
    below = descendants(proc.pid)
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
    kill_all(below)
    proc.wait()


def run_job(cmd, timeout, **kwargs):
    """subprocess.run(cmd, timeout=timeout, **kwargs) for a launcher (mpirun, or a program that
    starts one): the same result and exceptions, but a job that times out is ended by end_tree."""
    check = kwargs.pop("check", False)
    if kwargs.pop("capture_output", False):
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    with subprocess.Popen(cmd, **kwargs) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            end_tree(proc)
            out, err = proc.communicate()
            raise subprocess.TimeoutExpired(proc.args, timeout, output=out, stderr=err) from None
        except BaseException:
            end_tree(proc)
            raise
    result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if check:
        result.check_returncode()
    return result
