// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "run.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "field_dump.hpp"
#include "funnel/binding/binding.hpp"
#include "funnel/config.hpp"
#include "funnel/decomposition/placement_by_device.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/implementation.hpp"
#include "funnel/pipeline/choose_pipeline.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/device.hpp"
#include "kokkos_runtime.hpp"
#include "module_loading.hpp"
#include "output.hpp"
#include "plan.hpp"
#include "progress.hpp"
#include "solver.hpp"
#include "streamed_field.hpp"
#include "summary.hpp"
#include "user_files.hpp"

namespace funnel::stencil {
namespace {

/// --kernel, or the backend's own implementation; checked against the backend and the build.
std::string resolve_kernel(const options& opts, backend_kind backend) {
  const std::string name = opts.kernel.value_or(backend == backend_kind::cuda ? "cuda" : "host");
  const auto impl = kernels::parse_implementation(name);
  if (impl == kernels::implementation::cuda && backend != backend_kind::cuda) {
    throw invalid_argument(
        "--kernel 'cuda' is not valid with the host backend: expected "
        "host|kokkos (or --backend cuda)");
  }
  if (impl == kernels::implementation::host && backend == backend_kind::cuda) {
    throw invalid_argument(
        "--kernel 'host' is not valid with the cuda backend (the field is in "
        "device memory): expected cuda|kokkos (or --backend host)");
  }
  if (!kernels::implementation_compiled(impl)) {
    throw unsupported("--kernel '" + name + "' is not compiled into this build: rebuild with " +
                      (impl == kernels::implementation::kokkos ? "FUNNEL_ENABLE_KOKKOS=ON"
                                                               : "FUNNEL_ENABLE_CUDA=ON"));
  }
  kokkos_runtime::check(name, backend);
  return name;
}

/// The plan's binding facts for the whole job, from every rank's funnel::binding report.
struct job_binding {
  int gpus = 0;           // distinct GPUs used by the job
  int ranks_per_gpu = 0;  // most ranks on one GPU
  std::string mps = "n/a";
  bool time_sliced = false;  // some GPU is shared by ranks that MPS does not serve
};

job_binding summarize_binding(const binding_report& report, MPI_Comm comm) {
  job_binding j;
  if (report.backend != backend_kind::cuda) return j;
  // Each GPU's ranks contribute 1/ranks_on_gpu each, so the sum counts GPUs over all nodes.
  double share = report.ranks_on_gpu > 0 ? 1.0 / report.ranks_on_gpu : 0.0;
  int serving = report.mps_serving ? 1 : 0;
  int most[2] = {report.max_ranks_on_gpu, report.ranks_on_gpu > 1 && !report.mps_serving ? 1 : 0};
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &share, 1, MPI_DOUBLE, MPI_SUM, comm), "run");
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &serving, 1, MPI_INT, MPI_SUM, comm), "run");
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, most, 2, MPI_INT, MPI_MAX, comm), "run");
  j.gpus = static_cast<int>(std::lround(share));
  j.ranks_per_gpu = most[0];
  j.time_sliced = most[1] != 0;
  j.mps = serving == report.size ? "yes (confirmed)"
          : serving == 0
              ? "no"
              : std::to_string(serving) + " of " + std::to_string(report.size) + " ranks";
  return j;
}

/// --halo-overlap resolved for the whole job. auto is on, except where ranks share a GPU
/// time-sliced: a context whose halo stream waits for a neighbour while its compute stream has
/// work keeps its time slice, which made the overlapped step an order of magnitude slower than
/// the exchange followed by one update (docs/halo.md, "Many ranks on one GPU").
bool resolve_halo_overlap(const std::string& choice, const job_binding& job) {
  if (choice != "auto") return choice == "on";
  return !job.time_sliced;
}

/// --steps-per-launch auto resolved for the whole job: the smallest of the ranks' choices
/// (auto_steps_per_launch; `sharing`: the ranks sharing this rank's GPU under MPS), so that every
/// rank takes the same halo depth.
int resolve_steps_per_launch(MPI_Comm comm, const options& opts, backend_kind backend,
                             const std::string& kernel, const cartesian_decomposition& split,
                             int sharing) {
  const std::size_t l2 =
      backend == backend_kind::cuda ? device::current().properties().l2_cache_bytes : 0;
  int choice = auto_steps_per_launch(opts, kernel, split.layout(), l2, sharing);
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &choice, 1, MPI_INT, MPI_MIN, comm), "run");
  return choice;
}

