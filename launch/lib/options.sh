# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# funnel-run's options: --help, the environment variables (read once, in read_environment), the
# command line (which wins), and their checks. A bad value is one line and exit 2.
# shellcheck source=SCRIPTDIR/state.sh
source "${BASH_SOURCE[0]%/*}/state.sh"

print_help() {
  cat <<EOF
Usage: ${PROG} [options] [--] APP [ARGS...]
       ${PROG} --cleanup [--job ID] [--tmpdir DIR]    (as the user; root's is funnel-epilog)

Runs APP once per rank, as a child, after binding the rank to a GPU and (when ranks share a GPU)
attaching it to that GPU's NVIDIA MPS server, which funnel-run starts once per GPU per job and
stops when the job's last rank on the node is gone. Use it between the launcher and the app:
  srun [srun options] ${PROG} [options] -- ./app args...
  mpirun -np N ${PROG} [options] -- ./app args...
  ${PROG} -- ./app args...                        (one rank)

Options (each has an environment variable; the option wins):
  --gpus LIST|auto          GPUs to use: auto (every visible GPU) or a comma list of indices
                            (0-based, among the GPUs CUDA_VISIBLE_DEVICES leaves visible) and/or
                            UUIDs (GPU-...). With round-robin the list is a slot list: rank r gets
                            entry r mod length (so 0,0,1,1 is an explicit map).   [FUNNEL_GPUS]
  --policy P                round-robin (default): rank r -> GPU r mod n; packed: consecutive
                            ranks share a GPU; numa: a GPU whose CPU affinity (nvidia-smi topo -m)
                            overlaps the rank's cores.                          [FUNNEL_POLICY]
  --mps auto|on|off         auto (default): MPS when more than one rank of the node shares a GPU;
                            on: always; off: never.                                [FUNNEL_MPS]
  --mps-off-pipe private|system
                            where a rank without MPS points CUDA_MPS_PIPE_DIRECTORY: private
                            (default) is an empty directory of the job, so no MPS daemon serves
                            the rank, not even a system-wide one at /tmp/nvidia-mps; system
                            unsets it, so such a daemon may.                [FUNNEL_MPS_OFF_PIPE]
  --mps-thread-percentage N|auto
                            CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for each rank (1-100), or auto =
                            100 / ranks on the GPU.            [FUNNEL_MPS_THREAD_PERCENTAGE]
  --mps-pinned-mem-limit SIZE
                            per-client device memory limit, e.g. 8G or 512M
                            (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT).  [FUNNEL_MPS_PINNED_MEM_LIMIT]
  --mps-max-clients N       refuse more than N ranks on one GPU under MPS (default ${DEFAULT_MPS_MAX_CLIENTS}, what
                            drivers were measured to serve: no MPS command reports the limit; see
                            docs/funnel-run.md). Past it local rank 0 says so in one line and
                            every rank exits 2 before any app starts. [FUNNEL_MPS_MAX_CLIENTS]
  --mps-connection-budget N the connections (CUDA_DEVICE_MAX_CONNECTIONS) the clients of one MPS
                            server may own together (1-1024; default ${DEFAULT_MPS_CONNECTION_BUDGET}, measured, see
                            docs/funnel-run.md). Under MPS each rank gets min(requested,
                            budget / ranks on its GPU), at least 1.
                                                                [FUNNEL_MPS_CONNECTION_BUDGET]
  --mps-client-devices uuid|unset
                            how a rank under MPS names its GPU: uuid (default) sets the rank's
                            CUDA_VISIBLE_DEVICES to the GPU's UUID; unset leaves it unset so the
                            rank sees what its per-GPU daemon sees.  [FUNNEL_MPS_CLIENT_DEVICES]
  --max-connections N       the connections requested per rank (CUDA_DEVICE_MAX_CONNECTIONS,
                            1-${MAX_CONNECTIONS_LIMIT}; default: --streams, else CUDA_DEVICE_MAX_CONNECTIONS from the
                            environment, else none: CUDA's default, 8, under MPS 2, which
                            starts clients fastest). Under MPS a request the budget cannot
                            give every rank is lowered to the budget's share, with one warning.
                                                                      [FUNNEL_MAX_CONNECTIONS]
  --streams N               streams the app uses per rank; requests that many connections
                            (at most ${MAX_CONNECTIONS_LIMIT}).                                  [FUNNEL_STREAMS]
  --mps-wait SECONDS        how long a rank waits for its GPU's daemon to answer (default 60).
                                                                             [FUNNEL_MPS_WAIT]
  --print-binding           print one line per rank: host, local rank, cores, GPU index + UUID,
                            MPS pipe, thread percentage.                [FUNNEL_PRINT_BINDING=1]
  --dry-run                 print the plan and run nothing.                   [FUNNEL_DRY_RUN=1]
  --cleanup                 stop the MPS daemons funnel-run started on this node for this user
                            and remove their job directories: those of job ID with --job,
                            otherwise those no live rank uses any more, and any left half
                            removed. A Slurm epilog runs funnel-epilog as root instead, which
                            runs this as the job's user (see funnel-epilog --help); as root with
                            SLURM_JOB_UID set, '${PROG} --cleanup ...' is handed to it.
  --job ID                  the job id (default: from the launcher: SLURM_JOB_ID, PBS_JOBID,
                            LSB_JOBID; else "none").                            [FUNNEL_JOB_ID]
  --step ID                 the step id (default: SLURM_STEP_ID, the MPI launch's id, else the
                            parent process id).                                [FUNNEL_STEP_ID]
  --tmpdir DIR              node-local directory for the job directories (default \$TMPDIR or
                            /tmp); it and the directories above it must not be writable
                            by every user unless sticky, like /tmp.             [FUNNEL_TMPDIR]
  --verbose                 say what is done; implies --print-binding.      [FUNNEL_VERBOSE=1]
  --report[=DIR]            record each rank's GPU work (kernels, copies) through CUPTI, for any
                            CUDA program unchanged, and at the job's end print per GPU how busy
                            it was and how many ranks' work ran at once, with a verdict; writes
                            report.json and report.png to DIR (default ./funnel-report-<job>;
                            per host when the job spans nodes). Tracing costs the GPU a
                            fixed time per kernel and copy: little with long kernels, up to a
                            fifth for many ranks of short ones; the report states its own cost
                            (docs/report.md, Cost). Without it nothing changes.
                                                   [FUNNEL_REPORT=1|DIR]
  --internal-reap DIR       (internal) the reaper funnel-run starts detached for a job
                            directory; it stops the job's daemons and removes the directory
                            when no rank registered there lives.
  --help                    this text.
  --version                 the version.

Other environment variables:
  FUNNEL_MPS_QUIT_WAIT      seconds the reaper waits for a daemon to exit after quit before it
                            kills it (default 10).
  FUNNEL_REAPER_INTERVAL    seconds between the reaper's checks of the ranks (default 0.5).
  CUDA_VISIBLE_DEVICES      when set (e.g. by --gpus-per-task), only those GPUs are used.
  CUDA_MPS_PIPE_DIRECTORY   when set, owned by root or the user, and a daemon answers there
                            (Slurm gres/mps or a site service), funnel-run uses that daemon
                            and never stops it.

Job directories: each job (step) gets one private directory per node,
<tmpdir>/funnel-run-<uid>-<tag>, holding the MPS pipes, logs and rank records, the GPU listing
(nvidia-smi -L, run once for the ranks of a launch), and the directory the app gets as
FUNNEL_RUN_DIR. <tag> is 16 hex digits of sha256(a secret kept in
\$HOME/.funnel/secret, the job key), so nobody else can take the name first; a job key that
comes again (a fixed --step) passes over a name another user took since it was seen, to the
next of ${JOB_DIR_NAMES} names of that key. Without a usable \$HOME the name is the job key itself. A
detached reaper removes the directory once the job's last rank on the node is gone, however the
ranks ended.

Node-local rank and size come from OpenMPI (OMPI_COMM_WORLD_LOCAL_RANK/SIZE), MVAPICH2
(MV2_COMM_WORLD_LOCAL_RANK/SIZE), MPICH/Hydra (MPI_LOCALRANKID/MPI_LOCALNRANKS), Cray PALS
(PALS_LOCAL_RANKID/PALS_LOCAL_SIZE), PMI (PMI_LOCAL_RANK/SIZE) or Slurm (SLURM_LOCALID and
SLURM_STEP_TASKS_PER_NODE/SLURM_TASKS_PER_NODE). Every number read from the environment must be
a non-negative integer.

The app gets: CUDA_VISIBLE_DEVICES, FUNNEL_LAUNCHER=funnel-run, FUNNEL_LOCAL_RANK,
FUNNEL_LOCAL_SIZE, FUNNEL_GPU_INDEX (nvidia-smi index), FUNNEL_GPU_UUID, FUNNEL_RANKS_ON_GPU,
FUNNEL_MPS (on/off), FUNNEL_RUN_DIR, CUDA_MPS_PIPE_DIRECTORY (and under MPS FUNNEL_MPS_PIPE and
CUDA_MPS_LOG_DIRECTORY), CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT,
CUDA_DEVICE_MAX_CONNECTIONS.

Exit status: the app's (128+N when signal N killed it); 2 for a bad option, value or plan (e.g.
more ranks on a GPU than MPS allows); 1 when MPS could not be set up safely; 126/127 when APP is
not executable / not found. Errors every rank of a node sees alike are printed by local rank 0
only. A start-up that fails under a launcher exits once every rank of the node has started and
no sooner than 2 s after the rank did (mpirun can hang when ranks exit while it still starts
others; see docs/funnel-run.md). The first rank of a node whose app fails (non-zero, or a signal
funnel-run did not forward) is named in one line with its status; under MPS, when the server
logs that a client caused a fatal GPU fault (it then ends the work of every client of the GPU),
the line names that client's rank and quotes the server.
SIGTERM, SIGINT, SIGHUP, SIGUSR1 and SIGUSR2 are forwarded to the app.
EOF
}

