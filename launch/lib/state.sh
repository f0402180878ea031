# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2034 # the variables are read by the other parts
# funnel-run's state: its constants and every variable that more than one function reads or
# writes, each with what it holds and who sets it. Nothing else in funnel-run is global. Helpers
# return what they find on standard output or in their status; the few called once per rank of
# the node (where a fork each would slow a dense start) return it in a variable the caller names.
# Sourced first by funnel-run; every other part sources it too, for shellcheck (sourced once).
[[ -z ${funnel_state_loaded:-} ]] || return 0
funnel_state_loaded=1

# ---- constants ----------------------------------------------------------------------------------
# (funnel-run itself sets SELF, its own path, before it sources the parts.)
readonly PROG=funnel-run
version_string="@PROJECT_VERSION@" # filled in when the build copies funnel-run's parts
[[ ${version_string} != @* ]] || version_string="(source tree)"
readonly version_string
# The MPS server's client limit per GPU: no MPS command reports it, so it is an option whose
# default is what the driver was measured to serve (docs/funnel-run.md, "The client limit").
readonly DEFAULT_MPS_MAX_CLIENTS=48
# Hyper-Q connections (work queues) per CUDA context: CUDA's maximum, and what an MPS client
# gets when CUDA_DEVICE_MAX_CONNECTIONS is unset (NVIDIA's MPS documentation).
readonly MAX_CONNECTIONS_LIMIT=32
readonly MPS_CLIENT_DEFAULT_CONNECTIONS=2
# The connections the clients of one MPS server may own together: the largest total measured to
# work (docs/funnel-run.md, "The connection budget").
readonly DEFAULT_MPS_CONNECTION_BUDGET=96
# A rank whose start-up fails under a launcher exits only once every rank of its node has started
# (waiting at most LAUNCH_WAIT_US), LAUNCH_SETTLE_US after its own start and LAUNCH_MARGIN_US after
# it saw the last one: mpirun can hang when ranks exit while it still starts others
# (docs/funnel-run.md, "The mpirun hang"). Microseconds.
readonly LAUNCH_SETTLE_US=2000000
readonly LAUNCH_MARGIN_US=1000000
readonly LAUNCH_WAIT_US=10000000
# Names a job key may take (see choose_job_dir): others that another user took are passed over.
readonly JOB_DIR_NAMES=16
# How long a rank waits for the GPU listing that another (live) rank of its launch is making (see
# gpu_listing) before it runs nvidia-smi itself. Hundredths of a second.
readonly LISTING_WAIT_CS=500
# The MPS pipe is a Unix socket; its path must fit sockaddr_un (108 bytes with the terminator).
readonly MAX_PIPE_PATH=100
readonly MPS_PID_FILE=nvidia-cuda-mps-control.pid

# ---- messages (messages.sh) ---------------------------------------------------------------------
started_us=${EPOCHREALTIME/./} # when this rank started, microseconds
speaker=1        # 1 on the rank that reports what every rank of its node sees alike (local rank 0)
under_launcher=0 # 1 when srun/mpirun/... started this rank (peek_launcher)
peeked_size=0    # the node's rank count as the launcher's variables say it, before they are checked
msg_fd=2         # where start-up messages go: the stderr the rank started with (begin_setup saves it)
setup_begun=0    # 1 once begin_setup has set the start-up's traps
settle_pid=""    # the sleep of settle_sleep, killed when a signal ends the wait

# ---- options (options.sh: read_environment, then parse_args, then validate_options) -------------
opt_gpus=""; opt_policy=""; opt_mps=""; opt_mps_off_pipe=""; opt_thread_pct=""
opt_pinned_limit=""; opt_max_clients=""; opt_connection_budget=""; opt_client_devices=""
opt_max_connections=""; opt_streams=""; opt_mps_wait=""; opt_print_binding=0; opt_dry_run=0
opt_verbose=0; opt_job=""; opt_step=""; opt_tmpdir=""
opt_report=""   # --report[=DIR] / FUNNEL_REPORT: "" none, "on" the default directory, else DIR
report_dir=""   # the report directory (absolute) once decided; "" when no report is made
report_inject="" # libfunnel-report-inject.so (report.sh)
report_tool=""  # funnel-report (report.sh)
opt_cleanup=0
opt_job_given=0  # 1 when --job names the job: --cleanup then stops its daemons by force
opt_reap_dir=""  # --internal-reap DIR
quit_wait=10         # FUNNEL_MPS_QUIT_WAIT: seconds a daemon gets to quit before it is killed
reaper_interval=0.5  # FUNNEL_REAPER_INTERVAL: seconds between the reaper's looks at the ranks
tmpdir_real=""   # opt_tmpdir with every link resolved (validate_options)
app_argv=()      # the app and its arguments

# ---- the rank's binding (binding.sh: detect_local_rank, plan_gpu, decide_mps) -------------------
uid=${EUID}      # every file and process funnel-run acts on must be this uid's
local_rank=0
local_size=1
launcher=none    # which launcher's variables gave local_rank/local_size
all_index=()     # nvidia-smi index of each GPU
all_uuid=()      # its UUID
vis=()           # positions in all_* of the GPUs CUDA_VISIBLE_DEVICES leaves visible, in its order
slots=()         # positions in all_* of the GPUs ranks are spread over (round-robin: a slot list)
distinct=()      # the same without repetitions, in order of first appearance
my_gpu=-1        # position in all_* of this rank's GPU, -1 for none
ranks_on_gpu=0   # ranks of the node on my GPU
max_ranks_on_gpu=0 # the most ranks on any GPU of the node (the same for every rank)
mps_use=off      # on/off for this node's ranks
mps_site=0       # 1 when a daemon set up by somebody else (CUDA_MPS_PIPE_DIRECTORY) is used
mps_pipe=""      # the MPS pipe directory the rank is given
mps_log=""       # the MPS log directory the rank is given
thread_pct=""    # CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, or empty
max_connections="" # CUDA_DEVICE_MAX_CONNECTIONS; "" leaves it unset (CUDA's default)

# ---- the job on this node (jobdir.sh, mps.sh) ---------------------------------------------------
job_key=""       # <job>.<step>, sanitised
job_dir=""       # <tmpdir>/funnel-run-<uid>-<tag>
job_dir_private=1 # 0 when the job directory's name is the predictable job key (no usable $HOME)
inst_dir=""      # this rank's GPU directory in the job directory, when the job runs its own daemon
registered=""    # this rank's registration file (…/ranks/<pid>.wrapper) once written
job_lock_fd=""   # held while this rank registers in its job directory
inst_lock_fd=""  # held while this rank starts or joins its GPU's daemon

# ---- the app (app.sh) ---------------------------------------------------------------------------
child=""         # the app's pid
interrupted=0    # 1 when a forwarded signal ended the wait for the app
forwarded=" "    # the signals passed to the app, by name
