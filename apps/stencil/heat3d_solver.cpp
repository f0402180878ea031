// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// heat3d: sin-product mode on the unit cube, explicit Euler at 0.9 of the stability limit,
// error against the exact solution. The same solver runs both modes: its field is either
// resident (device memory, one step at a time) or streamed (host memory, k steps per pass).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "funnel/kernels/heat3d.hpp"
#include "resident_field.hpp"
#include "solvers.hpp"
#include "streamed_field.hpp"

namespace funnel::stencil {
namespace {

constexpr double alpha = 1.0;
/// dt = stability_fraction * h^2 / (2 d alpha): 0.9 of the explicit Euler limit.
constexpr double stability_fraction = 0.9;

/// The streamed mode's settings from the options.
streamed_settings streamed_settings_of(const run_setup& setup) {
  const options& opts = *setup.opts;
  streamed_settings s;
  s.steps_per_pass = opts.steps_per_pass;
  if (opts.chunks > 0) s.overrides.chunks = opts.chunks;
  if (opts.streams > 0) s.overrides.slots = opts.streams;
  s.device_budget_bytes = setup.device_budget_bytes;
  s.trace = !opts.trace.empty();
  s.rank = setup.decomposition->rank();
  return s;
}

/// @tparam Field resident_field<T> or streamed_field<T>
template <class T, class Field>
class heat3d_solver final : public solver {
  static constexpr bool streamed = std::is_same_v<Field, streamed_field<T>>;

 public:
  explicit heat3d_solver(const run_setup& setup)
      : setup_(setup),
        decomposition_(*setup.decomposition),
        global_(decomposition_.global_cells()),
        offset_(decomposition_.local_box().lo),
        impl_(kernels::parse_implementation(setup.kernel)),
        field_(make_field(setup)) {
    int axes = 0;
    for (int a = 0; a < 3; ++a) axes += global_[a] > 1 ? 1 : 0;
    h_ = kernels::heat3d_grid_spacing(global_);
    const double c = stability_fraction / (2.0 * std::max(axes, 1));
    dt_ = c * h_ * h_ / alpha;
    params_.alpha_dt_over_h2 = static_cast<T>(c);
    if constexpr (streamed) {
      // The same kernel on the same cells as the resident mode, so the results match bitwise.
      field_.configure([this](stream_view stream, const field_layout& layout, const T* in, T* out,
                              const box& region, int) {
        kernels::heat3d_step<T>(stream, impl_, layout, in, out, region, params_);
      });
    }
  }

  void initialize() override {
    // Both buffers: the Dirichlet ghosts of the next buffer are never written by a step.
    for (T* buffer : {field_.current(), field_.next()}) {
      kernels::heat3d_initialize<T>(field_.compute_stream(), field_.layout(), global_, offset_,
                                    buffer);
    }
    field_.synchronize();
    step_ = 0;
  }

  void restore(std::int64_t step, const std::function<void(void*)>& fill) override {
    initialize();
    fill(field_.download());
    field_.upload();
    step_ = step;
  }

  double advance(std::int64_t step_limit) override {
    if constexpr (streamed) {
      const auto steps = static_cast<int>(
          std::clamp<std::int64_t>(step_limit - step_, 1, field_.steps_per_pass()));
      const double halo_seconds = field_.pass(steps);
      step_ += steps;
      return halo_seconds;
    } else {
      const auto update = [this](stream_view stream, lane, const T* in, T* out, const box& region) {
        kernels::heat3d_step<T>(stream, impl_, field_.layout(), in, out, region, params_);
      };
      const auto pair = [this](stream_view stream, const T* in, T* out, const box& first,
                               const box& second) {
        kernels::heat3d_two_steps<T>(stream, impl_, field_.layout(), in, out, first, second,
                                     params_);
      };
      // Every step up to the limit is only enqueued (in graphs of 8 steps where they are used):
      // the field waits for the GPU when it is resident_field::run_ahead steps or graphs ahead.
      const std::int64_t count = std::max<std::int64_t>(1, step_limit - step_);
      const auto pushed = [this](stream_view stream, const T* in, T* out, const box& region,
                                 const pushed_exchange& push) {
        kernels::heat3d_step_pushed<T>(stream, impl_, field_.layout(), in, out, region, params_,
                                       push);
      };
      // Used only when the field pushes its exchanges: graphs, so funnel's CUDA kernel.
      const double halo_seconds = field_.advance(update, count, pair, pushed);
      step_ += count;
      return halo_seconds;
    }
  }

  [[nodiscard]] double halo_seconds_pending() override {
    if constexpr (!streamed) {
      return field_.halo_seconds_pending();
    } else {
      return 0.0;  // streamed passes return their exchange time at once
    }
  }
  [[nodiscard]] std::int64_t step() const override { return step_; }
  [[nodiscard]] double time() const override { return static_cast<double>(step_) * dt_; }
  [[nodiscard]] bool converged() const override { return false; }

  void check() override {
    const auto every = setup_.opts->check_every.value_or(0);
    if (every <= 0 || step_ % every != 0) return;
    const error_report e = error();
    if (setup_.print) {
      std::printf("step %lld  t = %.6e  error max %.6e  L2 %.6e\n", static_cast<long long>(step_),
                  time(), e.max_abs, e.l2);
      std::fflush(stdout);
    }
  }