# The options' defaults, then their environment variables: the only place funnel-run reads
# FUNNEL_* (the launcher's variables are read where the binding is decided).
read_environment() {
  opt_gpus=${FUNNEL_GPUS:-auto}
  opt_policy=${FUNNEL_POLICY:-round-robin}
  opt_mps=${FUNNEL_MPS:-auto}
  opt_mps_off_pipe=${FUNNEL_MPS_OFF_PIPE:-private}
  opt_thread_pct=${FUNNEL_MPS_THREAD_PERCENTAGE:-}
  opt_pinned_limit=${FUNNEL_MPS_PINNED_MEM_LIMIT:-}
  opt_max_clients=${FUNNEL_MPS_MAX_CLIENTS:-${DEFAULT_MPS_MAX_CLIENTS}}
  opt_connection_budget=${FUNNEL_MPS_CONNECTION_BUDGET:-${DEFAULT_MPS_CONNECTION_BUDGET}}
  opt_client_devices=${FUNNEL_MPS_CLIENT_DEVICES:-uuid}
  opt_max_connections=${FUNNEL_MAX_CONNECTIONS:-}
  opt_streams=${FUNNEL_STREAMS:-}
  opt_mps_wait=${FUNNEL_MPS_WAIT:-60}
  opt_print_binding=${FUNNEL_PRINT_BINDING:-0}
  opt_dry_run=${FUNNEL_DRY_RUN:-0}
  opt_verbose=${FUNNEL_VERBOSE:-0}
  opt_job=${FUNNEL_JOB_ID:-}
  opt_step=${FUNNEL_STEP_ID:-}
  opt_tmpdir=${FUNNEL_TMPDIR:-${TMPDIR:-/tmp}}
  case ${FUNNEL_REPORT:-} in
    "" | 0 | off) opt_report="" ;;
    1 | on) opt_report=on ;;
    *) opt_report=${FUNNEL_REPORT} ;;
  esac
  read_teardown_environment
}

