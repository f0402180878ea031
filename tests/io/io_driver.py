# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""What the io test drivers share: the options that say how to run the io tool under MPI."""
import argparse
import os


def parser(description, tool_option="--tool"):
    """An argument parser with --mpiexec, --np-flag, the tool (`tool_option`) and --mode."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--np-flag", default="-n")
    p.add_argument(tool_option, required=True)
    p.add_argument("--mode", choices=["shared", "per_rank"], required=True)
    return p


SHM = "/dev/shm"


def shm_names():
    """The names in /dev/shm (none where it does not exist)."""
    return set(os.listdir(SHM)) if os.path.isdir(SHM) else set()
