# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The rank's binding: its node-local rank, its GPU (by policy), whether MPS serves it and the
# per-client settings. Reads the launcher's variables, nvidia-smi (through the listing a launch's
# ranks share, jobdir.sh) and CUDA_VISIBLE_DEVICES; writes nothing itself. docs/funnel-run.md
# explains the choices.
# shellcheck source=SCRIPTDIR/state.sh
source "${BASH_SOURCE[0]%/*}/state.sh"

# ---- node-local rank and size -------------------------------------------------------------------
# Expands Slurm's "2(x3),1" task counts and prints the count of node $2 (0-based).
slurm_tasks_on_node() {
  local list=$1 node=$2 item count reps index=0
  local -a items
  IFS=, read -ra items <<<"${list}"
  for item in "${items[@]}"; do
    if [[ ${item} =~ ^([0-9]{1,9})\(x([0-9]{1,9})\)$ ]]; then
      count=$((10#${BASH_REMATCH[1]}))
      reps=$((10#${BASH_REMATCH[2]}))
    elif [[ ${item} =~ ^[0-9]{1,9}$ ]]; then
      count=$((10#${item}))
      reps=1
    else
      usage_error "Slurm tasks per node '${list}' is not understood (e.g. 2(x3),1)"
    fi
    if ((node < index + reps)); then
      echo "${count}"
      return 0
    fi
    index=$((index + reps))
  done
  usage_error "Slurm tasks per node '${list}' has no entry for node ${node}"
}

# Sets local_rank/local_size from the first launcher whose variables are present. MPI launchers
# come before Slurm: mpirun inside an allocation leaves Slurm's variables of its own daemons.
detect_local_rank() {
  local rank_var size_var name
  for name in OMPI_COMM_WORLD_LOCAL_RANK:OMPI_COMM_WORLD_LOCAL_SIZE:openmpi \
    MV2_COMM_WORLD_LOCAL_RANK:MV2_COMM_WORLD_LOCAL_SIZE:mvapich2 \
    MPI_LOCALRANKID:MPI_LOCALNRANKS:hydra \
    PALS_LOCAL_RANKID:PALS_LOCAL_SIZE:pals \
    PMI_LOCAL_RANK:PMI_LOCAL_SIZE:pmi; do
    IFS=: read -r rank_var size_var launcher <<<"${name}"
    if [[ -n ${!rank_var:-} ]]; then
      [[ -n ${!size_var:-} ]] || usage_error "${rank_var} is set but ${size_var} is not"
      set_local "${rank_var}" "${size_var}" "${!size_var}"
      return 0
    fi
  done
  if [[ -n ${SLURM_LOCALID:-} ]]; then
    launcher=slurm
    local tasks=${SLURM_STEP_TASKS_PER_NODE:-${SLURM_TASKS_PER_NODE:-}}
    [[ -n ${tasks} ]] ||
      usage_error "SLURM_LOCALID is set but neither SLURM_STEP_TASKS_PER_NODE nor" \
        "SLURM_TASKS_PER_NODE"
    local node=0 here
    if [[ -n ${SLURM_NODEID+set} ]]; then node=$(env_uint SLURM_NODEID); fi
    here=$(slurm_tasks_on_node "${tasks}" "${node}")
    set_local SLURM_LOCALID SLURM_STEP_TASKS_PER_NODE "${here}"
    return 0
  fi
  launcher=none
  local var count
  for var in OMPI_COMM_WORLD_SIZE PMI_SIZE PMIX_SIZE SLURM_NTASKS MPI_UNIVERSE_SIZE; do
    [[ -n ${!var:-} ]] || continue
    count=$(env_uint "${var}")
    if ((count > 1)); then
      usage_error "${var}=${!var} implies several ranks, but no node-local rank variable is set" \
        "(OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, MPI_LOCALRANKID, MV2_COMM_WORLD_LOCAL_RANK," \
        "PMI_LOCAL_RANK or PALS_LOCAL_RANKID)"
    fi
  done
  local_rank=0
  local_size=1
}

# set_local RANK_VAR SIZE_NAME SIZE_VALUE
set_local() {
  local rank size
  rank=$(env_uint "$1")
  if ! is_uint "$3" || ((${#3} > 9 || 10#$3 == 0)); then
    usage_error "$2 '$3' is not allowed (a positive integer)"
  fi
  size=$((10#$3))
  ((rank < size)) || usage_error "$1 '${!1}' is not allowed (less than $2=$3)"
  local_rank=${rank}
  local_size=${size}
  # shellcheck disable=SC2034 # state (state.sh), read by messages.sh
  speaker=$((local_rank == 0 ? 1 : 0))
}

# The job-wide rank, for messages only ("?" when no launcher says it).
global_rank() {
  local var
  for var in OMPI_COMM_WORLD_RANK PMIX_RANK PMI_RANK SLURM_PROCID PALS_RANKID; do
    if [[ ${!var:-} =~ ^[0-9]{1,9}$ ]]; then
      echo "${!var}"
      return 0
    fi
  done
  echo "?"
}

# ---- GPUs and the rank's choice ------------------------------------------------------------------
discover_gpus() {
  local line
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    note "nvidia-smi not found: no GPU"
    return 0
  fi
  local listing listing_status
  gpu_listing listing_status listing
  if ((listing_status != 0)); then
    warn "nvidia-smi -L failed (${listing%%$'\n'*}): running without a GPU"
    return 0
  fi
  while IFS= read -r line; do
    if [[ ${line} =~ ^GPU\ ([0-9]+):.*\(UUID:\ (GPU-[0-9a-fA-F-]+)\) ]]; then
      all_index+=("${BASH_REMATCH[1]}")
      all_uuid+=("${BASH_REMATCH[2]}")
    fi
  done <<<"${listing}"
}

# Prints the position in all_* of GPU token $1 (an nvidia-smi index or a UUID or UUID prefix).
find_gpu() {
  local token=$1 i match=-1
  for i in "${!all_uuid[@]}"; do
    if [[ ${token} =~ ^[0-9]+$ ]]; then
      [[ ${all_index[i]} == $((10#${token})) ]] && match=${i}
    elif [[ ${all_uuid[i],,} == "${token,,}"* ]]; then
      ((match == -1)) || return 1 # ambiguous prefix
      match=${i}
    fi
  done
  ((match >= 0)) || return 1
  echo "${match}"
}

# Restricts the GPUs to CUDA_VISIBLE_DEVICES as CUDA reads it: in its order, up to the first
# entry that names no GPU.
apply_visible_devices() {
  vis=()
  if [[ -z ${CUDA_VISIBLE_DEVICES+set} ]]; then
    vis=("${!all_uuid[@]}")
    return 0
  fi
  local token pos
  local -a tokens
  IFS=, read -ra tokens <<<"${CUDA_VISIBLE_DEVICES}"
  for token in "${tokens[@]}"; do
    token=${token// /}
    if ! pos=$(find_gpu "${token}"); then
      [[ -z ${token} || ${token} == -1 || ${token} == NoDevFiles ]] ||
        warn "CUDA_VISIBLE_DEVICES entry '${token}' names no GPU; later entries are ignored," \
          "as CUDA does"
      break
    fi
    vis+=("${pos}")
  done
}

# Sets slots and distinct from --gpus and the visible GPUs.
choose_gpu_slots() {
  slots=()
  if [[ ${opt_gpus} == auto ]]; then
    slots=("${vis[@]}")
  else
    local token pos vi
    local -a tokens
    IFS=, read -ra tokens <<<"${opt_gpus}"
    ((${#vis[@]} > 0)) ||
      usage_error "--gpus '${opt_gpus}' is not allowed: no GPU is visible on ${HOSTNAME:-$(uname -n)}"
    for token in "${tokens[@]}"; do
      if [[ ${token} =~ ^[0-9]+$ ]]; then
        vi=$((10#${token}))
        ((vi < ${#vis[@]})) || usage_error "--gpus: GPU index ${token} does not exist" \
          "(visible GPUs: 0-$((${#vis[@]} - 1)))"
        slots+=("${vis[vi]}")
      else
        pos=$(find_gpu "${token}") || usage_error "--gpus: GPU UUID '${token}' does not exist" \
          "or is ambiguous (visible: $(visible_uuids))"
        [[ " ${vis[*]} " == *" ${pos} "* ]] ||
          usage_error "--gpus: GPU '${token}' is not visible" \
            "(CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-})"
        slots+=("${pos}")
      fi
    done
  fi
  distinct=()
  local s
  for s in "${slots[@]}"; do
    [[ " ${distinct[*]} " == *" ${s} "* ]] || distinct+=("${s}")
  done
}

visible_uuids() {
  local p out=()
  for p in "${vis[@]}"; do out+=("${all_uuid[p]}"); done
  local IFS=,
  echo "${out[*]}"
}

# Expands a CPU list such as "0-3,8" into "0 1 2 3 8".
expand_cpus() {
  local part out=()
  local -a parts
  IFS=, read -ra parts <<<"$1"
  for part in "${parts[@]}"; do
    if [[ ${part} =~ ^([0-9]+)-([0-9]+)$ ]]; then
      local c
      for ((c = BASH_REMATCH[1]; c <= BASH_REMATCH[2]; c++)); do out+=("${c}"); done
    elif [[ ${part} =~ ^[0-9]+$ ]]; then
      out+=("${part}")
    fi
  done
  echo "${out[*]}"
}

my_cores() {
  local line
  while IFS= read -r line; do
    if [[ ${line} == Cpus_allowed_list:* ]]; then
      line=${line#*:}
      echo "${line//[[:space:]]/}"
      return 0
    fi
  done <"/proc/$$/status"
  echo "?"
}

# Prints "nvidia-smi-index cpu-list" for each GPU row of nvidia-smi topo -m.
gpu_cpu_affinity() {
  local topo header=1 col=-1 line i
  local -a fields
  topo=$(nvidia-smi topo -m 2>/dev/null) || return 0
  # shellcheck disable=SC2001 # colour escapes need a regular expression
  topo=$(sed 's/\x1b\[[0-9;]*m//g' <<<"${topo}")
  while IFS= read -r line; do
    # Tabs separate the columns and empty cells count, so split on a non-blank stand-in.
    IFS=$'\x1f' read -ra fields <<<"${line//$'\t'/$'\x1f'}"
    if ((header)) && [[ ${line} == *"CPU Affinity"* ]]; then
      for i in "${!fields[@]}"; do
        [[ ${fields[i]} == *"CPU Affinity"* ]] && col=${i}
      done
      header=0
    elif ((col >= 0)) && [[ ${fields[0]:-} =~ ^GPU([0-9]+)[[:space:]]*$ ]]; then
      echo "${BASH_REMATCH[1]} ${fields[col]// /}"
    fi
  done <<<"${topo}"
}

# Prints the positions (in all_*) of the GPUs in distinct[] whose CPU affinity overlaps my cores.
numa_candidates() {
  local mine idx cpus pos c
  local -A have=() close_to=()
  mine=$(expand_cpus "$(my_cores)")
  for c in ${mine}; do have[${c}]=1; done
  while read -r idx cpus; do
    [[ -n ${idx} ]] || continue
    for c in $(expand_cpus "${cpus}"); do
      if [[ -n ${have[${c}]:-} ]]; then
        close_to[${idx}]=1
        break
      fi
    done
  done < <(gpu_cpu_affinity)
  local out=()
  for pos in "${distinct[@]}"; do
    [[ -z ${close_to[${all_index[pos]}]:-} ]] || out+=("${pos}")
  done
  echo "${out[*]}"
}

# gpu_of_rank R VAR: sets VAR to the position (in all_*) of local rank R's GPU under round-robin
# or packed (a variable, not output: plan_gpu asks for every rank of the node).
gpu_of_rank() {
  local r=$1 n per k
  local -n gpu_out=$2
  case ${opt_policy} in
    packed)
      n=${#distinct[@]}
      per=$(((local_size + n - 1) / n))
      k=$((r / per))
      ((k < n)) || k=$((n - 1))
      gpu_out=${distinct[k]}
      ;;
    *)
      # shellcheck disable=SC2034 # a nameref: the caller's variable
      gpu_out=${slots[r % ${#slots[@]}]}
      ;;
  esac
}

# Sets my_gpu, ranks_on_gpu and max_ranks_on_gpu (and the GPU lists they come from).
plan_gpu() {
  discover_gpus
  apply_visible_devices
  if ((${#vis[@]} == 0)) && [[ ${opt_gpus} == auto ]]; then
    note "no visible GPU: running without GPU binding"
    return 0
  fi
  choose_gpu_slots
  local -A count=()
  local r g
  if [[ ${opt_policy} == numa ]]; then
    # Other ranks' cores are unknown here, so the counts assume an even spread.
    local -a near
    read -ra near <<<"$(numa_candidates)"
    if ((${#near[@]} == 0 || ${#near[@]} == ${#distinct[@]})); then
      note "numa: no GPU is closer to cores $(my_cores) than another; using round-robin"
      near=("${distinct[@]}")
    fi
    my_gpu=${near[local_rank % ${#near[@]}]}
    ranks_on_gpu=$(((local_size + ${#distinct[@]} - 1) / ${#distinct[@]}))
    max_ranks_on_gpu=${ranks_on_gpu}
    return 0
  fi
  for ((r = 0; r < local_size; r++)); do
    gpu_of_rank "${r}" g
    count[${g}]=$((${count[${g}]:-0} + 1))
    ((r != local_rank)) || my_gpu=${g}
  done
  ranks_on_gpu=${count[${my_gpu}]}
  for g in "${!count[@]}"; do
    ((count[${g}] <= max_ranks_on_gpu)) || max_ranks_on_gpu=${count[${g}]}
  done
}

# ---- MPS decision and per-client settings --------------------------------------------------------
# Prints the first owner other than root and this user of MPS pipe directory $1: of a link
# naming it, of the directory, of its control pipe. A daemon answering in a directory another
# user controls would be that user's, and its servers would run this user's kernels.
foreign_pipe_owner() {
  local pipe=$1 o
  while [[ ${pipe} == */ && ${pipe} != / ]]; do pipe=${pipe%/}; done
  for o in $(stat -c %u -- "${pipe}" "${pipe}/" "${pipe}/control" 2>/dev/null || true); do
    if [[ ${o} != 0 && ${o} != "${uid}" ]]; then
      echo "${o}"
      return 0
    fi
  done
}

# shellcheck disable=SC2034 # the decision is state (state.sh), read by the other parts
# Sets mps_use, mps_site, mps_pipe and mps_log (a site's daemon) from --mps, the environment and
# the plan; refuses more ranks on a GPU than MPS serves.
decide_mps() {
  local owner
  if [[ -n ${CUDA_MPS_PIPE_DIRECTORY:-} && ${opt_mps} != off ]]; then
    owner=$(foreign_pipe_owner "${CUDA_MPS_PIPE_DIRECTORY}")
    if [[ -n ${owner} ]]; then
      warn_once "CUDA_MPS_PIPE_DIRECTORY=$(printable "${CUDA_MPS_PIPE_DIRECTORY}") belongs to" \
        "uid ${owner}, neither root nor this user: ignoring it"
    elif CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-${CUDA_MPS_PIPE_DIRECTORY}} \
      timeout 10 nvidia-cuda-mps-control <<<get_server_list >/dev/null 2>&1; then
      mps_use=on
      mps_site=1
      mps_pipe=${CUDA_MPS_PIPE_DIRECTORY}
      mps_log=${CUDA_MPS_LOG_DIRECTORY:-}
      note "using the MPS daemon already serving ${mps_pipe}; it is not ours to stop"
      return 0
    else
      warn_once "CUDA_MPS_PIPE_DIRECTORY=${CUDA_MPS_PIPE_DIRECTORY} is set but no MPS daemon" \
        "answers there: ignoring it"
    fi
  fi
  if ((my_gpu < 0)); then
    if [[ ${opt_mps} == on ]]; then warn_once "--mps on, but no GPU: running without MPS"; fi
    return 0
  fi
  case ${opt_mps} in
    on) mps_use=on ;;
    off) mps_use=off ;;
    auto) if ((max_ranks_on_gpu > 1)); then mps_use=on; fi ;;
  esac
  if [[ ${mps_use} == on ]] && ! command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    # Every rank of the node sees the same PATH, so all of them fall back together.
    warn_once "nvidia-cuda-mps-control not found: running all ranks without MPS" \
      "(${max_ranks_on_gpu} ranks per GPU will be time-sliced)"
    mps_use=off
  fi
  if [[ ${mps_use} == on ]] && ((max_ranks_on_gpu > opt_max_clients)); then
    usage_error "${max_ranks_on_gpu} ranks on one GPU is more than MPS allows" \
      "(${opt_max_clients} clients per GPU, --mps-max-clients): use fewer ranks per node, more" \
      "GPUs or --mps off"
  fi
}


# Prints CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for the rank, or nothing.
thread_percentage() {
  [[ -n ${opt_thread_pct} ]] || return 0
  if [[ ${mps_use} != on ]]; then
    note "--mps-thread-percentage is ignored without MPS"
  elif [[ ${opt_thread_pct} == auto ]]; then
    local pct=$((ranks_on_gpu > 0 ? 100 / ranks_on_gpu : 100))
    echo $((pct > 0 ? pct : 1))
  else
    echo $((10#${opt_thread_pct}))
  fi
}

# Prints CUDA_DEVICE_MAX_CONNECTIONS for the rank, or nothing to leave it unset: the request
# (option, streams or environment), under MPS at most the rank's share of the server's connection
# budget. Without a request CUDA's default stands (8, under MPS 2): connections cost every client
# start-up time (docs/funnel-run.md), so funnel-run asks for none the app did not ask for.
connections() {
  local requested="" source=""
  if [[ -n ${opt_max_connections} ]]; then
    requested=$((10#${opt_max_connections}))
    source="--max-connections ${opt_max_connections}"
  elif [[ -n ${opt_streams} ]]; then
    requested=$((10#${opt_streams}))
    source="--streams ${opt_streams}"
    if ((requested > MAX_CONNECTIONS_LIMIT)); then
      note "--streams ${opt_streams}: CUDA_DEVICE_MAX_CONNECTIONS is capped at" \
        "${MAX_CONNECTIONS_LIMIT}"
      requested=${MAX_CONNECTIONS_LIMIT}
    fi
  elif [[ -n ${CUDA_DEVICE_MAX_CONNECTIONS:-} ]]; then
    requested=$((10#${CUDA_DEVICE_MAX_CONNECTIONS}))
    source="CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS}"
  fi
  if [[ ${mps_use} != on ]] || ((ranks_on_gpu == 0)); then
    echo "${requested}"
    return 0
  fi
  local budget=$((10#${opt_connection_budget})) share worst
  share=$((budget / ranks_on_gpu))
  ((share > 0)) || share=1
  if [[ -z ${source} ]]; then
    # MPS's own default, unless the ranks on this GPU would outgrow the budget with it.
    ((MPS_CLIENT_DEFAULT_CONNECTIONS <= share)) || echo "${share}"
    return 0
  fi
  worst=$((budget / max_ranks_on_gpu))
  ((worst > 0)) || worst=1
  if ((requested > worst)); then
    warn_once "${source} for ${max_ranks_on_gpu} ranks on one GPU is more than the MPS" \
      "connection budget of ${budget} per GPU allows: each rank gets ${worst} (the budget /" \
      "ranks on its GPU); raise --mps-connection-budget if this driver has more"
  fi
  echo $((requested < share ? requested : share))
}

# Prints the binding line of --print-binding and --dry-run (one write, so that the lines of ranks
# sharing a terminal or pipe do not interleave).
binding_line() {
  local gpu="-" uuid="-" line
  if ((my_gpu >= 0)); then
    gpu=${all_index[my_gpu]}
    uuid=${all_uuid[my_gpu]}
  fi
  printf -v line '%s: binding host=%s launcher=%s local_rank=%s local_size=%s cores=%s' \
    "${PROG}" "${HOSTNAME:-$(uname -n)}" "${launcher}" "${local_rank}" "${local_size}" "$(my_cores)"
  printf -v line '%s gpu=%s uuid=%s' "${line}" "${gpu}" "${uuid}"
  printf -v line '%s ranks_on_gpu=%s mps=%s pipe=%s threads=%s connections=%s policy=%s\n' \
    "${line}" "${ranks_on_gpu}" "${mps_use}" "${mps_pipe:--}" "${thread_pct:--}" \
    "${max_connections:--}" "${opt_policy}"
  printf '%s' "${line}"
}
