// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pipeline_probe.hpp
 * @brief Link bandwidths and kernel rate measured by a short probe, for choose_pipeline.
 */
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "funnel/error.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/pipeline/chunk_plan.hpp"
#include "funnel/pipeline/pipeline_executor.hpp"

namespace funnel {

/// @brief What the pipeline's parts achieve on this machine, each timed alone.
struct pipeline_probe {
  double h2d_gb_per_s = 0.0;        ///< host → device copies
  double d2h_gb_per_s = 0.0;        ///< device → host copies
  double cell_updates_per_s = 0.0;  ///< kernel steps (with the per-chunk setup) per second

  /**
   * @brief The rates in words, for plan printouts.
   * @return one line: "H2D <GB/s> GB/s, D2H <GB/s> GB/s, kernel <rate> cell updates/s"
   */
  [[nodiscard]] std::string describe() const;
};

/**
 * @brief Measures a pipeline_probe on the first planes of the caller's field.
 *
 * The field's planes are contiguous, so its first planes are a smaller field of the same x/y
 * shape; the probe streams about `probe_bytes` of them in 4 chunks (h2d-only, d2h-only and
 * compute-only passes, best of 2). The start of `out` is overwritten with unspecified values.
 *
 * @tparam T element type of the field
 * @param backend host or cuda
 * @param pool pool for the probe's device slots (it needs about probe_bytes)
 * @param field the rank's field
 * @param stencil_radius h
 * @param in the input field (read)
 * @param out the output field (its first planes are clobbered)
 * @param compute the per-step device work
 * @param probe_bytes about how much of the field to stream
 * @return the measured rates
 * @throw funnel::invalid_argument, funnel::out_of_memory as chunk_plan and pipeline_executor
 * (e.g. a field too thin to chunk, or a pool of another backend), or what the passes throw
 */
template <class T>
pipeline_probe probe_pipeline(backend_kind backend, memory_pool& pool, const field_layout& field,
                              int stencil_radius, const T* in, T* out,
                              const typename pipeline_executor<T>::compute_function& compute,
                              std::size_t probe_bytes = std::size_t{256} << 20) {
  field_layout sample = field;
  const int axis = chunk_plan::chunk_axis_of(field);
  std::int64_t plane_bytes = static_cast<std::int64_t>(sizeof(T));
  for (int a = 0; a < axis; ++a) plane_bytes *= field.allocated(a);
  const std::int64_t wanted = static_cast<std::int64_t>(probe_bytes) / plane_bytes;
  sample.interior[axis] = std::clamp<std::int64_t>(
      wanted, std::min<std::int64_t>(field.interior[axis], 2), field.interior[axis]);
  const int chunks = std::max(1, std::min(4, chunk_plan::max_chunks(sample, stencil_radius, 1)));
  pipeline_executor<T> executor(backend, pool, chunk_plan(sample, stencil_radius, 1, chunks),
                                pipeline_options{2, host_staging::automatic});
  const auto best = [&](pass_mode mode) {
    pass_statistics a = executor.run(in, out, compute, nullptr, mode);
    pass_statistics b = executor.run(in, out, compute, nullptr, mode);
    return a.pass_seconds <= b.pass_seconds ? a : b;
  };
  const pass_statistics h2d = best(pass_mode::h2d_only);
  const pass_statistics d2h = best(pass_mode::d2h_only);
  const pass_statistics kernels = best(pass_mode::compute_only);
  pipeline_probe probe;
  probe.h2d_gb_per_s = h2d.h2d_gb_per_s();
  probe.d2h_gb_per_s = d2h.d2h_gb_per_s();
  probe.cell_updates_per_s =
      kernels.kernel_seconds > 0.0
          ? static_cast<double>(kernels.cell_updates) / kernels.kernel_seconds
          : 0.0;
  return probe;
}

}  // namespace funnel
