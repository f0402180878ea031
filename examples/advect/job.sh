#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# A Slurm job script for funnel-advect: 4 GPUs, 32 ranks (8 per GPU, served by one MPS server
# per GPU that funnel-run starts and stops). Submit with: sbatch job.sh
# (from the directory holding funnel-advect, with funnel's bin/ on PATH).
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=32
#SBATCH --gpus-per-node=4
#SBATCH --time=00:10:00
set -euo pipefail

if [[ -n ${SLURM_JOB_ID:-} ]]; then
  # [porting:job]
  srun funnel-run -- ./funnel-advect --cells 512,512,512 --steps 200
  # [porting:end]
else  # the same on one node without Slurm
  # [porting:job-mpirun]
  mpirun -np 32 funnel-run -- ./funnel-advect --cells 512,512,512 --steps 200
  # [porting:end]
fi
