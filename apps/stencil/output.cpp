// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "output.hpp"

#include <sched.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#if FUNNEL_HAS_HDF5
#include "funnel/io/checkpoint_reader.hpp"
#include "funnel/io/checkpoint_writer.hpp"
#include "funnel/io/snapshot_writer.hpp"
#endif

namespace funnel::stencil {

#if FUNNEL_HAS_HDF5
namespace {

// --output-overlap resolved on all ranks alike (the file layout must match): auto is on unless
// some rank is bound to a single CPU, where the writing thread would take time from the steps.
bool overlap_snapshots(MPI_Comm comm, const std::string& choice) {
  if (choice != "auto") return choice == "on";
  int spare = 1;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) < 2) spare = 0;
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &spare, 1, MPI_INT, MPI_MIN, comm),
                 "--output-overlap auto");
  return spare == 1;
}

io::dtype dtype_of(const options& opts) {
  return opts.dtype == scalar_type::float32 ? io::dtype::float32 : io::dtype::float64;
}

io::grid_block block_of(const cartesian_decomposition& d) {
  return io::grid_block{d.global_cells(), d.local_box(), d.layout()};
}

std::vector<io::field_view> fields_of(solver& s, const options& opts) {
  return {io::field_view{s.field_name(), dtype_of(opts), s.host_field()}};
}

}  // namespace

struct restart_source::impl {
  io::checkpoint_reader reader;
  std::string field;
  io::dtype type;
};

restart_source::restart_source(MPI_Comm comm, const options& opts, const index3& global_cells,
                               const std::string& field) {
  const std::string path = opts.restart->empty() ? opts.checkpoint_dir : *opts.restart;
  io::checkpoint_reader reader(comm, path);
  reader.require(to_string(opts.problem), global_cells, {field}, dtype_of(opts));
  impl_ = std::make_unique<impl>(impl{std::move(reader), field, dtype_of(opts)});
}

restart_source::~restart_source() = default;

std::int64_t restart_source::step() const { return impl_->reader.step(); }

std::string restart_source::path() const { return impl_->reader.file(); }

std::string restart_source::run_id() const { return impl_->reader.run_id(); }

void restart_source::restore(solver& s, const cartesian_decomposition& d) const {
  s.restore(impl_->reader.step(),
            [&](void* host) { impl_->reader.read(impl_->field, block_of(d), impl_->type, host); });
}

struct run_output::impl {
  MPI_Comm comm;
  const options* opts;
  bool overlap = false;  // --output-overlap resolved
  io::checkpoint_options checkpoint;
  std::optional<io::checkpoint_writer> checkpoints;
  // Declared before the writer, so it outlives a block still being written when an error
  // unwinds the run (the writer's destructor waits for that block).
  std::optional<pinned_buffer> snapshot_buffer;  // what the background thread writes from
  std::optional<io::snapshot_writer> snapshots;

  // The snapshot of the current step: started (overlap on) or written.
  void snapshot(solver& s, const cartesian_decomposition& d) {
    if (!overlap) {
      snapshots->write(s.step(), s.time(), block_of(d), fields_of(s, *opts));
      return;
    }
    snapshots->wait();  // the buffer is free again
    const std::function<void()> landed = s.download_async(snapshot_buffer->data());
    try {
      snapshots->submit(s.step(), s.time(), block_of(d),
                        {io::field_view{s.field_name(), dtype_of(*opts), snapshot_buffer->data()}},
                        landed);
    } catch (...) {
      if (landed) landed();  // the download must land before an unwinding run frees the buffer
      throw;
    }
  }

  // Checkpoints wait for the snapshot in flight: its errors surface first, and both need HDF5.
  void checkpoint_now(solver& s, const cartesian_decomposition& d) {
    if (snapshots) snapshots->wait();
    writer().write(s.step(), s.time(), block_of(d), fields_of(s, *opts));
  }

  io::checkpoint_writer& writer() {
    // Runs that never checkpoint on schedule take the directory (and its lock) only when a
    // signal asks for a checkpoint, so plain runs leave no directory behind.
    if (!checkpoints) checkpoints.emplace(comm, checkpoint);
    return *checkpoints;
  }
};

