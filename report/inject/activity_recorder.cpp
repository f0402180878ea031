// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "activity_recorder.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "funnel/report/clock_sample.hpp"
#include "funnel/report/rank_identity.hpp"

namespace funnel::report::inject {
namespace {

// Large buffers, few hand-overs: CUPTI fills one before it calls back (or at a flush).
constexpr std::size_t buffer_bytes = 8u << 20;
constexpr std::size_t buffer_alignment = 8;  // CUPTI's requirement for activity buffers
constexpr CUpti_ActivityKind traced_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET};

activity_recorder* the_recorder = nullptr;  // see the class comment: one per process

void say(const std::string& line) noexcept {
  std::fprintf(stderr, "funnel-report-inject: %s\n", line.c_str());
}

std::string cupti_error(CUptiResult rc) {
  const char* text = nullptr;
  if (cuptiGetResultString(rc, &text) != CUPTI_SUCCESS || text == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(rc));
  }
  return text;
}

std::int64_t cupti_now() {
  std::uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return static_cast<std::int64_t>(t);
}

clock_sample sample_now() { return clock_sample::take(cupti_now); }

std::string format_uuid(const CUuuid& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

std::string driver_version() {
  int version = 0;
  if (cuDriverGetVersion(&version) != CUDA_SUCCESS) return {};
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

activity_recorder::activity_recorder(record_writer writer, int flush_ms)
    : writer_(std::make_unique<record_writer>(std::move(writer))), flush_ms_(flush_ms) {}

activity_recorder* activity_recorder::start(const std::string& record_pattern, int flush_ms,
                                            bool whole_graphs) {
  rank_identity who = rank_identity::of_this_process("cupti-inject", std::getenv);
  who.cuda_driver_version = driver_version();
  who.start_clock = sample_now();
  const std::string path = record_writer::expand_path(record_pattern, who);
  std::unique_ptr<activity_recorder> recorder;
  try {
    recorder.reset(new activity_recorder(record_writer(path, who), flush_ms));
  } catch (const std::exception& e) {
    say(std::string(e.what()) + "; this process is not recorded");
    return nullptr;
  }
  the_recorder = recorder.get();

  // The callback API names each context's GPU at once. Only one CUPTI subscriber may exist:
  // under another tool (Nsight) this fails, and the merger names the GPU from FUNNEL_GPU_UUID.
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult rc = cuptiSubscribe(&subscriber, on_callback, nullptr);
  if (rc == CUPTI_SUCCESS) {
    rc = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                             CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  }
  if (rc != CUPTI_SUCCESS) {
    recorder->note_locked("GPUs not named by CUPTI's callback API: " + cupti_error(rc));
  }
  rc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  // Asked for (FUNNEL_REPORT_GRAPHS=whole): a graph's launch is one span, because tracing every
  // node of graphs of short kernels costs the app time per node (docs/report.md, overhead).
  // Work outside graphs is traced as usual.
  bool graphs = false;
  if (rc == CUPTI_SUCCESS && whole_graphs) {
    const CUptiResult graph_rc = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    graphs = graph_rc == CUPTI_SUCCESS;
    if (!graphs) {
      recorder->note_locked("graphs traced node by node: graph-level tracing could not start: " +
                            cupti_error(graph_rc));
    }
  }
  for (const CUpti_ActivityKind kind : traced_kinds) {
    if (rc == CUPTI_SUCCESS) rc = cuptiActivityEnable(kind);
  }
  if (graphs && rc == CUPTI_SUCCESS) {
    recorder->note_locked("each CUDA graph launch recorded as one span (FUNNEL_REPORT_GRAPHS)");
  }
  if (rc != CUPTI_SUCCESS) {
    const std::string why = "CUPTI activity tracing could not start: " + cupti_error(rc);
    say(why + "; this process is not recorded");
    std::lock_guard<std::mutex> lock(recorder->mutex_);
    recorder->writer_->note(why);
    try {
      recorder->writer_->flush();
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): said above already
    }
    recorder->active_ = false;
    return recorder.release();
  }
  recorder->flusher_ = std::thread([r = recorder.get()] { r->flush_loop(); });
  return recorder.release();
}

void CUPTIAPI activity_recorder::buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                                  std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(buffer_alignment, buffer_bytes));
  *size = *buffer != nullptr ? buffer_bytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI activity_recorder::buffer_completed(CUcontext context, std::uint32_t stream_id,
                                                  std::uint8_t* buffer, std::size_t /*size*/,
                                                  std::size_t valid_size) {
  activity_recorder* r = the_recorder;
  if (r != nullptr && r->active_) {
    r->add(buffer, valid_size);
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
        dropped > 0) {
      std::lock_guard<std::mutex> lock(r->mutex_);
      r->dropped_ += dropped;
    }
  }
  std::free(buffer);
}