/// The pool of the field: one place decides its options. IPC halos need an exportable pool;
/// on the host backend that pool is a memfd arena, sized here for both fields, the exchange's
/// message buffers and the Jacobi accumulators with room to spare.
memory_pool_options field_pool_options(const options& opts, const field_layout& layout,
                                       std::size_t element_size) {
  memory_pool_options o;
  o.name = "funnel-stencil-field";
  // Streamed mode exchanges halos on its host arrays: this pool only holds the pipeline's slots.
  o.ipc_exportable = opts.mode == run_mode::resident && opts.halo != "mpi";
  std::size_t arena = 0;  // 4 x the field's bytes
  if (__builtin_mul_overflow(static_cast<std::size_t>(layout.allocated_cells()), 4 * element_size,
                             &arena)) {
    throw invalid_argument("a rank's field of " + std::to_string(layout.allocated_cells()) +
                           " cells is too large for this machine's address space");
  }
  o.host_ipc_capacity = std::max<std::size_t>(std::size_t{64} << 20, arena);
  o.byte_limit = opts.pool_limit;
  return o;
}

/// make_solver, where a resident field that does not fit in GPU memory is said in one line that
/// names what does not fit: the two fields of every rank sharing the GPU.
std::unique_ptr<solver> make_resident_or_explain(const run_setup& setup, int ranks_on_gpu) {
  try {
    return make_solver(setup);
  } catch (const out_of_memory& e) {
    if (setup.opts->mode != run_mode::resident || setup.backend != backend_kind::cuda) throw;
    const auto gib = [](double bytes) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
      return std::string(text);
    };
    const double field = static_cast<double>(setup.decomposition->layout().allocated_cells()) *
                         static_cast<double>(element_size_of(*setup.opts->dtype));
    const double total = static_cast<double>(device::current().properties().total_memory);
    throw out_of_memory(
        e.requested_bytes(), setup.pool->name(), e.pool_used_bytes(), e.pool_reserved_bytes(),
        "the grid does not fit: each rank keeps 2 fields of " + gib(field) + " on its GPU, " +
            std::to_string(ranks_on_gpu) + " rank(s) on a GPU of " + gib(total) +
            "; use more GPUs, --mode streamed or a smaller --n");
  }
}

/// The next step the loop must stop at: the last step, or one a check, snapshot or checkpoint
/// is due at (a streamed pass never runs past it).
std::int64_t next_stop(const options& opts, std::int64_t step, std::int64_t last_step) {
  std::int64_t stop = last_step;
  // jacobi2d's -nccheck is the norm cadence inside its solver, not a stop of this loop.
  const std::int64_t check =
      opts.problem == problem_kind::heat3d ? opts.check_every.value_or(0) : 0;
  for (const std::int64_t every : {check, opts.output_every, opts.checkpoint_every}) {
    if (every > 0) stop = std::min(stop, (step / every + 1) * every);
  }
  return stop;
}

/// What all ranks agree on after a chunk of steps: whether some rank caught a stop signal, and
/// (resident mode) how many steps the next chunk has.
struct chunk_agreement {
  bool stop = false;
  std::int64_t next_chunk = 1;
};

/// Resident mode enqueues steps ahead of the GPU and looks for a stop signal only between
/// chunks: each look is a collective, and a collective every step would make the host meet the
/// other hosts every step instead of running ahead. A chunk grows or shrinks towards
/// `chunk_seconds` of run time; every rank proposes from its own clock and the smallest
/// proposal wins, so all ranks stop at the same step. The collective is non-blocking and
/// completed under the halo watchdog, so a rank that stopped ends the job instead of hanging it.
/// Where steps run as CUDA graphs, chunks are whole graphs (`granule` steps, see chunk_end): a
/// chunk that ended inside one would run its steps one launch at a time, several times slower
/// than in graphs when many ranks share a GPU (docs/halo.md, "Lazy loading and the run's clock").
constexpr double chunk_seconds = 0.05;

