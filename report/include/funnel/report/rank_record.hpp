// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file rank_record.hpp
 * @brief One record as read back: identity, devices, busy spans, and how it ended.
 */
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "funnel/report/busy_interval_set.hpp"
#include "funnel/report/clock_sample.hpp"
#include "funnel/report/rank_identity.hpp"
#include "funnel/report/record_device.hpp"

namespace funnel::report {

/// @brief What read_record() found in one file. Spans are on the record's own clock.
struct rank_record {
  /// @brief The busy spans of one device slot.
  struct slot_activity {
    busy_interval_set kernels;         ///< kernel spans
    busy_interval_set copies;          ///< copy and memset spans
    std::uint64_t kernel_records = 0;  ///< kernels traced (graph launches when traced whole)
    std::uint64_t copy_records = 0;    ///< copies and memsets traced
  };

  std::string path;                    ///< the file
  bool has_identity = false;           ///< false: not a record (or its first chunk is damaged)
  rank_identity identity;              ///< valid when has_identity
  std::vector<record_device> devices;  ///< the GPUs the process used, in the order seen
  std::map<std::uint32_t, slot_activity> activity;  ///< busy spans by device slot
  std::vector<std::string> notes;                   ///< lines the producer left (note())
  clock_sample last_seen;             ///< the latest clocks of any chunk (the identity's at first)
  bool clean_end = false;             ///< the end marker was read
  std::uint64_t dropped_records = 0;  ///< activity records the producer lost (end marker)
  std::uint64_t chunks = 0;           ///< chunks read and accepted
  std::uint64_t spans = 0;            ///< spans read, before any union
  std::uint64_t bytes = 0;            ///< bytes of the accepted chunks
  /**
   * Empty when the file was read to its end without a fault; else what stopped the reader
   * and where ("chunk 12 at byte 4096: checksum mismatch"). Chunks before the fault count.
   */
  std::string damage;
  /// The reader stopped at a chunk cut short at the end of the file (a killed writer).
  bool truncated_tail = false;
  /// The offset of the record's clock: the node clock = record clock + this (set by the merger).
  std::int64_t clock_offset_ns = 0;
};

}  // namespace funnel::report