void activity_recorder::add(const std::uint8_t* buffer, std::size_t valid_size) {
  // Parse without the lock (CUPTI's thread), then add the spans under it.
  std::vector<std::pair<std::pair<std::uint32_t, activity_kind>, busy_interval>> spans;
  CUpti_Activity* record = nullptr;
  auto* data = const_cast<std::uint8_t*>(buffer);
  while (cuptiActivityGetNextRecord(data, valid_size, &record) == CUPTI_SUCCESS) {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint32_t device = 0;
    activity_kind kind = activity_kind::kernel;
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        start = k->start;
        end = k->end;
        device = k->deviceId;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        start = c->start;
        end = c->end;
        device = c->deviceId;
        kind = activity_kind::copy;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const auto* c = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
        start = c->start;
        end = c->end;
        device = c->deviceId;
        kind = activity_kind::copy;
        break;
      }
      case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
        // Copies inside the graph count as its kernel time: the GPU was busy with the graph.
        const auto* g = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(record);
        start = g->start;
        end = g->end;
        device = g->deviceId;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        start = m->start;
        end = m->end;
        device = m->deviceId;
        kind = activity_kind::copy;
        break;
      }
      default:
        continue;
    }
    // A forced flush at exit may hand over records whose end was never written.
    if (start == 0 || end <= start) continue;
    spans.push_back(
        {{device, kind}, {static_cast<std::int64_t>(start), static_cast<std::int64_t>(end)}});
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, span] : spans) pending_[key].push_back(span);
}

void CUPTIAPI activity_recorder::on_callback(void* /*user*/, CUpti_CallbackDomain domain,
                                             CUpti_CallbackId id, const void* data) {
  activity_recorder* r = the_recorder;
  if (r == nullptr || !r->active_ || domain != CUPTI_CB_DOMAIN_RESOURCE ||
      id != CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    return;
  }
  // The first context: the driver is initialised now, as CUPTI wants for this request.
  std::call_once(r->hardware_timestamps_asked_, [r] { r->ask_for_hardware_timestamps(); });
  r->note_device(static_cast<const CUpti_ResourceData*>(data)->context);
}

void activity_recorder::note_locked(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  writer_->note(text);
}

void activity_recorder::ask_for_hardware_timestamps() {
#if CUPTI_API_VERSION >= 130000
  // Kernels' timestamps are otherwise written by the GPU's front end, one MPS client at a time:
  // the fixed cost per kernel that docs/report.md measures. GPUs with a hardware event system
  // (Blackwell) can take them without it; elsewhere CUPTI answers "not supported" and nothing
  // changes.
  if (cuptiActivityEnableHWTrace(1) == CUPTI_SUCCESS) {
    note_locked("kernel timestamps from the GPU's hardware events (cuptiActivityEnableHWTrace)");
  }
#endif
}

void activity_recorder::note_device(CUcontext context) {
  std::uint32_t slot = 0;
  if (cuptiGetDeviceId(context, &slot) != CUPTI_SUCCESS) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!devices_.insert(slot).second) return;
  }
  record_device device;
  device.slot = slot;
  CUdevice handle = 0;
  CUuuid uuid{};
  char name[256] = {};
  if (cuDeviceGet(&handle, static_cast<int>(slot)) == CUDA_SUCCESS) {
    if (cuDeviceGetUuid(&uuid, handle) == CUDA_SUCCESS) device.uuid = format_uuid(uuid);
    if (cuDeviceGetName(name, sizeof name - 1, handle) == CUDA_SUCCESS) device.name = name;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!writer_) return;
  try {
    // Written at once: a rank killed before its first flush still names its GPU.
    writer_->add_device(device);
    writer_->flush();
  } catch (const std::exception& e) {
    disable(e.what());
  }
}

void activity_recorder::write_pending(bool end) noexcept {
  const clock_sample now = sample_now();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!writer_) return;
  try {
    bool any = false;
    for (auto& [key, spans] : pending_) {
      if (spans.empty()) continue;
      // One span per activity record CUPTI handed over: their count is what was traced.
      writer_->count(key.first, key.second, spans.size());
      writer_->append(key.first, key.second, std::move(spans), now);
      spans.clear();
      any = true;
    }
    if (end) {
      writer_->finish(now, dropped_);
    } else if (!any) {
      writer_->alive(now);
    }
    writer_->flush();
  } catch (const std::exception& e) {
    disable(e.what());
  }
}

void activity_recorder::disable(const std::string& why) noexcept {
  // Called with mutex_ held. The app goes on; only the record stops.
  if (!active_.exchange(false)) return;
  say(why + "; recording stops here");
  writer_.reset();
  pending_.clear();
}

void activity_recorder::flush_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (wake_.wait_for(lock, std::chrono::milliseconds(flush_ms_), [this] { return stopping_; })) {
      break;
    }
    lock.unlock();
    // A normal flush hands over completed buffers, full or not; records still in flight wait.
    cuptiActivityFlushAll(0);
    write_pending(false);
    lock.lock();
  }
}

void activity_recorder::finish() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  if (!active_) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  write_pending(true);
  std::lock_guard<std::mutex> lock(mutex_);
  active_ = false;
  writer_.reset();
}

void activity_recorder::forked_child() noexcept {
  // The child has no flush thread and must not write into its parent's record. The recorder
  // is never destroyed, so the thread object (the parent's thread) is left untouched: joining
  // or detaching a thread of another process is undefined.
  active_ = false;
  the_recorder = nullptr;
}

}  // namespace funnel::report::inject