chunk_agreement agree_after_chunk(MPI_Comm comm, solver& s, bool caught, std::int64_t chunk,
                                  double seconds, std::int64_t granule) {
  constexpr std::int64_t most = std::int64_t{1} << 20;
  long long proposal = chunk * 2;
  if (seconds > chunk_seconds / 2) {
    proposal = std::max<long long>(
        chunk / 2, static_cast<long long>(static_cast<double>(chunk) * chunk_seconds / seconds));
  }
  proposal = std::clamp<long long>(proposal, 1, most);
  proposal = std::max<long long>(granule, proposal / granule * granule);
  long long values[2] = {caught ? 1 : 0, -proposal};  // MAX of both: any stop, smallest chunk
  MPI_Request request = MPI_REQUEST_NULL;
  FUNNEL_MPI_TRY(MPI_Iallreduce(MPI_IN_PLACE, values, 2, MPI_LONG_LONG, MPI_MAX, comm, &request),
                 "run: agreeing on a stop and the next chunk");
  s.wait(request);
  return chunk_agreement{values[0] != 0, -values[1]};
}

/// Device bytes the streamed pipeline may take: the pool's limit when given.
std::size_t pipeline_budget(const options& opts, backend_kind backend, int ranks_per_gpu,
                            const field_layout& layout, std::size_t element_size) {
  if (opts.mode != run_mode::streamed) return 0;
  if (opts.pool_limit) return *opts.pool_limit;
  return default_device_budget(backend, ranks_per_gpu,
                               static_cast<std::size_t>(layout.allocated_cells()) * element_size);
}

/// Runs a local check on every rank (it must not communicate). When it throws on any rank, the
/// lowest such rank prints its message once and every rank throws reported_usage_error, so the
/// user sees one line and no rank is left in a collective.
template <class Check>
void check_collectively(MPI_Comm comm, const Check& check) {
  int rank = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &rank), "run");
  std::string message;
  try {
    check();
  } catch (const invalid_argument& e) {
    message = e.message();
  }
  int first_bad = message.empty() ? std::numeric_limits<int>::max() : rank;
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT, MPI_MIN, comm), "run");
  if (first_bad == std::numeric_limits<int>::max()) return;
  if (first_bad == rank) {
    std::fprintf(stderr, "funnel-stencil: %s\n", message.c_str());
    std::fflush(stderr);
  }
  throw reported_usage_error(first_bad == rank ? message
                                               : "reported by rank " + std::to_string(first_bad));
}

/// The streamed options against this rank's box and the device budget, before any allocation
/// (the choice made later with the probe can only pick more chunks where these fit).
void validate_streamed(const options& opts, const cartesian_decomposition& d,
                       std::size_t element_size, std::size_t budget) {
  pipeline_overrides overrides;
  if (opts.chunks > 0) overrides.chunks = opts.chunks;
  if (opts.streams > 0) overrides.slots = opts.streams;
  overrides.steps_per_pass = opts.steps_per_pass;
  try {
    (void)choose_pipeline(d.layout(), 1, element_size, budget, pipeline_probe{}, overrides,
                          faces_of(d), opts.steps_per_pass);
  } catch (const invalid_argument& e) {
    const index3 n = d.local_box().extents();
    throw invalid_argument(
        "--mode streamed on rank " + std::to_string(d.rank()) + "'s box " + std::to_string(n[0]) +
        "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]) + " (--steps-per-pass " +
        std::to_string(opts.steps_per_pass) + ", device budget " + std::to_string(budget) +
        " bytes" + (opts.pool_limit ? " from --pool-limit" : "") + "): " + e.what());
  }
}

/// Runs `write` on every rank, in which rank 0 writes a file: a funnel::system_error there (a
/// full disk) becomes every rank's error, with rank 0's message, so no rank goes on to a
/// collective rank 0 never reaches.
template <class Write>
void agree_on_rank0_write(MPI_Comm comm, const Write& write) {
  int failure[2] = {0, 0};  // errno, message length
  std::string message;
  try {
    write();
  } catch (const system_error& e) {
    message = e.what();
    failure[0] = e.errnum() != 0 ? e.errnum() : EIO;
    failure[1] = static_cast<int>(message.size());
  }
  FUNNEL_MPI_TRY(MPI_Bcast(failure, 2, MPI_INT, 0, comm), "run");
  if (failure[0] == 0) return;
  message.resize(static_cast<std::size_t>(failure[1]));
  FUNNEL_MPI_TRY(MPI_Bcast(message.data(), failure[1], MPI_CHAR, 0, comm), "run");
  throw system_error(message, failure[0]);
}

/// The plan's halo fallback: how many ranks reach an on-node neighbour over MPI instead of IPC,
/// and the reason the lowest of them gives (one line however many ranks fell back).
void gather_fallback(MPI_Comm comm, const std::string& mine, plan_info& p) {
  int rank = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &rank), "run");
  int ranks = mine.empty() ? 0 : 1;
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &ranks, 1, MPI_INT, MPI_SUM, comm), "run");
  p.halo_fallback_ranks = ranks;
  if (ranks == 0) return;
  int first = mine.empty() ? std::numeric_limits<int>::max() : rank;
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm), "run");
  constexpr int most = 300;  // the plan's line stays one line
  char text[most + 1] = {};
  if (rank == first) mine.copy(text, most);
  FUNNEL_MPI_TRY(MPI_Bcast(text, most + 1, MPI_CHAR, first, comm), "run");
  p.halo_fallback = text;
}

