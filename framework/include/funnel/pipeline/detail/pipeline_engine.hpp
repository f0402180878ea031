// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pipeline_engine.hpp
 * @brief Type-erased core of funnel::pipeline_executor (bytes and void pointers).
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

/// The pipeline's machinery: streams, device slots, staging buffers, events, and the pass loop.
class pipeline_engine {
 public:
  pipeline_engine(backend_kind backend, memory_pool& pool, chunk_plan plan,
                  std::size_t element_bytes, pipeline_options options);
  ~pipeline_engine();
  pipeline_engine(const pipeline_engine&) = delete;
  pipeline_engine& operator=(const pipeline_engine&) = delete;

  pass_statistics run(const void* in, void* out, const untyped_compute& compute,
                      trace_recorder* trace, pass_mode mode);

  [[nodiscard]] const chunk_plan& plan() const noexcept;
  [[nodiscard]] const pipeline_options& options() const noexcept;
  [[nodiscard]] backend_kind backend() const noexcept;
  [[nodiscard]] std::size_t device_bytes() const noexcept;
  [[nodiscard]] std::size_t staging_bytes() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace detail
}  // namespace funnel