  void finish(run_summary& summary) override {
    summary.error = error();
    if constexpr (streamed) {
      summary.pipeline = field_.report(decomposition_.comm());
      if (!setup_.opts->trace.empty()) {
        field_.write_trace(decomposition_.comm(), setup_.opts->trace);
      }
    }
  }

  void wait_for_steps() override { field_.synchronize(); }
  void close() override { field_.close(); }
  void wait(MPI_Request& request) override { field_.wait(request); }

  [[nodiscard]] std::string pipeline_plan() const override {
    if constexpr (streamed) {
      return field_.describe();
    } else {
      return {};
    }
  }

  [[nodiscard]] const void* host_field() override { return field_.download(); }
  [[nodiscard]] std::function<void()> download_async(void* destination) override {
    return field_.download_async(static_cast<T*>(destination));
  }
  [[nodiscard]] std::size_t element_size() const override { return sizeof(T); }
  [[nodiscard]] std::string field_name() const override {
    return field_name_of(problem_kind::heat3d);
  }
  [[nodiscard]] std::array<double, 3> spacing() const override { return {h_, h_, h_}; }
  [[nodiscard]] std::vector<std::string> halo_paths() const override { return field_.halo_paths(); }
  [[nodiscard]] std::string halo_fallback() const override { return field_.halo_fallback(); }
  [[nodiscard]] std::size_t field_bytes() const override { return field_.bytes(); }
  [[nodiscard]] int steps_per_exchange() const override {
    if constexpr (streamed) {
      return 1;
    } else {
      return field_.steps_per_exchange();
    }
  }
  [[nodiscard]] bool halo_pushed() const override {
    if constexpr (streamed) {
      return false;
    } else {
      return field_.pushes_exchange();
    }
  }
  [[nodiscard]] int steps_per_launch() const override {
    if constexpr (streamed) {
      return 1;
    } else {
      return field_.steps_per_launch();
    }
  }
  [[nodiscard]] bool halo_overlapped() const override {
    if constexpr (streamed) {
      return false;
    } else {
      return field_.overlapped();
    }
  }
  [[nodiscard]] std::int64_t steps_per_graph() const override {
    if constexpr (streamed) {
      return 0;
    } else {
      return field_.steps_per_graph();
    }
  }

 private:
  static Field make_field(const run_setup& setup) {
    if constexpr (streamed) {
      return Field(setup.backend, *setup.decomposition, *setup.pool, setup.opts->halo,
                   streamed_settings_of(setup));
    } else {
      // Graphs only for funnel's CUDA kernels: a Kokkos or host kernel may synchronise or
      // allocate while it launches, which a capture refuses.
      const bool graphs = setup.opts->graphs && setup.kernel == "cuda";
      return Field(setup.backend, *setup.decomposition, *setup.pool, setup.opts->halo,
                   setup.halo_overlap, graphs, setup.decomposition->halo(),
                   setup.opts->steps_per_launch == 2, setup.graph_overlap);
    }
  }

  // The error where the field lives: a resident field on the GPU is checked there (the field
  // does not cross PCIe, and a box of 1024^3 cells took tens of seconds on the host's cores).
  error_report error() {
    kernels::error_norms local;
    if constexpr (streamed) {
      local = kernels::heat3d_error<T>(field_.layout(), global_, offset_, alpha, time(),
                                       field_.download());
    } else {
      field_.synchronize();  // under the watchdog: earlier steps may wait on other ranks
      local = kernels::heat3d_error<T>(field_.compute_stream(), field_.layout(), global_, offset_,
                                       alpha, time(), field_.current());
    }
    double max_abs = local.max_abs;
    double sums[2] = {local.sum_squares, static_cast<double>(local.cells)};
    const MPI_Comm comm = decomposition_.comm();
    FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &max_abs, 1, MPI_DOUBLE, MPI_MAX, comm),
                   "heat3d_solver");
    FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm),
                   "heat3d_solver");
    return error_report{max_abs, sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : 0.0};
  }

  run_setup setup_;
  const cartesian_decomposition& decomposition_;
  index3 global_;
  index3 offset_;
  kernels::implementation impl_;
  Field field_;
  double h_ = 0.0;
  double dt_ = 0.0;
  kernels::heat3d_params<T> params_{};
  std::int64_t step_ = 0;
};

template <class T>
std::unique_ptr<solver> make_heat3d_solver_of(const run_setup& setup) {
  if (setup.opts->mode == run_mode::streamed) {
    return std::make_unique<heat3d_solver<T, streamed_field<T>>>(setup);
  }
  return std::make_unique<heat3d_solver<T, resident_field<T>>>(setup);
}

}  // namespace

std::unique_ptr<solver> make_heat3d_solver(const run_setup& setup) {
  if (setup.opts->dtype == scalar_type::float32) return make_heat3d_solver_of<float>(setup);
  return make_heat3d_solver_of<double>(setup);
}

}  // namespace funnel::stencil
