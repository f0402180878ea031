// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/graph.hpp"

#include <utility>

#include "funnel/config.hpp"
#include "funnel/error.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {

graph graph::capture(stream_view stream, const std::function<void()>& enqueue) {
  FUNNEL_EXPECTS(stream.is_cuda(), "funnel::graph: graphs exist on the cuda backend only");
  graph g;
#if FUNNEL_HAS_CUDA
  cudaStream_t s = stream.native_handle();
  FUNNEL_CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal),
                  "funnel::graph: beginning a capture");
  try {
    enqueue();
  } catch (...) {
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(s, &partial) == cudaSuccess && partial != nullptr) {
      cudaGraphDestroy(partial);
    }
    (void)cudaGetLastError();
    throw;
  }
  FUNNEL_CUDA_TRY(cudaStreamEndCapture(s, &g.graph_), "funnel::graph: ending a capture");
  // Kernels launched with a priority keep it inside the graph.
  FUNNEL_CUDA_TRY(
      cudaGraphInstantiateWithFlags(&g.exec_, g.graph_, cudaGraphInstantiateFlagUseNodePriority),
      "funnel::graph: instantiating");
  FUNNEL_CUDA_TRY(cudaGraphUpload(g.exec_, s), "funnel::graph: uploading");
#else
  (void)enqueue;
#endif
  return g;
}

graph::~graph() { reset(); }

graph::graph(graph&& other) noexcept
    : graph_(std::exchange(other.graph_, nullptr)), exec_(std::exchange(other.exec_, nullptr)) {}

graph& graph::operator=(graph&& other) noexcept {
  if (this != &other) {
    reset();
    graph_ = std::exchange(other.graph_, nullptr);
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

void graph::reset() noexcept {
#if FUNNEL_HAS_CUDA
  if (exec_ != nullptr) FUNNEL_CUDA_LOG(cudaGraphExecDestroy(exec_));
  if (graph_ != nullptr) FUNNEL_CUDA_LOG(cudaGraphDestroy(graph_));
#endif
  exec_ = nullptr;
  graph_ = nullptr;
}

void graph::launch(stream_view stream) {
  FUNNEL_EXPECTS(!empty(), "funnel::graph::launch: no graph was captured");
  FUNNEL_EXPECTS(stream.is_cuda(), "funnel::graph::launch: a host stream");
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaGraphLaunch(exec_, stream.native_handle()), "funnel::graph::launch");
#endif
}

}  // namespace funnel