plan_info gather_plan(const options& opts, const std::string& backend, const std::string& kernel,
                      int nodes, const cartesian_decomposition& d, const solver& s) {
  plan_info p;
  p.version = FUNNEL_VERSION;
  p.problem = to_string(opts.problem);
  p.dtype = to_string(*opts.dtype);
  p.mode = to_string(opts.mode);
  p.backend = backend;
  p.kernel = kernel;
  p.global_cells = d.global_cells();
  p.first_step = s.step();
  p.last_step = *opts.steps;
  p.ranks = d.size();
  p.nodes = nodes;
  p.mps = "n/a";
  p.dims = d.dims();
  p.boxes_by_device = d.placed();
  p.smallest_box = d.box_of(0).extents();
  p.largest_box = p.smallest_box;
  for (int r = 1; r < d.size(); ++r) {
    const index3 e = d.box_of(r).extents();
    if (e[0] * e[1] * e[2] < p.smallest_box[0] * p.smallest_box[1] * p.smallest_box[2]) {
      p.smallest_box = e;
    }
    if (e[0] * e[1] * e[2] > p.largest_box[0] * p.largest_box[1] * p.largest_box[2]) {
      p.largest_box = e;
    }
  }
  unsigned long long bytes = s.field_bytes();
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, d.comm()),
                 "run");
  p.bytes_per_rank = bytes;
  const auto paths = s.halo_paths();
  int links[4] = {0, 0, 0, 0};  // mpi, ipc, peer, local
  for (const auto& path : paths) {
    const bool ipc = path.find(" ipc") != std::string::npos;
    const bool peer = path.find(" peer") != std::string::npos;
    const bool local = path.find(" local") != std::string::npos;
    links[ipc ? 1 : peer ? 2 : local ? 3 : 0] += 1;
  }
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, links, 4, MPI_INT, MPI_SUM, d.comm()), "run");
  p.mpi_links = links[0];
  p.ipc_links = links[1];
  p.peer_links = links[2];
  p.local_links = links[3];
  p.rank0_paths = paths;
  gather_fallback(d.comm(), s.halo_fallback(), p);
  return p;
}

/// What the step loop works with (all owned by run()).
struct steps_context {
  MPI_Comm comm;
  int rank;
  const options& opts;
  backend_kind backend;
  const std::string& kernel;
  int nodes;
  bool print;
  const cartesian_decomposition& decomposition;
  solver& s;
  run_output& output;
  memory_pool& pool;
  const io::termination_request& termination;
};

