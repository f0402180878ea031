// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file graph.hpp
 * @brief A CUDA graph captured from a stream's work, instantiated once and launched many times.
 */
#pragma once

#include <functional>

#include "funnel/runtime/stream_view.hpp"

struct CUgraph_st;
struct CUgraphExec_st;

namespace funnel {

/**
 * @brief Owns a captured CUDA graph and its executable instance (cudaGraph_t and
 * cudaGraphExec_t).
 *
 * A launch costs the GPU one submission however many kernels the graph holds; when many ranks
 * share a GPU under MPS, each submission is work the GPU does for one client at a time, so a
 * block of steps as one graph is what lets small steps of many ranks run together (measured in
 * docs/halo.md). Whatever the captured work reads from the host call (kernel arguments, copy
 * sizes) is fixed at capture: launch again only work that takes everything else from device
 * memory. cuda backend only. Move-only.
 */
class graph {
 public:
  /// @brief No graph (empty()).
  graph() = default;
  /**
   * @brief Captures what `enqueue` submits to `stream` (and to streams that join it through
   * events) and instantiates it; nothing runs until launch(). When `enqueue` throws, the
   * capture is ended and the exception passes on.
   * @param stream a CUDA stream with no work being captured
   * @param enqueue submits the work
   * @return the instantiated graph, uploaded to the device
   * @throw funnel::invalid_argument on the host backend
   * @throw funnel::cuda_error when capturing or instantiating fails (e.g. a call that cannot be
   * captured, such as a synchronisation)
   */
  [[nodiscard]] static graph capture(stream_view stream, const std::function<void()>& enqueue);

  /// @brief Destroys the graph and its instance; logs, never throws.
  ~graph();
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;
  /**
   * @brief Takes over `other`'s graph.
   * @param other the graph to take; left empty
   */
  graph(graph&& other) noexcept;
  /**
   * @brief Destroys the graph held, then takes over `other`'s.
   * @param other the graph to take; left empty
   * @return this graph
   */
  graph& operator=(graph&& other) noexcept;

  /**
   * @brief Whether a graph is held.
   * @return true when default-constructed or moved from
   */
  [[nodiscard]] bool empty() const noexcept { return exec_ == nullptr; }
  /**
   * @brief Runs the graph on `stream`, after the work submitted to it before.
   * @param stream a CUDA stream; need not be the one the graph was captured from
   * @throw funnel::invalid_argument when empty, or for a host stream
   * @throw funnel::cuda_error when the launch fails
   */
  void launch(stream_view stream);

 private:
  void reset() noexcept;

  CUgraph_st* graph_ = nullptr;
  CUgraphExec_st* exec_ = nullptr;
};

}  // namespace funnel
