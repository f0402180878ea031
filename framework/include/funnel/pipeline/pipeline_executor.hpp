// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pipeline_executor.hpp
 * @brief Streams a host-resident field through the device chunk by chunk, k steps per pass.
 */
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/pipeline/chunk_plan.hpp"
#include "funnel/pipeline/detail/pipeline_engine.hpp"
#include "funnel/pipeline/pass_mode.hpp"
#include "funnel/pipeline/pass_statistics.hpp"
#include "funnel/pipeline/pipeline_options.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel {

class memory_pool;
class trace_recorder;

/**
 * @brief Runs k stencil steps over a host-resident field by streaming its chunks through the
 * device: per chunk H2D(input) → k compute steps (ping-pong between the slot's two buffers,
 * shrinking region) → D2H(interior planes).
 *
 * Copies in, kernels and copies out each have their own stream, and a ring of S device slots
 * keeps S chunks in flight; events order the reuse of slots and staging buffers, so both copy
 * directions and the kernels of different chunks overlap. Device memory is bounded by the ring
 * (2·S chunk buffers from the pool), so fields larger than the device work; a pool byte limit
 * forces that on any card. On the host backend the same operations run eagerly in order.
 *
 * `in` and `out` must be distinct arrays of the plan's field layout: chunk inputs overlap their
 * neighbours' interior planes, so an in-place pass would read planes already advanced. Swap them
 * after each pass (as with any ping-pong pair). A pass writes the interior planes of `out`
 * (whole planes, including their halo columns, which hold the boundary values of `in` on
 * physical faces and unspecified values on faces with a neighbour until the halo exchange); the
 * halo planes along the chunk axis are never written, so give both arrays the boundary values
 * before the first pass.
 *
 * @tparam T element type of the field
 */
template <class T>
class pipeline_executor {
 public:
  /**
   * @brief The per-chunk device work of one step.
   *
   * Arguments: the stream to enqueue on (device work must be stream-ordered on it; on the host
   * backend run it before returning), the chunk buffer's layout, the step's input and output
   * buffers, the region to update (device-buffer coordinates) and the step number 1..k. It must
   * write every cell of the region, read only cells within the stencil radius of it, and leave
   * other cells of `out` alone.
   */
  using compute_function =
      std::function<void(stream_view, const field_layout&, const T*, T*, const box&, int)>;

  /**
   * @brief Creates streams and takes the device slots from `pool`.
   * @param backend host or cuda
   * @param pool where the 2·S chunk buffers come from (its byte limit bounds them); must
   * outlive the executor
   * @param plan the chunk plan of the field
   * @param options slots (S) and staging
   * @throw funnel::invalid_argument for S < 1 or a pool of another backend
   * @throw funnel::out_of_memory when the slots do not fit (use more chunks or fewer slots)
   */
  pipeline_executor(backend_kind backend, memory_pool& pool, chunk_plan plan,
                    pipeline_options options = {})
      : engine_(std::make_unique<detail::pipeline_engine>(backend, pool, std::move(plan), sizeof(T),
                                                          options)) {}

  /**
   * @brief Runs one pass: `out` = k steps applied to `in`; blocks until it is done.
   * @param in the field at the start of the pass (plan().field() layout)
   * @param out receives the interior planes after k steps; distinct from `in`
   * @param compute the per-step device work
   * @param trace when not null, gets one span per chunk and operation (tracks "h2d", "kernel",
   * "d2h", and "stage in"/"stage out" when staging)
   * @param mode pipelined (default) or a benchmark baseline (see pass_mode)
   * @return timings and byte counts of the pass
   * @throw funnel::invalid_argument for null or overlapping arrays, or an empty `compute` in a
   * mode that computes
   * @throw funnel::cuda_error (or what `compute` throws) on failure
   */
  pass_statistics run(const T* in, T* out, const compute_function& compute,
                      trace_recorder* trace = nullptr, pass_mode mode = pass_mode::pipelined) {
    const detail::untyped_compute erased = [&compute](stream_view stream,
                                                      const field_layout& layout, const void* a,
                                                      void* b, const box& region, int step) {
      compute(stream, layout, static_cast<const T*>(a), static_cast<T*>(b), region, step);
    };
    // An empty compute stays empty, so the engine can reject it for modes that compute.
    return engine_->run(in, out, compute ? erased : detail::untyped_compute{}, trace, mode);
  }

  /**
   * @brief The chunk plan.
   * @return the plan given at construction
   */
  [[nodiscard]] const chunk_plan& plan() const noexcept { return engine_->plan(); }
  /**
   * @brief The options it was created with.
   * @return slots (S) and staging, as given
   */
  [[nodiscard]] const pipeline_options& options() const noexcept { return engine_->options(); }
  /**
   * @brief The backend it runs on.
   * @return the backend given at construction
   */
  [[nodiscard]] backend_kind backend() const noexcept { return engine_->backend(); }
  /**
   * @brief Device memory held from the pool, for a run's memory report.
   * @return bytes of the 2·S chunk buffers
   */
  [[nodiscard]] std::size_t device_bytes() const noexcept { return engine_->device_bytes(); }
  /**
   * @brief Pinned staging memory held.
   * @return bytes; 0 until a pass needs staging
   */
  [[nodiscard]] std::size_t staging_bytes() const noexcept { return engine_->staging_bytes(); }

 private:
  std::unique_ptr<detail::pipeline_engine> engine_;
};

}  // namespace funnel
