# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Where Open MPI keeps a job's files, for the Python test drivers that give jobs their own."""
import os


def own_mpi_dirs(directory, env=None):
    """`env` (default: this process's) with Open MPI's job directories in `directory`.

    Open MPI keeps the job directories of all of a user's jobs under one top directory in
    orte_tmpdir_base (ctest sets one per test, cmake/FunnelTesting.cmake) or else TMPDIR; a job
    that ends removes it once it looks empty, and a job starting at that moment fails in
    MPI_Init (open-mpi/ompi#3818). Jobs a driver starts side by side, or kills with SIGKILL
    (which leaves them behind, about 8 MB), or runs as another user, get a directory of their
    own. TMPDIR moves too, for what the ranks themselves put there.
    """
    return {**(os.environ if env is None else env), "TMPDIR": directory,
            "OMPI_MCA_orte_tmpdir_base": directory}
