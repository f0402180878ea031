// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file streamed_field.hpp
 * @brief A field kept in host memory and streamed through the device in chunks each pass
 * (--mode streamed): two host arrays, the host-side halo exchange between passes, and the
 * chunked pipeline (funnel::pipeline_executor) with its choice, statistics and trace.
 */
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/error.hpp"
#include "funnel/halo/halo_exchange.hpp"
#include "funnel/halo/halo_method.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/pipeline/choose_pipeline.hpp"
#include "funnel/pipeline/chunk_plan.hpp"
#include "funnel/pipeline/neighbour_faces.hpp"
#include "funnel/pipeline/pass_statistics.hpp"
#include "funnel/pipeline/pipeline_executor.hpp"
#include "funnel/pipeline/pipeline_probe.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "funnel/trace/trace_recorder.hpp"
#include "regions.hpp"
#include "summary.hpp"

namespace funnel::stencil {

/// @brief What the streamed mode was asked for (resolved from the options by the caller).
struct streamed_settings {
  int steps_per_pass = 1;               ///< k (the decomposition's halo must be ≥ k)
  pipeline_overrides overrides;         ///< --chunks / --streams when given
  std::size_t device_budget_bytes = 0;  ///< device bytes the pipeline may take from the pool
  bool trace = false;                   ///< record spans for --trace
  int rank = 0;                         ///< this rank (trace process id)
};

/// @brief Pass statistics summed over passes (all passes of one rank).
struct pass_totals {
  int passes = 0;               ///< passes run
  double pass_seconds = 0.0;    ///< Σ T_pass
  double h2d_seconds = 0.0;     ///< Σ T_H2D
  double d2h_seconds = 0.0;     ///< Σ T_D2H
  double kernel_seconds = 0.0;  ///< Σ T_kernel
  double h2d_bytes = 0.0;       ///< Σ bytes host → device
  double d2h_bytes = 0.0;       ///< Σ bytes device → host
  bool staged = false;          ///< some pass went through pinned staging

  /// @brief Adds one pass.
  void add(const pass_statistics& s) noexcept;
};

/**
 * @brief The rank's figures reduced over all ranks (collective over `comm`): T_* and T_pass
 * of the slowest rank, efficiency max(T_H2D, T_D2H, T_kernel) / T_pass of the least efficient
 * rank, link bandwidths per direction averaged over ranks (each rank's bytes / its busy time).
 * @param totals this rank's sums
 * @param choice the description of the choice (rank 0's is reported)
 * @param comm all ranks
 */
[[nodiscard]] pipeline_report reduce_pipeline_report(const pass_totals& totals,
                                                     const std::string& choice, MPI_Comm comm);

/**
 * @brief Device bytes the pipeline of one rank may use when --pool-limit is not given.
 *
 * CUDA: half of the device's free memory divided among the ranks that share it (every
 * rank's pipeline holds only its ring of slots). Host: enough for one chunk per slot, so the
 * chunk count is chosen for overlap alone.
 * @param backend host or cuda
 * @param ranks_per_device ranks sharing the device (≥ 1)
 * @param field_bytes bytes of one host array of the field
 */
[[nodiscard]] std::size_t default_device_budget(backend_kind backend, int ranks_per_device,
                                                std::size_t field_bytes);

/**
 * @brief The streamed-mode field of one rank.
 *
 * The field lives in two host arrays (`current` holds the step, `next` receives the pass), both
 * allocations of a host pool so the host-backend halo exchange can use IPC between the node's
 * ranks; on the CUDA backend they are page-locked (pinned_buffer::register_memory) so the
 * pipeline copies them directly. Per pass: the exchange fills the k-deep halo of `current`,
 * the executor writes k steps of `current` into `next`, the arrays swap.
 * @tparam T float or double
 */
template <class T>
class streamed_field {
 public:
  /// @brief The per-chunk device work of one step (see pipeline_executor::compute_function).
  using compute_function = typename pipeline_executor<T>::compute_function;