/// The step loop, the summary and the final output.
int run_steps(const steps_context& c) {
  const MPI_Comm comm = c.comm;
  const int rank = c.rank;
  const options& opts = c.opts;
  const cartesian_decomposition& decomposition = c.decomposition;
  solver* const s = &c.s;
  run_output& output = c.output;
  memory_pool& pool = c.pool;
  const backend_kind backend = c.backend;
  const std::string& kernel = c.kernel;
  const int nodes = c.nodes;
  const bool print = c.print;
  run_summary summary;
  summary.first_step = s->step();
  const std::int64_t last_step = *opts.steps;
  const index3 global = decomposition.global_cells();
  progress_meter progress(stdout, s->step(), last_step,
                          static_cast<double>(global[0] * global[1] * global[2]), print,
                          isatty(fileno(stdout)) != 0);
  double halo_seconds = 0.0;
  // One granule for every rank (each rank's chunks must match: they end in a collective).
  long long granule = std::max<std::int64_t>(1, s->steps_per_graph());
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &granule, 1, MPI_LONG_LONG, MPI_MAX, comm), "run");
  std::int64_t chunk = granule;
  const std::int64_t first = s->step();
  FUNNEL_MPI_TRY(MPI_Barrier(comm), "run");
  const double start = MPI_Wtime();
  while (s->step() < last_step && !s->converged()) {
    const double chunk_start = MPI_Wtime();
    std::int64_t limit = next_stop(opts, s->step(), last_step);
    if (opts.mode == run_mode::resident) {
      limit = std::min(limit, chunk_end(s->step(), chunk, first, granule));
    }
    halo_seconds += s->advance(limit);
    s->check();
    const double written = output.after_step(*s, decomposition);
    if (written > 0.0) {
      summary.output_seconds += written;
      ++summary.outputs;
    }
    progress.update(s->step());
    const chunk_agreement agreed = agree_after_chunk(comm, *s, c.termination.requested(), chunk,
                                                     MPI_Wtime() - chunk_start, granule);
    chunk = agreed.next_chunk;
    if (agreed.stop) {
      output.save_for_stop(*s, decomposition);
      summary.interrupted = true;
      break;
    }
  }
  summary.output_seconds += output.finish();  // the last snapshot, if still being written
  s->wait_for_steps();
  halo_seconds += s->halo_seconds_pending();
  // The run's time ends with this rank's last step; the slowest rank's counts (MAX below).
  // Closing the exchange is teardown (two node barriers and the IPC unmapping: 15 ms with 32
  // ranks on one GPU, where 2000 steps take about 110 ms), so it is not part of the steps' rate;
  // nor is the download of the final field for heat3d's error (s->finish, after it).
  double times[3] = {MPI_Wtime() - start, halo_seconds, output.background_seconds()};
  s->close();  // no neighbour maps or writes this rank's field any more
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, times, 3, MPI_DOUBLE, MPI_MAX, comm), "run");
  summary.output_background_seconds = times[2];
  progress.finish();

  summary.version = FUNNEL_VERSION;
  summary.problem = to_string(opts.problem);
  summary.dtype = to_string(*opts.dtype);
  summary.backend = to_string(backend);
  summary.kernel = kernel;
  summary.mode = to_string(opts.mode);
  summary.halo_overlap = opts.halo_overlap;
  summary.graphs = opts.graphs ? "auto" : "off";
  summary.placement = opts.placement;
  summary.boxes_by_device = decomposition.placed();
  summary.steps_per_graph = s->steps_per_graph();
  summary.halo_depth = s->steps_per_exchange();
  summary.steps_per_launch = s->steps_per_launch();
  summary.row_align_bytes = row_align_bytes(decomposition, s->element_size());
  summary.halo_pushed = s->halo_pushed();
  summary.halo_overlap_used = opts.mode != run_mode::resident ? "n/a"
                              : s->halo_overlapped()          ? "on"
                                                              : "off";
  summary.ranks = decomposition.size();
  summary.nodes = nodes;
  summary.dims = decomposition.dims();
  summary.global_cells = global;
  summary.last_step = s->step();
  summary.seconds = times[0];
  summary.halo_seconds = times[1];
  summary.element_size = s->element_size();
  s->finish(summary);
  const pool_statistics stats = pool.statistics();
  unsigned long long high[2] = {stats.reserved_high, stats.used_high};
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, high, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm),
                 "run");
  summary.pool_reserved_high = high[0];
  summary.pool_used_high = high[1];

  if (!opts.field_dump.empty()) {
    agree_on_rank0_write(comm, [&] {
      write_field_dump(decomposition, s->host_field(), s->element_size(), opts.field_dump);
    });
  }
  if (rank == 0) {
    std::printf("%s\n", format_summary(summary).c_str());
    std::fflush(stdout);
  }
  if (!opts.summary.empty()) {
    agree_on_rank0_write(comm, [&] {
      if (rank == 0) write_summary_file(opts.summary, summary);
    });
  }
  if (summary.interrupted && rank == 0) {
    std::printf("stopped by a signal at step %lld: checkpoint written, exit status %d (requeue)\n",
                static_cast<long long>(s->step()), exit_requeue);
    std::fflush(stdout);
  }
  return summary.interrupted ? exit_requeue : exit_success;
}

}  // namespace

