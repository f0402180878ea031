#include "output.hpp"

#include <chrono>
#include <optional>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/io/termination_request.hpp"
#if FUNNEL_HAS_HDF5
#include "funnel/io/checkpoint_reader.hpp"
#include "funnel/io/checkpoint_writer.hpp"
#include "funnel/io/snapshot_writer.hpp"
#endif

namespace funnel::stencil {

#if FUNNEL_HAS_HDF5
namespace {

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

void restart_source::restore(solver& s, const cartesian_decomposition& d) const {
  s.restore(impl_->reader.step(),
            [&](void* host) { impl_->reader.read(impl_->field, block_of(d), impl_->type, host); });
}

struct run_output::impl {
  MPI_Comm comm;
  const options* opts;
  io::checkpoint_options checkpoint;
  std::optional<io::snapshot_writer> snapshots;
  std::optional<io::checkpoint_writer> checkpoints;
  io::termination_request termination;

  io::checkpoint_writer& writer() {
    // Runs that never checkpoint on schedule take the directory (and its lock) only when a
    // signal asks for a checkpoint, so plain runs leave no directory behind.
    if (!checkpoints) checkpoints.emplace(comm, checkpoint);
    return *checkpoints;
  }
};

run_output::run_output(MPI_Comm comm, const options& opts, std::string configuration,
                       const solver& s)
    : impl_(std::make_unique<impl>()) {
  impl_->comm = comm;
  impl_->opts = &opts;
  impl_->checkpoint.directory = opts.checkpoint_dir;
  impl_->checkpoint.keep_last = opts.keep;
  impl_->checkpoint.problem = to_string(opts.problem);
  impl_->checkpoint.configuration = std::move(configuration);
  impl_->checkpoint.spacing = s.spacing();
  if (opts.checkpoint_every > 0) impl_->writer();
  if (opts.output_every > 0) {
    io::snapshot_options snapshot;
    snapshot.directory = opts.output_dir;
    snapshot.series = to_string(opts.problem);
    snapshot.problem = to_string(opts.problem);
    snapshot.spacing = s.spacing();
    impl_->snapshots.emplace(comm, snapshot);
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
  if (snapshot) impl_->snapshots->write(step, s.time(), block_of(d), fields_of(s, opts));
  if (checkpoint) impl_->writer().write(step, s.time(), block_of(d), fields_of(s, opts));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool run_output::stop_requested(solver& s, const cartesian_decomposition& d) {
  if (!impl_->termination.agreed(impl_->comm)) return false;
  const options& opts = *impl_->opts;
  const bool written = opts.checkpoint_every > 0 && s.step() % opts.checkpoint_every == 0;
  if (!written) impl_->writer().write(s.step(), s.time(), block_of(d), fields_of(s, opts));
  return true;
}

#else  // no HDF5: output and restart are refused up front

struct restart_source::impl {};
restart_source::restart_source(MPI_Comm, const options&, const index3&, const std::string&) {
  throw unsupported("--restart needs HDF5: rebuild with FUNNEL_ENABLE_HDF5=ON");
}
restart_source::~restart_source() = default;
std::int64_t restart_source::step() const { return 0; }
std::string restart_source::path() const { return ""; }
void restart_source::restore(solver&, const cartesian_decomposition&) const {}

struct run_output::impl {
  MPI_Comm comm;
  io::termination_request termination;
};
run_output::run_output(MPI_Comm comm, const options& opts, std::string, const solver&)
    : impl_(std::make_unique<impl>()) {
  impl_->comm = comm;
  if (opts.output_every > 0 || opts.checkpoint_every > 0) {
    throw unsupported(
        "--output-every/--checkpoint-every need HDF5: rebuild with "
        "FUNNEL_ENABLE_HDF5=ON");
  }
}
run_output::~run_output() = default;
double run_output::after_step(solver&, const cartesian_decomposition&) { return 0.0; }
bool run_output::stop_requested(solver&, const cartesian_decomposition&) {
  // Without checkpoints the best answer to "stop" is to stop; the job script requeues.
  return impl_->termination.agreed(impl_->comm);
}

#endif

int run_output::requeue_exit_code() noexcept { return io::termination_request::requeue_exit_code; }

}  // namespace funnel::stencil
