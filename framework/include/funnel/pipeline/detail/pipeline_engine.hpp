// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pipeline_engine.hpp
 * @brief Type-erased core of funnel::pipeline_executor (bytes and void pointers).
 *
 * Internal (funnel::detail): installed because pipeline_executor.hpp includes it, but not part
 * of funnel's API.
 */
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/pipeline/chunk_plan.hpp"
#include "funnel/pipeline/pass_mode.hpp"
#include "funnel/pipeline/pass_statistics.hpp"
#include "funnel/pipeline/pipeline_options.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel {

class memory_pool;
class trace_recorder;

namespace detail {

/// The per-chunk device work with untyped buffers: (stream, chunk layout, in, out, region, step).
using untyped_compute =
    std::function<void(stream_view, const field_layout&, const void*, void*, const box&, int)>;

/**
 * @brief The pipeline's machinery: streams, device slots, staging buffers, events, and the pass
 * loop. Compiled once for every element type; pipeline_executor<T> is its typed face, and its
 * members are documented there.
 */
class pipeline_engine {
 public:
  /**
   * @brief As pipeline_executor's constructor.
   * @param backend host or cuda
   * @param pool where the 2·S chunk buffers come from; must outlive the engine
   * @param plan the chunk plan of the field
   * @param element_bytes sizeof the field's element type, > 0
   * @param options slots (S) and staging
   * @throw funnel::invalid_argument for S < 1, a pool of another backend or element_bytes 0
   * @throw funnel::out_of_memory when the slots do not fit
   */
  pipeline_engine(backend_kind backend, memory_pool& pool, chunk_plan plan,
                  std::size_t element_bytes, pipeline_options options);
  /// @brief Returns the slots to the pool and destroys the streams and events.
  ~pipeline_engine();
  pipeline_engine(const pipeline_engine&) = delete;
  pipeline_engine& operator=(const pipeline_engine&) = delete;

  /**
   * @brief As pipeline_executor::run().
   * @param in the field at the start of the pass
   * @param out receives the interior planes after k steps; must not overlap `in`
   * @param compute the per-step device work; may be empty for modes that do not compute
   * @param trace when not null, gets one span per chunk and operation
   * @param mode pipelined or a benchmark baseline
   * @return timings and byte counts of the pass
   * @throw funnel::invalid_argument, funnel::cuda_error as pipeline_executor::run()
   */
  pass_statistics run(const void* in, void* out, const untyped_compute& compute,
                      trace_recorder* trace, pass_mode mode);

  /**
   * @brief The chunk plan.
   * @return the plan given at construction
   */
  [[nodiscard]] const chunk_plan& plan() const noexcept;
  /**
   * @brief The options.
   * @return the options given at construction
   */
  [[nodiscard]] const pipeline_options& options() const noexcept;
  /**
   * @brief The backend.
   * @return the backend given at construction
   */
  [[nodiscard]] backend_kind backend() const noexcept;
  /**
   * @brief Device memory held from the pool.
   * @return bytes of the 2·S chunk buffers
   */
  [[nodiscard]] std::size_t device_bytes() const noexcept;
  /**
   * @brief Pinned staging memory held.
   * @return bytes; 0 until a pass needs staging
   */
  [[nodiscard]] std::size_t staging_bytes() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace detail
}  // namespace funnel