run_output::run_output(MPI_Comm comm, const options& opts, std::string configuration,
                       const solver& s, backend_kind backend, std::size_t field_bytes,
                       std::string run_id)
    : impl_(std::make_unique<impl>()) {
  impl_->comm = comm;
  impl_->opts = &opts;
  impl_->checkpoint.directory = opts.checkpoint_dir;
  impl_->checkpoint.run_id = std::move(run_id);
  impl_->checkpoint.start_over = opts.checkpoint_start_over;
  impl_->checkpoint.keep_last = opts.keep;
  impl_->checkpoint.problem = to_string(opts.problem);
  impl_->checkpoint.configuration = std::move(configuration);
  impl_->checkpoint.spacing = s.spacing();
  // A directory that exists may hold another run's series: that is refused now, before any step,
  // not when a signal asks for a checkpoint it could then not write. (Rank 0 looks: the writer
  // is collective, so every rank must make the same choice.)
  int rank = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &rank), "run_output");
  std::error_code missing;  // an unreadable path counts as absent here; the writer says why
  int exists = rank == 0 && std::filesystem::exists(opts.checkpoint_dir, missing) ? 1 : 0;
  FUNNEL_MPI_TRY(MPI_Bcast(&exists, 1, MPI_INT, 0, comm), "run_output");
  if (opts.checkpoint_every > 0 || exists != 0) impl_->writer();
  if (opts.output_every > 0) {
    io::snapshot_options snapshot;
    snapshot.directory = opts.output_dir;
    snapshot.series = to_string(opts.problem);
    snapshot.problem = to_string(opts.problem);
    snapshot.spacing = s.spacing();
    // Only one file per rank can be written behind the steps: a shared file needs collective
    // MPI-IO, which the writing thread may not call (MPI_THREAD_FUNNELED).
    impl_->overlap = overlap_snapshots(comm, opts.output_overlap);
    snapshot.mode = impl_->overlap ? io::file_mode::file_per_rank : io::file_mode::automatic;
    impl_->snapshots.emplace(comm, snapshot);
    if (impl_->overlap) impl_->snapshot_buffer.emplace(backend, field_bytes);
  }
}

run_output::~run_output() = default;

double run_output::after_step(solver& s, const cartesian_decomposition& d) {
  const auto start = std::chrono::steady_clock::now();
  const auto step = s.step();
  const options& opts = *impl_->opts;
  const bool snapshot = impl_->snapshots && step % opts.output_every == 0;
  const bool checkpoint = opts.checkpoint_every > 0 && step % opts.checkpoint_every == 0;
  if (!snapshot && !checkpoint) return 0.0;
  if (snapshot) impl_->snapshot(s, d);
  if (checkpoint) impl_->checkpoint_now(s, d);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double run_output::finish() {
  const auto start = std::chrono::steady_clock::now();
  if (impl_->snapshots) impl_->snapshots->wait();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double run_output::background_seconds() const noexcept {
  return impl_->snapshots ? impl_->snapshots->background_seconds() : 0.0;
}

std::string run_output::describe() const {
  if (!impl_->snapshots) return {};
  const std::string every = "every " + std::to_string(impl_->opts->output_every) + " steps to " +
                            impl_->opts->output_dir + ", ";
  if (impl_->overlap && impl_->snapshots->overlaps()) {
    return every + "written behind the steps (one file per rank + main file)";
  }
  std::string why;
  if (impl_->overlap) {
    why = "MPI gives no MPI_THREAD_FUNNELED";
  } else if (impl_->opts->output_overlap == "auto") {
    why = "a rank is bound to one CPU: give each rank 2 or use --output-overlap on";
  } else {
    why = "--output-overlap off";
  }
  return every + "the steps wait for each (" + why + ")";
}

void run_output::save_for_stop(solver& s, const cartesian_decomposition& d) {
  const options& opts = *impl_->opts;
  const bool written = opts.checkpoint_every > 0 && s.step() % opts.checkpoint_every == 0;
  if (written) {
    finish();
  } else {
    impl_->checkpoint_now(s, d);
  }
}

#else  // no HDF5: output and restart are refused up front

struct restart_source::impl {};
restart_source::restart_source(MPI_Comm, const options&, const index3&, const std::string&) {
  throw unsupported("--restart needs HDF5: rebuild with FUNNEL_ENABLE_HDF5=ON");
}
restart_source::~restart_source() = default;
std::int64_t restart_source::step() const { return 0; }
std::string restart_source::path() const { return ""; }
std::string restart_source::run_id() const { return ""; }
void restart_source::restore(solver&, const cartesian_decomposition&) const {}

struct run_output::impl {};
run_output::run_output(MPI_Comm, const options& opts, std::string, const solver&, backend_kind,
                       std::size_t, std::string)
    : impl_(std::make_unique<impl>()) {
  if (opts.output_every > 0 || opts.checkpoint_every > 0) {
    throw unsupported(
        "--output-every/--checkpoint-every need HDF5: rebuild with "
        "FUNNEL_ENABLE_HDF5=ON");
  }
}
run_output::~run_output() = default;
double run_output::after_step(solver&, const cartesian_decomposition&) { return 0.0; }
double run_output::finish() { return 0.0; }
double run_output::background_seconds() const noexcept { return 0.0; }
std::string run_output::describe() const { return {}; }
// Without checkpoints the best answer to "stop" is to stop; the job script requeues.
void run_output::save_for_stop(solver&, const cartesian_decomposition&) {}

#endif

}  // namespace funnel::stencil
