// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pipeline_benchmark.hpp
 * @brief The core of `funnel-bench pipeline`: serial vs pipelined vs the bound, in one run.
 */
#pragma once

#include "funnel/error.hpp"
#include "funnel/pipeline/pass_mode.hpp"
#include "funnel/pipeline/pipeline_benchmark_result.hpp"
#include "funnel/pipeline/pipeline_executor.hpp"

namespace funnel {

/**
 * @brief Times each pass mode over the executor's chunks, keeping the fastest of `repetitions`.
 *
 * Runs the baselines first (each part alone, both copy directions together), then the serial
 * baseline, then the pipeline, so `out` ends holding a correct pass (k steps applied to `in`).
 * No assertion on times: the caller prints them (ratios are what carry across machines).
 *
 * @tparam T element type
 * @param executor the pipeline (its plan and slots are what is measured)
 * @param in input field
 * @param out output field, distinct from `in`
 * @param compute the per-step device work
 * @param repetitions passes per mode (≥ 1); the fastest counts
 * @return the passes and the derived ratios
 * @throw funnel::invalid_argument for repetitions < 1, or what executor.run throws
 */
template <class T>
pipeline_benchmark_result run_pipeline_benchmark(
    pipeline_executor<T>& executor, const T* in, T* out,
    const typename pipeline_executor<T>::compute_function& compute, int repetitions = 3) {
  FUNNEL_EXPECTS(repetitions >= 1, "repetitions=" + std::to_string(repetitions) +
                                       " is invalid: at least one pass per mode is needed");
  const auto best = [&](pass_mode mode) {
    pass_statistics fastest = executor.run(in, out, compute, nullptr, mode);
    for (int r = 1; r < repetitions; ++r) {
      pass_statistics next = executor.run(in, out, compute, nullptr, mode);
      if (next.pass_seconds < fastest.pass_seconds) fastest = next;
    }
    return fastest;
  };
  pipeline_benchmark_result result;
  result.h2d_alone = best(pass_mode::h2d_only);
  result.d2h_alone = best(pass_mode::d2h_only);
  result.compute_alone = best(pass_mode::compute_only);
  result.copies_both = best(pass_mode::copies_only);
  result.serial = best(pass_mode::serial);
  result.pipelined = best(pass_mode::pipelined);
  return result;
}

}  // namespace funnel