# The two settings the reaper uses (it reads nothing else of its environment).
read_teardown_environment() {
  quit_wait=${FUNNEL_MPS_QUIT_WAIT:-10}
  reaper_interval=${FUNNEL_REAPER_INTERVAL:-0.5}
}

# Takes the value of option $1 from "$2" (the next word) or from --opt=value.
need_value() {
  [[ $# -ge 2 ]] || usage_error "option $1 needs a value (see --help)"
}

# shellcheck disable=SC2034 # the options are state (state.sh), read by the other parts
parse_args() {
  while [[ $# -gt 0 ]]; do
    local arg=$1 value
    # --report takes its value only after '=': a bare --report is followed by the app.
    if [[ ${arg} == --report ]]; then opt_report=on; shift; continue; fi
    if [[ ${arg} == --report=* ]]; then
      opt_report=${arg#--report=}
      [[ -n ${opt_report} ]] || usage_error "--report= needs a directory (or give --report alone)"
      shift
      continue
    fi
    if [[ ${arg} == --*=* ]]; then
      value=${arg#*=}
      arg=${arg%%=*}
      set -- "${arg}" "${value}" "${@:2}"
    fi
    case ${arg} in
      --gpus) need_value "$@"; opt_gpus=$2; shift 2 ;;
      --policy) need_value "$@"; opt_policy=$2; shift 2 ;;
      --mps) need_value "$@"; opt_mps=$2; shift 2 ;;
      --mps-off-pipe) need_value "$@"; opt_mps_off_pipe=$2; shift 2 ;;
      --mps-thread-percentage) need_value "$@"; opt_thread_pct=$2; shift 2 ;;
      --mps-pinned-mem-limit) need_value "$@"; opt_pinned_limit=$2; shift 2 ;;
      --mps-max-clients) need_value "$@"; opt_max_clients=$2; shift 2 ;;
      --mps-connection-budget) need_value "$@"; opt_connection_budget=$2; shift 2 ;;
      --mps-client-devices) need_value "$@"; opt_client_devices=$2; shift 2 ;;
      --max-connections) need_value "$@"; opt_max_connections=$2; shift 2 ;;
      --streams) need_value "$@"; opt_streams=$2; shift 2 ;;
      --mps-wait) need_value "$@"; opt_mps_wait=$2; shift 2 ;;
      --job) need_value "$@"; opt_job=$2; opt_job_given=1; shift 2 ;;
      --step) need_value "$@"; opt_step=$2; shift 2 ;;
      --tmpdir) need_value "$@"; opt_tmpdir=$2; shift 2 ;;
      --print-binding) opt_print_binding=1; shift ;;
      --dry-run) opt_dry_run=1; shift ;;
      --verbose) opt_verbose=1; shift ;;
      --cleanup) opt_cleanup=1; shift ;;
      --internal-reap) need_value "$@"; opt_reap_dir=$2; shift 2 ;;
      --help | -h) print_help; exit 0 ;;
      --version) echo "${PROG} ${version_string}"; exit 0 ;;
      --) shift; app_argv=("$@"); return 0 ;;
      -*) usage_error "unknown option '${arg}' (see --help)" ;;
      *) app_argv=("$@"); return 0 ;;
    esac
  done
}

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

