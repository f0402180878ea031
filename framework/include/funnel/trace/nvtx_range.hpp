// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file nvtx_range.hpp
 * @brief RAII NVTX range for Nsight Systems timelines (a no-op in builds without CUDA).
 */
#pragma once

#include "funnel/runtime/stream_view.hpp"

namespace funnel {

/**
 * @brief Pushes an NVTX range on construction and pops it on destruction.
 *
 * Name ranges `funnel::<component>::<op>` (e.g. "funnel::pipeline::h2d") so Nsight timelines
 * read like the code. Uses the header-only NVTX v3 of the CUDA toolkit; without CUDA it does
 * nothing. Ranges nest per thread; keep one on the stack of the thread that opened it.
 */
class nvtx_range {
 public:
  /**
   * @brief Opens the range.
   * @param name range label; must stay valid until the constructor returns
   */
  explicit nvtx_range(const char* name) noexcept;
  /// @brief Closes the range.
  ~nvtx_range();
  nvtx_range(const nvtx_range&) = delete;
  nvtx_range& operator=(const nvtx_range&) = delete;
  nvtx_range(nvtx_range&&) = delete;
  nvtx_range& operator=(nvtx_range&&) = delete;

  /**
   * @brief Names a CUDA stream in Nsight Systems (no-op for host streams or without CUDA).
   * @param stream the stream to label
   * @param name label, e.g. "funnel::pipeline::h2d"
   */
  static void name_stream(stream_view stream, const char* name) noexcept;
};

}  // namespace funnel