  /**
   * @param backend where the chunks are computed (cuda: the GPU; host: the same plan eagerly)
   * @param decomposition the split, with a halo of at least k (outlives this object)
   * @param device_pool the pool the pipeline's device slots come from (outlives this object)
   * @param halo_method --halo value (the exchange runs on the host arrays)
   * @param settings k, overrides, budget, trace
   * @throw funnel::invalid_argument when the halo is shallower than k
   */
  streamed_field(backend_kind backend, const cartesian_decomposition& decomposition,
                 memory_pool& device_pool, const std::string& halo_method,
                 streamed_settings settings)
      : backend_(backend),
        layout_(decomposition.layout()),
        faces_(faces_of(decomposition)),
        settings_(std::move(settings)),
        device_pool_(&device_pool),
        host_pool_(backend_kind::host, host_pool_options(halo_method, array_bytes())),
        current_(host_pool_, stream_view::host(), cells()),
        next_(host_pool_, stream_view::host(), cells()),
        halo_(decomposition, backend_kind::host, host_pool_, sizeof(T),
              parse_halo_method(halo_method)) {
    FUNNEL_EXPECTS(layout_.halo >= settings_.steps_per_pass,
                   "the field's halo (" + std::to_string(layout_.halo) +
                       ") is shallower than --steps-per-pass " +
                       std::to_string(settings_.steps_per_pass));
    if (backend_ == backend_kind::cuda) {
      pin(current_.data());
      pin(next_.data());
    }
    if (settings_.trace) {
      trace_.emplace("funnel-stencil rank " + std::to_string(settings_.rank), settings_.rank);
    }
  }

  /**
   * @brief Chooses C, S (probing the link and the kernel when --chunks is not given) and sets
   * up the executor. Call once before initialising the arrays: the probe overwrites them.
   * @param compute the per-chunk device work, used for every pass
   * @throw funnel::invalid_argument for options that do not fit the field or the budget
   */
  void configure(compute_function compute) {
    compute_ = std::move(compute);
    pipeline_probe probe;
    if (!settings_.overrides.chunks) {
      // A probe within half the budget; when even that does not fit (a tiny --pool-limit),
      // the choice goes by the budget alone.
      const std::size_t probe_bytes =
          std::min(std::size_t{256} << 20, settings_.device_budget_bytes / 2);
      try {
        probe = probe_pipeline<T>(backend_, *device_pool_, layout_, radius, current(), next(),
                                  compute_, probe_bytes);
      } catch (const out_of_memory&) {
        probe = pipeline_probe{};
      }
    }
    pipeline_overrides overrides = settings_.overrides;
    overrides.steps_per_pass = settings_.steps_per_pass;
    choice_ = choose_pipeline(layout_, radius, sizeof(T), settings_.device_budget_bytes, probe,
                              overrides, faces_, settings_.steps_per_pass);
    executor_for(choice_.steps_per_pass);
  }

  /// @brief The rank's layout (halo k).
  [[nodiscard]] const field_layout& layout() const noexcept { return layout_; }
  /// @brief The field at the current step (host memory).
  [[nodiscard]] T* current() const noexcept { return current_.data(); }
  /// @brief The other array (written by the next pass).
  [[nodiscard]] T* next() const noexcept { return next_.data(); }
  /// @brief The stream initialisation runs on (the host: the arrays are host memory).
  [[nodiscard]] stream_view compute_stream() const noexcept { return stream_view::host(); }
  /// @brief Nothing to wait for: a pass returns when its results are in the host array.
  void synchronize() noexcept {}
  /// @brief Completes a non-blocking collective (bounded by the exchange's watchdog).
  void wait(MPI_Request& request) const { halo_.wait(request); }
  /// @brief Ends the run of this field (collective): closes the halo exchange.
  void close() { halo_.close(); }
  /// @brief The current host array (the field is already on the host).
  [[nodiscard]] T* download() const noexcept { return current(); }
  /**
   * @brief Copies the current host array into `destination`, done on return (the next pass
   * overwrites the array).
   * @param destination host memory of layout().allocated_cells() values
   * @return an empty function: nothing left to wait for
   */
  [[nodiscard]] std::function<void()> download_async(T* destination) const {
    std::memcpy(destination, current(),
                static_cast<std::size_t>(layout_.allocated_cells()) * sizeof(T));
    return {};
  }
  /// @brief Nothing to copy: a restore writes the current host array directly.
  void upload() noexcept {}
  /// @brief Device bytes held (the pipeline's ring of slots).
  [[nodiscard]] std::size_t bytes() const noexcept { return device_bytes(); }
  /// @brief k, steps per full pass.
  [[nodiscard]] int steps_per_pass() const noexcept { return settings_.steps_per_pass; }

