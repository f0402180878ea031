# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the Python drivers of the app and bench tests: checks that collect failures
instead of stopping at the first, and the processes of an app below its launcher."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from proctree import descendants  # noqa: E402

failures = []


def check(cond, msg):
    """Records (and prints) a failure unless cond holds; returns cond."""
    if not cond:
        failures.append(msg)
        print("FAILED:", msg)
    return cond


def exit_status():
    """The driver's exit status: 1 when a check failed, else 0 (says which)."""
    if failures:
        # Again at the end, where a CI log's tail shows them.
        for msg in failures[:5]:
            print("FAILED:", msg[:1500])
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


def ranks_of(pid, app):
    """The processes below pid running app (its name as /proc/PID/comm shows it)."""
    name = os.path.basename(app)[:15]
    ranks = []
    for child in descendants(pid):
        try:
            with open(f"/proc/{child}/comm") as f:
                if f.read().strip() == name:
                    ranks.append(child)
        except OSError:
            pass
    return ranks


def gpu_visible():
    """True when nvidia-smi lists a GPU."""
    return shutil.which("nvidia-smi") is not None and subprocess.run(
        ["nvidia-smi", "-L"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL).returncode == 0
