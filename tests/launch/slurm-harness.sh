#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Starts a private single-node Slurm (munged + slurmctld + slurmd on loopback, own key, config,
# spool, state and logs in a temporary directory), runs COMMAND with SLURM_CONF pointing at it,
# and stops every daemon it started, whatever happens. Exits 77 (CTest's skip) when Slurm or
# munge is not installed. Must run as root (slurmd starts job steps as their users).
# Usage: slurm-harness.sh COMMAND [ARGS...]
# shellcheck disable=SC2317 # functions run by trap and by wait_for
set -euo pipefail

readonly SKIP=77
pids=()
dir=""

usage() {
  echo "usage: slurm-harness.sh COMMAND [ARGS...]  (runs COMMAND against a private Slurm)" >&2
  exit 2
}

require_tools() {
  local tool
  for tool in munged slurmctld slurmd srun sinfo squeue scancel; do
    if ! command -v "${tool}" >/dev/null 2>&1 && [[ ! -x /usr/sbin/${tool} ]]; then
      echo "skipped: ${tool} not installed (Debian packages slurm-wlm, munge)"
      exit "${SKIP}"
    fi
  done
  if (($(id -u) != 0)); then
    echo "skipped: the Slurm harness must run as root"
    exit "${SKIP}"
  fi
}

# Two free TCP ports on loopback (a port is free when nothing listens on it).
free_ports() {
  local port found=()
  for ((port = 20000 + ($$ % 20000); ${#found[@]} < 2; port++)); do
    if ! (: <"/dev/tcp/127.0.0.1/${port}") 2>/dev/null; then found+=("${port}"); fi
  done
  echo "${found[@]}"
}

write_config() {
  local ctld_port slurmd_port cpus
  read -r ctld_port slurmd_port <<<"$(free_ports)"
  # More CPUs than the machine has, so that 8-rank steps fit on a 2-core test machine.
  cpus=8
  cat >"${dir}/slurm.conf" <<EOF
ClusterName=funnel
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=${ctld_port}
SlurmdPort=${slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${dir}/munge.sock
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool
SlurmctldPidFile=${dir}/slurmctld.pid
SlurmdPidFile=${dir}/slurmd.pid
SlurmctldLogFile=${dir}/slurmctld.log
SlurmdLogFile=${dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=5
MessageTimeout=10
InactiveLimit=0
NodeName=funnelnode NodeAddr=127.0.0.1 NodeHostname=$(hostname -s) CPUs=${cpus} State=UNKNOWN
PartitionName=debug Nodes=funnelnode Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
  : >"${dir}/cgroup.conf"
}

start_daemons() {
  mkdir -p "${dir}/state" "${dir}/spool"
  chmod 700 "${dir}"
  head -c 1024 /dev/urandom >"${dir}/munge.key"
  chmod 400 "${dir}/munge.key"
  munged --foreground --force --key-file="${dir}/munge.key" --socket="${dir}/munge.sock" \
    --pid-file="${dir}/munged.pid" --log-file="${dir}/munged.log" \
    --seed-file="${dir}/munged.seed" >"${dir}/munged.out" 2>&1 &
  pids+=($!)
  wait_for "munge socket" 10 test -S "${dir}/munge.sock"
  slurmctld -D -i -f "${dir}/slurm.conf" >"${dir}/slurmctld.out" 2>&1 &
  pids+=($!)
  slurmd -D -N funnelnode -f "${dir}/slurm.conf" >"${dir}/slurmd.out" 2>&1 &
  pids+=($!)
  wait_for "the node to be idle" 60 node_idle
}

node_idle() { [[ $(sinfo -h -n funnelnode -o %t 2>/dev/null) == idle ]]; }

# wait_for WHAT SECONDS COMMAND...: polls COMMAND until it succeeds; fails after SECONDS.
wait_for() {
  local what=$1 deadline=$((SECONDS + $2))
  shift 2
  until "$@"; do
    if ((SECONDS >= deadline)); then
      echo "slurm-harness: timed out waiting for ${what}" >&2
      show_logs
      return 1
    fi
    sleep 0.2
  done
}

show_logs() {
  local log
  for log in "${dir}"/*.log "${dir}"/*.out; do
    [[ -s ${log} ]] || continue
    echo "--- ${log##*/}" >&2
    tail -n 15 "${log}" >&2
  done
}

stop_all() {
  local rc=$? pid i
  trap - EXIT INT TERM
  if [[ -n ${dir} && -e ${dir}/slurm.conf ]]; then
    # Jobs first, so that no step outlives its slurmd.
    scancel --quiet --user="$(id -un)" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      [[ -z $(squeue -h 2>/dev/null) ]] && break
      sleep 0.2
    done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill -TERM "${pid}" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    for ((i = 0; i < 50; i++)); do
      kill -0 "${pid}" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "${pid}" 2>/dev/null || true
    wait "${pid}" 2>/dev/null || true
  done
  if ((rc != 0 && rc != SKIP)); then show_logs; fi
  [[ -z ${dir} ]] || rm -rf "${dir}"
  exit "${rc}"
}

main() {
  (($# > 0)) || usage
  require_tools
  dir=$(mktemp -d /tmp/fslurm.XXXXXX)
  trap stop_all EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  export SLURM_CONF=${dir}/slurm.conf
  write_config
  start_daemons
  local rc=0
  "$@" || rc=$?
  exit "${rc}"
}

main "$@"
