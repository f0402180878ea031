// jacobi2d in resident mode: NVIDIA multi-gpu-programming-models' Jacobi (float, periodic
// top/bottom, Dirichlet left/right), its norm cadence, tolerance and printout.
#include <mpi.h>

#include <cmath>

#include "funnel/kernels/jacobi2d.hpp"
#include "resident_field.hpp"
#include "solvers.hpp"

namespace funnel::stencil {
namespace {

/// The reference's stopping tolerance on the L2 norm of the update.
constexpr float tolerance = 1.0e-8F;
/// The reference also computes (and prints) the norm every 100 iterations.
constexpr std::int64_t print_every = 100;

class jacobi2d_solver final : public solver {
 public:
  explicit jacobi2d_solver(const run_setup& setup)
      : setup_(setup),
        decomposition_(*setup.decomposition),
        global_(decomposition_.global_cells()),
        offset_(decomposition_.local_box().lo),
        impl_(kernels::parse_implementation(setup.kernel)),
        field_(setup.backend, decomposition_, *setup.pool, setup.opts->halo),
        // One accumulator per stream, so neither stream waits for the other's reset.
        norm_(*setup.pool, field_.compute_stream(), 2),
        norm_host_(setup.backend, 2 * sizeof(float)) {}

  void initialize() override {
    kernels::jacobi2d_initialize(field_.compute_stream(), field_.layout(), global_, offset_,
                                 field_.current(), field_.next());
    reset_norm();
    step_ = 0;
    if (setup_.print) {
      // The reference's heading: rows (ny) before columns (nx).
      std::printf(
          "Jacobi relaxation: %lld iterations on %lld x %lld mesh with norm check every %lld "
          "iterations\n",
          static_cast<long long>(*setup_.opts->steps), static_cast<long long>(global_[1] + 2),
          static_cast<long long>(global_[0] + 2),
          static_cast<long long>(*setup_.opts->check_every));
      std::fflush(stdout);
    }
  }

  void restore(std::int64_t step, const std::function<void(void*)>& fill) override {
    initialize();
    fill(field_.download());
    field_.upload();
    step_ = step;
  }

  double advance(std::int64_t /*step_limit*/) override {
    const std::int64_t iter = step_;
    // The reference prints, at iteration k, the norm of the update its iteration k - 1 made
    // (the k-th update): the norm is due on its cadence and for every printed line.
    const bool norm_due = iter % *setup_.opts->check_every == 0 || (iter + 1) % print_every == 0;
    float* accumulators = norm_due ? norm_.data() : nullptr;
    const auto update = [&](stream_view stream, lane which, const float* in, float* out,
                            const box& region) {
      kernels::jacobi2d_step(stream, impl_, field_.layout(), in, out, region,
                             accumulators ? accumulators + static_cast<int>(which) : nullptr);
    };
    const double halo_seconds = field_.step(update);
    ++step_;
    if (norm_due) read_norm(step_);
    return halo_seconds;
  }

  [[nodiscard]] double halo_seconds_pending() override { return field_.halo_seconds_pending(); }
  [[nodiscard]] std::int64_t step() const override { return step_; }
  [[nodiscard]] double time() const override { return static_cast<double>(step_); }
  [[nodiscard]] bool converged() const override { return !(l2_norm_ > tolerance); }
  void check() override {}
  void finish(run_summary& summary) override { summary.final_norm = l2_norm_; }

  [[nodiscard]] const void* host_field() override { return field_.download(); }
  [[nodiscard]] std::function<void()> download_async(void* destination) override {
    return field_.download_async(static_cast<float*>(destination));
  }
  [[nodiscard]] std::size_t element_size() const override { return sizeof(float); }
  [[nodiscard]] std::string field_name() const override {
    return field_name_of(problem_kind::jacobi2d);
  }
  [[nodiscard]] std::array<double, 3> spacing() const override { return {1.0, 1.0, 1.0}; }
  [[nodiscard]] std::vector<std::string> halo_paths() const override { return field_.halo_paths(); }
  [[nodiscard]] std::size_t field_bytes() const override { return field_.bytes(); }

 private:
  void reset_norm() {
    memset_async(field_.compute_stream(), norm_.data(), 0, 2 * sizeof(float));
    field_.synchronize();
  }

  // `updates`: the updates made so far, the last of which the norm measures.
  void read_norm(std::int64_t updates) {
    field_.synchronize();
    copy_async(field_.compute_stream(), norm_host_.data(), norm_.data(), 2 * sizeof(float));
    field_.synchronize();
    const auto* partial = static_cast<const float*>(norm_host_.data());
    float sum = partial[0] + partial[1];
    FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_FLOAT, MPI_SUM, decomposition_.comm()),
                   "jacobi2d_solver");
    l2_norm_ = std::sqrt(sum);
    if (setup_.print && updates % print_every == 0) {
      std::printf("%5lld, %0.6f\n", static_cast<long long>(updates), static_cast<double>(l2_norm_));
      std::fflush(stdout);
    }
    reset_norm();
  }

  run_setup setup_;
  const cartesian_decomposition& decomposition_;
  index3 global_;
  index3 offset_;
  kernels::implementation impl_;
  resident_field<float> field_;
  device_buffer<float> norm_;
  pinned_buffer norm_host_;
  float l2_norm_ = 1.0F;
  std::int64_t step_ = 0;
};

}  // namespace

std::unique_ptr<solver> make_jacobi2d_solver(const run_setup& setup) {
  return std::make_unique<jacobi2d_solver>(setup);
}

}  // namespace funnel::stencil
