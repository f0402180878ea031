// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file activity_recorder.hpp
 * @brief Internal to libfunnel-report-inject.so: CUPTI's activity records in, busy spans out.
 */
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "funnel/report/activity_kind.hpp"
#include "funnel/report/busy_interval.hpp"
#include "funnel/report/record_writer.hpp"

namespace funnel::report::inject {

/**
 * @brief Turns the kernel, copy and memset records CUPTI hands over into busy spans, keeps
 * their union per device and kind, and appends it to the process's record once per flush
 * period (one write() per period, never one per event).
 *
 * One per process (CUPTI's callbacks carry no user pointer for activity buffers): created by
 * InitializeInjection and never destroyed, because CUPTI's worker thread may still call back
 * while the process exits.
 */
class activity_recorder {
 public:
  /**
   * @brief Opens the record and starts CUPTI's activity tracing and the flush thread.
   * @param record_pattern FUNNEL_REPORT_RECORD (record_writer::expand_path fills it in)
   * @param flush_ms the flush period
   * @param whole_graphs one span per CUDA graph launch instead of one per node
   * @return the recorder, or nullptr after one line on stderr when recording cannot start
   *         (the app runs on, unrecorded)
   */
  static activity_recorder* start(const std::string& record_pattern, int flush_ms,
                                  bool whole_graphs);

  /// @brief CUPTI asks for an activity buffer.
  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                        std::size_t* max_records);
  /// @brief CUPTI hands a buffer of activity records back.
  static void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream_id,
                                        std::uint8_t* buffer, std::size_t size,
                                        std::size_t valid_size);
  /// @brief CUPTI's callback API: a context was created (the record learns its GPU).
  static void CUPTIAPI on_callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                   const void* data);

  /// @brief At exit: stops the flush thread, forces CUPTI's last records out, writes them and
  /// the end marker.
  void finish() noexcept;
  /// @brief In a forked child: the record and the flush thread are the parent's; stop.
  void forked_child() noexcept;

 private:
  activity_recorder(record_writer writer, int flush_ms);
  void add(const std::uint8_t* buffer, std::size_t valid_size);
  void note_locked(const std::string& text);  // a note into the record, under the lock
  void note_device(CUcontext context);
  void ask_for_hardware_timestamps();
  void write_pending(bool end) noexcept;
  void flush_loop();
  void disable(const std::string& why) noexcept;

  std::mutex mutex_;  // guards everything below except active_
  std::unique_ptr<record_writer> writer_;
  std::map<std::pair<std::uint32_t, activity_kind>, std::vector<busy_interval>> pending_;
  std::set<std::uint32_t> devices_;
  std::once_flag hardware_timestamps_asked_;
  std::uint64_t dropped_ = 0;
  bool stopping_ = false;
  std::condition_variable wake_;
  std::thread flusher_;
  int flush_ms_;
  std::atomic<bool> active_{true};
};

}  // namespace funnel::report::inject