std::int64_t chunk_end(std::int64_t step, std::int64_t chunk, std::int64_t first,
                       std::int64_t granule) {
  const std::int64_t end = step + chunk;
  const std::int64_t aligned = first + (end - first) / granule * granule;
  return aligned > step ? aligned : end;
}

void abort_job(int rank, const std::exception& e) {
  std::fprintf(stderr, "funnel-stencil: rank %d: %s\n", rank, user_message(e).c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_failure);
  std::exit(exit_failure);  // MPI_Abort does not return; in case the library's does
}

run_config prepare(const std::vector<std::string>& args) {
  run_config config;
  config.opts = parse_options(args);
  if (config.opts.help || config.opts.version) return config;
  config.backend = select_backend(config.opts.backend);
  resolve_defaults(config.opts, config.backend == backend_kind::cuda);
  config.kernel = resolve_kernel(config.opts, config.backend);
  return config;
}

int run(const run_config& config, MPI_Comm comm, const io::termination_request& termination) {
  int rank = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &rank), "run");
  // The options as given, with --steps-per-launch auto decided below for the whole job.
  options resolved = config.opts;
  const options& opts = resolved;
  const backend_kind backend = config.backend;
  const std::string& kernel = config.kernel;
  // Rank 0 writes these at the end: a path it cannot write is found before the run, not after.
  check_collectively(comm, [&] {
    if (rank != 0) return;
    for (const auto& [option, path] :
         {std::pair{"--summary", opts.summary}, std::pair{"--trace", opts.trace},
          std::pair{"--field-dump", opts.field_dump}}) {
      if (!path.empty()) app::check_output_file(option, path);
    }
  });
  // Makes this rank's GPU current (funnel-run's choice, or round-robin on the node) and finds
  // who shares it; warns on rank 0 about sharing without MPS.
  const binding bound = binding::detect(comm, backend);
  const int nodes = bound.report().node_count;
  const job_binding job = summarize_binding(bound.report(), comm);
  const bool print = rank == 0 && !opts.quiet;
  // Kokkos on the device the binding chose; declared before everything that runs its kernels,
  // so it is finalised after them (and before MPI_Finalize, in main).
  std::optional<kokkos_runtime> kokkos;
  check_collectively(comm, [&] { kokkos.emplace(kernel, opts.kokkos_args); });

  // Which box each rank takes (--placement device): collective, so gathered before the local
  // checks below.
  const std::vector<int> placement = opts.placement == "device"
                                         ? placement_by_device(comm, bound.report().gpu_uuid)
                                         : std::vector<int>{};
  // The split fails (a halo wider than a box, more ranks than cells) alike on every rank.
  std::optional<cartesian_decomposition> split;
  check_collectively(comm,
                     [&] { split.emplace(make_decomposition(comm, opts, kernel, placement)); });
  if (opts.steps_per_launch == 0) {
    resolved.steps_per_launch = resolve_steps_per_launch(
        comm, opts, backend, kernel, *split, job.time_sliced ? 0 : bound.report().ranks_on_gpu);
    if (opts.steps_per_launch == 2) {  // the same boxes with a halo 2 deep
      split.reset();
      check_collectively(comm,
                         [&] { split.emplace(make_decomposition(comm, opts, kernel, placement)); });
    }
  }
  const cartesian_decomposition& decomposition = *split;
  // A restart is validated before anything is allocated.
  std::unique_ptr<restart_source> restart;
  if (opts.restart) {
    restart = std::make_unique<restart_source>(comm, opts, decomposition.global_cells(),
                                               field_name_of(opts.problem));
    const std::int64_t at = restart->step();
    if (at > *opts.steps) {
      throw invalid_argument("--steps " + std::to_string(*opts.steps) +
                             " is before the checkpoint's step " + std::to_string(at) + " ('" +
                             restart->path() + "'): give --steps " + std::to_string(at) +
                             " or more to continue the series");
    }
    if (at == *opts.steps) {
      // A finished series (a requeued job that already ran to its end): say so, run nothing.
      if (rank == 0) {
        std::printf(
            "funnel-stencil: nothing left to run: the checkpoint '%s' is at step %lld, "
            "the --steps given\n",
            restart->path().c_str(), static_cast<long long>(at));
        std::fflush(stdout);
      }
      return exit_success;
    }
  }
  const std::size_t element_size = element_size_of(*opts.dtype);
  memory_pool pool(backend, field_pool_options(opts, decomposition.layout(), element_size));
  run_setup setup{&opts, backend, kernel, &decomposition, &pool, print};
  setup.halo_overlap = resolve_halo_overlap(opts.halo_overlap, job);
  setup.graph_overlap =
      graph_overlap(opts.halo_overlap, job.time_sliced, job.ranks_per_gpu, opts.steps_per_launch);
  setup.device_budget_bytes = pipeline_budget(opts, backend, bound.report().ranks_on_gpu,
                                              decomposition.layout(), element_size);
  if (opts.mode == run_mode::streamed) {
    check_collectively(comm, [&] {
      validate_streamed(opts, decomposition, element_size, setup.device_budget_bytes);
    });
  }
  const auto s = make_resident_or_explain(setup, bound.report().ranks_on_gpu);
  s->initialize();
  if (restart) restart->restore(*s, decomposition);
  run_output output(
      comm, opts, to_config_text(config.opts), *s, backend,
      static_cast<std::size_t>(decomposition.layout().allocated_cells()) * element_size,
      restart ? restart->run_id() : std::string());

  plan_info plan = gather_plan(opts, to_string(backend), kokkos_runtime::describe(kernel, backend),
                               nodes, decomposition, *s);
  if (restart) plan.restart_from = restart->path();
  plan.gpus = job.gpus;
  plan.ranks_per_gpu = job.ranks_per_gpu;
  plan.mps = job.mps;
  if (backend == backend_kind::cuda) plan.module_loading = module_loading();  // main() settled it
  plan.warnings = bound.report().warnings;
  plan.pipeline = s->pipeline_plan();
  plan.steps_per_graph = s->steps_per_graph();
  plan.halo_depth = s->steps_per_exchange();
  plan.steps_per_launch = s->steps_per_launch();
  plan.row_align_bytes = row_align_bytes(decomposition, element_size);
  plan.auto_padded_row = auto_padded_row(opts, kernel, row_shapes_of(decomposition));
  plan.halo_pushed = s->halo_pushed();
  plan.halo_overlapped = s->halo_overlapped();
  plan.overlap_off_time_sliced =
      opts.mode == run_mode::resident && opts.halo_overlap == "auto" && !setup.halo_overlap;
  plan.snapshots = output.describe();
  if (rank == 0) {
    std::fputs(format_plan(plan).c_str(), stdout);
    std::fflush(stdout);
  }

  // A signal that came during the set-up stops the run before its first step: nothing was
  // computed, so nothing is saved (a checkpoint restarted from is still there).
  if (termination.agreed(comm)) {
    if (rank == 0) {
      std::printf(
          "stopped by a signal before the first step (step %lld): nothing to save, exit "
          "status %d (requeue)\n",
          static_cast<long long>(s->step()), exit_requeue);
      std::fflush(stdout);
    }
    s->close();  // every rank is here: the exchange ends as after the last step
    return exit_requeue;
  }

  // A stall ends the job here, before anything is destroyed: this rank's streams wait on a
  // neighbour that stopped, and freeing or unmapping CUDA resources would wait for them
  // forever. Every other error unwinds to main, which agrees on it with the other ranks.
  try {
    return run_steps(steps_context{comm, rank, opts, backend, kernel, nodes, print, decomposition,
                                   *s, output, pool, termination});
  } catch (const stall_error& e) {
    abort_job(rank, e);
  }
}

}  // namespace funnel::stencil
