// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/event.hpp"

#include <cstring>
#include <string>
#include <utility>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/detail/backend_checks.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {
namespace {

constexpr unsigned known_flags =
    static_cast<unsigned>(event_flags::timing | event_flags::interprocess);

void validate_flags(backend_kind backend, event_flags flags) {
  const auto bits = static_cast<unsigned>(flags);
  FUNNEL_EXPECTS((bits & ~known_flags) == 0, "funnel::event: unknown event_flags value " +
                                                 std::to_string(bits) +
                                                 "; allowed: none, timing, interprocess");
  const bool interprocess = has_flags(flags, event_flags::interprocess);
  // CUDA requires cudaEventDisableTiming on interprocess events.
  FUNNEL_EXPECTS(!(interprocess && has_flags(flags, event_flags::timing)),
                 "funnel::event: event_flags::timing | event_flags::interprocess is not "
                 "allowed; interprocess events cannot record time");
  if (interprocess && backend == backend_kind::host) {
    throw unsupported(
        "funnel::event: event_flags::interprocess is not supported on the host backend; "
        "interprocess events need the CUDA backend");
  }
}

#if FUNNEL_HAS_CUDA
cuda_event_handle create_cuda_event(event_flags flags) {
  unsigned cuda_flags = cudaEventDisableTiming;
  if (has_flags(flags, event_flags::timing)) cuda_flags = cudaEventDefault;
  if (has_flags(flags, event_flags::interprocess)) cuda_flags |= cudaEventInterprocess;
  cudaEvent_t handle = nullptr;
  FUNNEL_CUDA_TRY(cudaEventCreateWithFlags(&handle, cuda_flags),
                  "funnel::event, cuda flags " + std::to_string(cuda_flags));
  return handle;
}

static_assert(sizeof(cudaIpcEventHandle_t) == event_ipc_handle::size,
              "event_ipc_handle must hold a cudaIpcEventHandle_t exactly");
#endif

void expect_timing(const event& e, const char* which) {
  FUNNEL_EXPECTS(has_flags(e.flags(), event_flags::timing),
                 std::string("funnel::event::elapsed_ms: the ") + which +
                     " event was created without event_flags::timing; create both with it");
}

}  // namespace

event::event(backend_kind backend, event_flags flags)
    : backend_(backend), flags_(flags), handle_() {
  validate_flags(backend, flags);
  if (backend == backend_kind::host) return;
  detail::require_cuda("funnel::event(cuda)");
#if FUNNEL_HAS_CUDA
  handle_ = create_cuda_event(flags);
#endif
}

event event::from_native_handle(cuda_event_handle handle, event_flags flags) {
  FUNNEL_EXPECTS(handle != nullptr,
                 "funnel::event::from_native_handle: handle is nullptr; pass an event made by "
                 "cudaEventCreate*");
  validate_flags(backend_kind::cuda, flags);
  if (!cuda_compiled()) detail::require_cuda("funnel::event::from_native_handle");
  return event{backend_kind::cuda, flags, handle};
}

event::~event() { destroy(); }

event::event(event&& other) noexcept
    : backend_(other.backend_),
      flags_(other.flags_),
      handle_(std::exchange(other.handle_, nullptr)),
      recorded_at_(other.recorded_at_),
      recorded_(std::exchange(other.recorded_, false)) {}

event& event::operator=(event&& other) noexcept {
  if (this != &other) {
    destroy();
    backend_ = other.backend_;
    flags_ = other.flags_;
    handle_ = std::exchange(other.handle_, nullptr);
    recorded_at_ = other.recorded_at_;
    recorded_ = std::exchange(other.recorded_, false);
  }
  return *this;
}

void event::record(stream_view stream) {
  detail::expect_same_backend("funnel::event::record", backend_, stream.backend());
  if (backend_ == backend_kind::host) {
    // Host streams have finished all submitted work by now: this is its completion time.
    recorded_at_ = std::chrono::steady_clock::now();
    recorded_ = true;
    return;
  }
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaEventRecord(handle_, stream.native_handle()), "funnel::event::record");
#else
  detail::require_cuda("funnel::event::record");