  /**
   * @brief Runs one pass of `steps` (1..k) steps: halo exchange, pipeline, swap.
   * @param steps steps of this pass (fewer than k for a remainder)
   * @return host seconds of the halo exchange (it runs on the host arrays, so host time is the
   * time it takes)
   */
  double pass(int steps) {
    FUNNEL_EXPECTS(steps >= 1 && steps <= settings_.steps_per_pass,
                   "a pass of " + std::to_string(steps) + " steps: expected 1.." +
                       std::to_string(settings_.steps_per_pass));
    trace_recorder* trace = trace_ ? &*trace_ : nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    halo_.exchange(stream_view::host(), current());
    const auto t1 = std::chrono::steady_clock::now();
    if (trace != nullptr) {
      trace->add_span(trace->track("halo"), "halo exchange", trace->to_us(t0),
                      std::chrono::duration<double, std::micro>(t1 - t0).count(),
                      {{"pass", totals_.passes}});
    }
    totals_.add(executor_for(steps).run(current(), next(), compute_, trace));
    std::swap(current_, next_);
    return std::chrono::duration<double>(t1 - t0).count();
  }

  /// @brief The chosen C, S and k with the reason, and the chunk plan, for the plan printout.
  [[nodiscard]] std::string describe() const {
    return choice_.describe() + "; " + executor_->plan().describe();
  }
  /// @brief The pipeline's figures over all ranks so far (collective).
  [[nodiscard]] pipeline_report report(MPI_Comm comm) const {
    return reduce_pipeline_report(totals_, choice_.describe(), comm);
  }
  /**
   * @brief Collective: rank 0 writes every rank's spans to `path` (nothing when not tracing).
   * @param comm all ranks
   * @param path the --trace file
   */
  void write_trace(MPI_Comm comm, const std::string& path) const {
    if (trace_) trace_->write_gathered(comm, path);
  }
  /// @brief Per-neighbour halo paths for the plan.
  [[nodiscard]] std::string halo_fallback() const { return halo_.fallback(); }
  [[nodiscard]] std::vector<std::string> halo_paths() const {
    std::vector<std::string> lines;
    for (const auto& path : halo_.paths()) lines.push_back(to_string(path) + " (host arrays)");
    return lines;
  }
  /// @brief Device bytes the pipeline holds (its ring of slots).
  [[nodiscard]] std::size_t device_bytes() const noexcept {
    return executor_ ? executor_->device_bytes() : 0;
  }

 private:
  static constexpr int radius = 1;  // the 7-point stencil

  [[nodiscard]] std::size_t cells() const noexcept {
    return static_cast<std::size_t>(layout_.allocated_cells());
  }
  [[nodiscard]] std::size_t array_bytes() const noexcept { return cells() * sizeof(T); }

  /// The host arrays' pool: IPC-exportable (a memfd arena) unless the halo goes over MPI,
  /// sized for both arrays and the exchange's message buffers.
  static memory_pool_options host_pool_options(const std::string& halo_method,
                                               std::size_t array_bytes) {
    memory_pool_options o;
    o.name = "funnel-stencil-host-field";
    o.ipc_exportable = halo_method != "mpi";
    o.host_ipc_capacity = std::max<std::size_t>(std::size_t{64} << 20, 4 * array_bytes);
    return o;
  }

  /// Page-locks one array. If the driver refuses (some kernels do not pin shared mappings),
  /// the pipeline stages the pageable array instead: slower, same results.
  void pin(T* data) {
    try {
      pinned_.push_back(pinned_buffer::register_memory(backend_, data, array_bytes()));
    } catch (const cuda_error& e) {
      if (settings_.rank == 0) {
        std::fprintf(stderr, "funnel-stencil: host field not pinned (%s); staging instead\n",
                     e.what());
      }
    }
  }

  /// The executor for passes of `steps` steps: the one of full passes, rebuilt with the same
  /// C and S for a shorter pass (its chunks need fewer halo planes, so the plan stays valid).
  /// Only one executor lives at a time, so the device footprint stays one ring.
  pipeline_executor<T>& executor_for(int steps) {
    if (!executor_ || executor_->plan().steps_per_pass() != steps) {
      executor_.reset();
      executor_ = std::make_unique<pipeline_executor<T>>(
          backend_, *device_pool_, chunk_plan(layout_, radius, steps, choice_.chunks, faces_),
          pipeline_options{choice_.slots, host_staging::automatic});
    }
    return *executor_;
  }

  backend_kind backend_;
  field_layout layout_;
  neighbour_faces faces_;
  streamed_settings settings_;
  memory_pool* device_pool_;
  memory_pool host_pool_;
  device_buffer<T> current_;
  device_buffer<T> next_;
  std::vector<pinned_buffer> pinned_;
  halo_exchange halo_;
  compute_function compute_;
  pipeline_choice choice_;
  std::unique_ptr<pipeline_executor<T>> executor_;
  std::optional<trace_recorder> trace_;
  pass_totals totals_;
};

}  // namespace funnel::stencil