# check_range NAME VALUE MIN MAX [VAR]: VALUE must be an integer in [MIN, MAX]. VAR, when given,
# is set to it in plain decimal: bash arithmetic reads "08" as a bad octal number and "010" as 8.
check_range() {
  local name=$1 value=$2 min=$3 max=$4
  if ! is_uint "${value}" || ((${#value} > 9 || 10#${value} < min || 10#${value} > max)); then
    usage_error "${name} '${value}' is not allowed (an integer from ${min} to ${max})"
  fi
  if [[ -n ${5:-} ]]; then printf -v "$5" '%d' "$((10#${value}))"; fi
}

# env_uint NAME: the variable's value when it is a non-negative integer; a one-line error else.
# Every number read from the launcher's environment passes here before any arithmetic.
env_uint() {
  local value=${!1-}
  if ! is_uint "${value}" || ((${#value} > 9)); then
    usage_error "$1 '${value}' is not allowed (a non-negative integer)"
  fi
  echo "$((10#${value}))"
}

check_flag() {
  [[ $2 == 0 || $2 == 1 ]] || usage_error "$1 '$2' is not allowed (0 or 1)"
}

validate_options() {
  case ${opt_policy} in
    round-robin | packed | numa) ;;
    *) usage_error "--policy '${opt_policy}' is not allowed (round-robin, packed or numa)" ;;
  esac
  case ${opt_mps} in
    auto | on | off) ;;
    *) usage_error "--mps '${opt_mps}' is not allowed (auto, on or off)" ;;
  esac
  case ${opt_mps_off_pipe} in
    private | system) ;;
    *) usage_error "--mps-off-pipe '${opt_mps_off_pipe}' is not allowed (private or system)" ;;
  esac
  case ${opt_client_devices} in
    uuid | unset) ;;
    *) usage_error "--mps-client-devices '${opt_client_devices}' is not allowed (uuid or unset)" ;;
  esac
  if [[ -n ${opt_thread_pct} && ${opt_thread_pct} != auto ]]; then
    check_range --mps-thread-percentage "${opt_thread_pct}" 1 100 opt_thread_pct
  fi
  if [[ -n ${opt_pinned_limit} && ! ${opt_pinned_limit} =~ ^[1-9][0-9]*([KMGT]B?)?$ ]]; then
    usage_error "--mps-pinned-mem-limit '${opt_pinned_limit}' is not allowed" \
      "(a positive size with an optional unit K, M, G or T, e.g. 8G)"
  fi
  check_range --mps-max-clients "${opt_max_clients}" 1 1024 opt_max_clients
  check_range --mps-connection-budget "${opt_connection_budget}" 1 1024 opt_connection_budget
  [[ -z ${opt_max_connections} ]] ||
    check_range --max-connections "${opt_max_connections}" 1 "${MAX_CONNECTIONS_LIMIT}" \
      opt_max_connections
  [[ -z ${opt_streams} ]] || check_range --streams "${opt_streams}" 1 1024 opt_streams
  [[ -z ${CUDA_DEVICE_MAX_CONNECTIONS:-} ]] ||
    check_range CUDA_DEVICE_MAX_CONNECTIONS "${CUDA_DEVICE_MAX_CONNECTIONS}" 1 \
      "${MAX_CONNECTIONS_LIMIT}" CUDA_DEVICE_MAX_CONNECTIONS
  check_range --mps-wait "${opt_mps_wait}" 1 3600 opt_mps_wait
  check_flag FUNNEL_PRINT_BINDING "${opt_print_binding}"
  check_flag FUNNEL_DRY_RUN "${opt_dry_run}"
  check_flag FUNNEL_VERBOSE "${opt_verbose}"
  local gpu_item='([0-9]+|GPU-[0-9a-fA-F-]+)'
  if [[ ${opt_gpus} != auto && ! ${opt_gpus} =~ ^${gpu_item}(,${gpu_item})*$ ]]; then
    usage_error "--gpus '${opt_gpus}' is not allowed (auto, or a comma list of GPU indices" \
      "and GPU-... UUIDs)"
  fi
  if [[ -n ${opt_report} && ${opt_report} != on ]]; then
    [[ ${opt_report} == /* ]] || opt_report=${PWD}/${opt_report}
    [[ ! -e ${opt_report} || -d ${opt_report} ]] ||
      usage_error "--report '${opt_report}' is not allowed (it exists and is not a directory)"
  fi
  [[ ${opt_tmpdir} == /* ]] ||
    usage_error "--tmpdir '${opt_tmpdir}' is not allowed (an absolute path of a directory)"
  [[ -d ${opt_tmpdir} ]] ||
    usage_error "--tmpdir '${opt_tmpdir}' is not allowed (no such directory)"
  tmpdir_real=$(cd -- "${opt_tmpdir}" && pwd -P) ||
    usage_error "--tmpdir '${opt_tmpdir}' is not allowed (it cannot be entered)"
  check_tmpdir_path
  check_teardown_settings
  if [[ ${opt_verbose} == 1 ]]; then opt_print_binding=1; fi
}

# Anyone may rename or replace what is in a directory every user may write unless it is sticky:
# neither the tmpdir nor a directory above it may be one, on the path as given (a link in such a
# directory could be re-pointed) nor on the path it leads to. (A group the user shares a
# directory with is trusted, as are the directories' owners.) One stat for all of them.
check_tmpdir_path() {
  local part i
  local -a dirs=() modes=()
  for part in "${opt_tmpdir}" "${tmpdir_real}"; do
    while :; do
      while [[ ${part} == */ ]]; do part=${part%/}; done
      dirs+=("${part:-/}")
      [[ -n ${part} ]] || break
      part=${part%/*}
    done
  done
  mapfile -t modes < <(stat -L -c %a -- "${dirs[@]}" 2>/dev/null || true)
  ((${#modes[@]} == ${#dirs[@]})) ||
    usage_error "--tmpdir '${opt_tmpdir}' is not allowed (a directory on its path cannot be examined)"
  for i in "${!dirs[@]}"; do
    if ((8#${modes[i]} & 8#002 && !(8#${modes[i]} & 8#1000))); then
      usage_error "--tmpdir '${opt_tmpdir}' is not allowed ('${dirs[i]}' has mode ${modes[i]}:" \
        "every user may write it and it is not sticky; use a private directory or one in /tmp)"
    fi
  done
}

# The two settings the reaper uses, checked in the rank and again in the reaper.
check_teardown_settings() {
  check_range FUNNEL_MPS_QUIT_WAIT "${quit_wait}" 0 3600 quit_wait
  [[ ${reaper_interval} =~ ^[0-9]{0,4}\.?[0-9]{1,6}$ ]] ||
    usage_error "FUNNEL_REAPER_INTERVAL '${reaper_interval}' is not allowed (seconds, e.g. 0.5)"
}
