// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file record_writer.hpp
 * @brief Writes one process's record of GPU busy spans (the format: docs/report.md).
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "funnel/report/activity_kind.hpp"
#include "funnel/report/busy_interval.hpp"
#include "funnel/report/clock_sample.hpp"
#include "funnel/report/rank_identity.hpp"
#include "funnel/report/record_device.hpp"

namespace funnel::report {

/**
 * @brief Owner of one record file, written as a sequence of self-delimiting chunks, each with
 * its own checksum, appended with one write() per flush.
 *
 * The record is useful at every moment: a process killed mid-run leaves every chunk flushed
 * so far, and a reader stops at a chunk that is cut short or damaged. Only finish() writes the
 * end marker, so a record without it belongs to a process that ended early.
 *
 * Chunks are staged in memory by add_device(), append(), alive() and note(), and reach the file
 * at flush(): callers flush periodically (the injection library: every second), never per
 * event. Not thread-safe: the caller serialises.
 */
class record_writer {
 public:
  /**
   * @brief Creates the record and writes its identity chunk at once.
   * @param path the file; when it exists already (another process of the same rank), the
   *        record goes to the same name with ".<pid>" before its extension instead, so two
   *        processes never share a file
   * @param who the identity, start_clock included
   * @throw funnel::system_error when the file cannot be created or written
   */
  record_writer(const std::string& path, const rank_identity& who);
  record_writer(const record_writer&) = delete;
  record_writer& operator=(const record_writer&) = delete;
  /// @brief Takes over the file; `other` is left closed.
  record_writer(record_writer&& other) noexcept;
  /// @brief Flushes and closes this record (no end marker), then takes over `other`'s.
  record_writer& operator=(record_writer&& other) noexcept;
  /// @brief Flushes what is staged (a failure is logged, never thrown) and closes the file.
  ~record_writer();

  /**
   * @brief A path pattern with the identity filled in: %r the global rank (else the local
   * rank, else the pid), %l the local rank (else the pid), %p the pid, %h the host, %% a %.
   * @param pattern e.g. "/tmp/job/report/rank-%r.record"
   * @param who the identity
   * @return the path
   */
  [[nodiscard]] static std::string expand_path(const std::string& pattern,
                                               const rank_identity& who);

  /**
   * @brief Stages a device chunk: which GPU a slot is.
   * @param device the slot, UUID and name
   */
  void add_device(const record_device& device);
  /**
   * @brief Stages one chunk of busy spans of one device and kind.
   * @param slot the device's slot (record_device::slot)
   * @param kind kernels or copies
   * @param spans spans on the record's clock; any order, they are stored as their union
   * @param at the clocks now: the reader takes the latest as "last seen"
   */
  void append(std::uint32_t slot, activity_kind kind, std::vector<busy_interval> spans,
              const clock_sample& at);
  /**
   * @brief Stages a count of activity records traced since the last count of this device and
   * kind: one per kernel, copy or memset (one per graph launch when graphs are traced whole).
   * The report estimates tracing's own cost from them.
   * @param slot the device's slot (record_device::slot)
   * @param kind kernels or copies
   * @param records how many
   */
  void count(std::uint32_t slot, activity_kind kind, std::uint64_t records);
  /**
   * @brief Stages a chunk that only says the process was alive at `at` (a flush without
   * new spans), so that a rank killed during a long idle stretch is seen ending late enough.
   * @param at the clocks now
   */
  void alive(const clock_sample& at);
  /**
   * @brief Stages a line of text the report repeats (e.g. a CUPTI call that failed).
   * @param text one line
   */
  void note(const std::string& text);
  /**
   * @brief Stages the end marker: the process ended cleanly.
   * @param at the clocks at the end
   * @param dropped_records activity records the producer lost (CUPTI's count)
   */
  void finish(const clock_sample& at, std::uint64_t dropped_records);

  /**
   * @brief Writes everything staged with one write() (more only when the kernel splits it).
   * @throw funnel::system_error when the write fails; what was staged is dropped
   */
  void flush();

  /// @brief The file being written.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// @brief Bytes written to the file so far.
  [[nodiscard]] std::uint64_t bytes_written() const noexcept { return written_; }

 private:
  void stage(std::uint16_t type, const std::string& payload);
  void close() noexcept;

  std::string path_;
  int fd_ = -1;
  std::uint32_t sequence_ = 0;
  std::uint64_t written_ = 0;
  std::string staged_;
};

}  // namespace funnel::report
