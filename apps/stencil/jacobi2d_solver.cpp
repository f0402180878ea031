// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// jacobi2d in resident mode: NVIDIA multi-gpu-programming-models' Jacobi (float, periodic
// top/bottom, Dirichlet left/right), its norm cadence, tolerance and printout.
//
// The norm never stops the host at the step it belongs to: the update that computes it also
// accumulates it on the GPU, its two partial sums are copied into pinned memory on the halo
// stream, and the host reads them one step later, while the next update already runs. When that
// norm says the run has converged, the step enqueued meanwhile is dropped (the field swaps back),
// so the run stops after exactly the update whose norm was at or below the tolerance, as the
// reference does: the first update k (k = 1, 2, ...) with (k - 1) % nccheck == 0 whose norm is
// <= 1e-8.
#include <mpi.h>

#include <array>
#include <cmath>
#include <optional>

#include "funnel/kernels/jacobi2d.hpp"
#include "resident_field.hpp"
#include "solvers.hpp"

namespace funnel::stencil {
namespace {

/// The reference's stopping tolerance on the L2 norm of the update.
constexpr float tolerance = 1.0e-8F;
/// The reference also computes (and prints) the norm every 100 iterations.
constexpr std::int64_t print_every = 100;
/// Accumulator sets: a norm being read and the one of the step after it.
constexpr int norm_sets = 2;

class jacobi2d_solver final : public solver {
 public:
  explicit jacobi2d_solver(const run_setup& setup)
      : setup_(setup),
        decomposition_(*setup.decomposition),
        global_(decomposition_.global_cells()),
        offset_(decomposition_.local_box().lo),
        impl_(kernels::parse_implementation(setup.kernel)),
        field_(setup.backend, decomposition_, *setup.pool, setup.opts->halo, setup.halo_overlap),
        // Per set, one accumulator per stream, so neither stream waits for the other's reset.
        norm_(*setup.pool, field_.compute_stream(), 2 * norm_sets),
        norm_host_(setup.backend, 2 * norm_sets * sizeof(float)),
        norm_landed_{event(setup.backend), event(setup.backend)} {}

  void initialize() override {
    kernels::jacobi2d_initialize(field_.compute_stream(), field_.layout(), global_, offset_,
                                 field_.current(), field_.next());
    memset_async(field_.compute_stream(), norm_.data(), 0, norm_.size() * sizeof(float));
    field_.synchronize();
    pending_.reset();
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

  double advance(std::int64_t step_limit) override {
    double halo_seconds = 0.0;
    do {
      const std::int64_t iter = step_;
      // The reference prints, at iteration k, the norm of the update its iteration k - 1 made
      // (the k-th update): the norm is due on its cadence and for every printed line.
      const bool norm_due = iter % *setup_.opts->check_every == 0 || (iter + 1) % print_every == 0;
      float* accumulators = norm_due ? norm_.data() + 2 * next_set_ : nullptr;
      const auto update = [&](stream_view stream, lane which, const float* in, float* out,
                              const box& region) {
        kernels::jacobi2d_step(stream, impl_, field_.layout(), in, out, region,
                               accumulators ? accumulators + static_cast<int>(which) : nullptr);
      };
      halo_seconds += field_.step(update);
      ++step_;
      std::optional<norm_check> started;
      if (norm_due) started = start_norm(step_);
      if (pending_) {
        const norm_check previous = *pending_;
        pending_.reset();
        if (read_norm(previous)) {
          // Converged after `previous`: the update enqueued since is dropped.
          field_.discard_last_step();
          step_ = previous.updates;
          return halo_seconds;
        }
      }
      pending_ = started;
    } while (step_ < step_limit);
    if (pending_) {
      const norm_check last = *pending_;
      pending_.reset();
      (void)read_norm(last);
    }
    return halo_seconds;
  }

  [[nodiscard]] double halo_seconds_pending() override { return field_.halo_seconds_pending(); }
  [[nodiscard]] std::int64_t step() const override { return step_; }
  [[nodiscard]] double time() const override { return static_cast<double>(step_); }
  [[nodiscard]] bool converged() const override { return !(l2_norm_ > tolerance); }
  void check() override {}
  void finish(run_summary& summary) override { summary.final_norm = l2_norm_; }
  void wait_for_steps() override { field_.synchronize(); }
  void close() override { field_.close(); }
  void wait(MPI_Request& request) override { field_.wait(request); }

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
  [[nodiscard]] std::string halo_fallback() const override { return field_.halo_fallback(); }
  [[nodiscard]] std::size_t field_bytes() const override { return field_.bytes(); }
  [[nodiscard]] bool halo_overlapped() const override { return field_.overlapped(); }

 private:
  /// A norm on its way to the host: after which update, in which accumulator set.
  struct norm_check {
    std::int64_t updates = 0;
    int set = 0;
  };

  // After the step that accumulated set `next_set_` (both lanes): copy its partial sums to the
  // host, then clear them for their next use two checks later.
  norm_check start_norm(std::int64_t updates) {
    const norm_check check{updates, next_set_};
    next_set_ = (next_set_ + 1) % norm_sets;
    const stream_view s = field_.halo_stream();
    field_.join(s);
    float* sums = norm_.data() + 2 * check.set;
    copy_async(s, host_sums(check.set), sums, 2 * sizeof(float));
    norm_landed_[static_cast<std::size_t>(check.set)].record(s);
    memset_async(s, sums, 0, 2 * sizeof(float));
    return check;
  }

  float* host_sums(int set) const { return static_cast<float*>(norm_host_.data()) + 2 * set; }

  // Waits for the norm's partial sums (with the halo watchdog), sums them over the ranks and
  // prints the reference's line; true when the run has converged.
  bool read_norm(const norm_check& check) {
    field_.wait(norm_landed_[static_cast<std::size_t>(check.set)]);
    const float* partial = host_sums(check.set);
    float sum = partial[0] + partial[1];
    // Non-blocking, under the halo watchdog: a rank that stopped must not hang the others here.
    MPI_Request request = MPI_REQUEST_NULL;
    FUNNEL_MPI_TRY(
        MPI_Iallreduce(MPI_IN_PLACE, &sum, 1, MPI_FLOAT, MPI_SUM, decomposition_.comm(), &request),
        "jacobi2d_solver");
    field_.wait(request);
    l2_norm_ = std::sqrt(sum);
    if (setup_.print && check.updates % print_every == 0) {
      std::printf("%5lld, %0.6f\n", static_cast<long long>(check.updates),
                  static_cast<double>(l2_norm_));
      std::fflush(stdout);
    }
    return converged();
  }

  run_setup setup_;
  const cartesian_decomposition& decomposition_;
  index3 global_;
  index3 offset_;
  kernels::implementation impl_;
  resident_field<float> field_;
  device_buffer<float> norm_;
  pinned_buffer norm_host_;
  std::array<event, norm_sets> norm_landed_;
  std::optional<norm_check> pending_;
  int next_set_ = 0;
  float l2_norm_ = 1.0F;
  std::int64_t step_ = 0;
};

}  // namespace

std::unique_ptr<solver> make_jacobi2d_solver(const run_setup& setup) {
  return std::make_unique<jacobi2d_solver>(setup);
}

}  // namespace funnel::stencil