#endif
}

void event::synchronize() const { view().synchronize(); }

bool event::query() const { return view().query(); }

void event::record_in_graph(stream_view stream) {
  if (backend_ == backend_kind::host) {
    record(stream);
    return;
  }
  detail::expect_same_backend("funnel::event::record_in_graph", backend_, stream.backend());
#if FUNNEL_HAS_CUDA
  // cudaEventRecordExternal is refused outside a capture.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  FUNNEL_CUDA_TRY(cudaStreamIsCapturing(stream.native_handle(), &capture),
                  "funnel::event::record_in_graph");
  const unsigned flags =
      capture == cudaStreamCaptureStatusActive ? cudaEventRecordExternal : cudaEventRecordDefault;
  FUNNEL_CUDA_TRY(cudaEventRecordWithFlags(handle_, stream.native_handle(), flags),
                  "funnel::event::record_in_graph");
#else
  detail::require_cuda("funnel::event::record_in_graph");
#endif
}

event_view event::view() const noexcept {
  return backend_ == backend_kind::cuda ? event_view::from_native_handle(handle_)
                                        : event_view::host();
}

float event::elapsed_ms(const event& start, const event& end) {
  detail::expect_same_backend("funnel::event::elapsed_ms", start.backend(), end.backend());
  expect_timing(start, "start");
  expect_timing(end, "end");
  if (start.backend() == backend_kind::host) {
    FUNNEL_EXPECTS(start.recorded_ && end.recorded_,
                   std::string("funnel::event::elapsed_ms: the ") +
                       (start.recorded_ ? "end" : "start") +
                       " event was never recorded; record both first");
    return std::chrono::duration<float, std::milli>(end.recorded_at_ - start.recorded_at_).count();
  }
#if FUNNEL_HAS_CUDA
  // cudaEventElapsedTime answers cudaErrorNotReady for pending events; callers want the time.
  start.synchronize();
  end.synchronize();
  float ms = 0.0F;
  FUNNEL_CUDA_TRY(cudaEventElapsedTime(&ms, start.handle_, end.handle_),
                  "funnel::event::elapsed_ms");
  return ms;
#else
  detail::require_cuda("funnel::event::elapsed_ms");
  return 0.0F;
#endif
}

event_ipc_handle event::export_ipc() const {
  if (backend_ == backend_kind::host) {
    throw unsupported(
        "funnel::event::export_ipc: interprocess events are not supported on the host backend");
  }
  FUNNEL_EXPECTS(has_flags(flags_, event_flags::interprocess),
                 "funnel::event::export_ipc: the event was created without "
                 "event_flags::interprocess; create it with that flag to export it");
  event_ipc_handle exported{};
#if FUNNEL_HAS_CUDA
  cudaIpcEventHandle_t handle{};
  FUNNEL_CUDA_TRY(cudaIpcGetEventHandle(&handle, handle_), "funnel::event::export_ipc");
  std::memcpy(exported.bytes, &handle, sizeof handle);
#else
  detail::require_cuda("funnel::event::export_ipc");
#endif
  return exported;
}

event event::import_ipc(const event_ipc_handle& handle) {
  detail::require_cuda("funnel::event::import_ipc");
#if FUNNEL_HAS_CUDA
  cudaIpcEventHandle_t native{};
  std::memcpy(&native, handle.bytes, sizeof native);
  cudaEvent_t opened = nullptr;
  FUNNEL_CUDA_TRY(cudaIpcOpenEventHandle(&opened, native), "funnel::event::import_ipc");
  return event{backend_kind::cuda, event_flags::interprocess, opened};
#else
  (void)handle;
  return event{backend_kind::host};  // unreachable: require_cuda threw
#endif
}

cuda_event_handle event::release() noexcept { return std::exchange(handle_, nullptr); }

void event::destroy() noexcept {
  if (handle_ == nullptr) return;
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_LOG(cudaEventDestroy(handle_));
#endif
  handle_ = nullptr;
}

}  // namespace funnel
