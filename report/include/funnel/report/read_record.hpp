// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file read_record.hpp
 * @brief Reads a record that record_writer (or the injection library) wrote.
 */
#pragma once

#include <string>

#include "funnel/report/rank_record.hpp"

namespace funnel::report {

/**
 * @brief Reads every chunk of a record up to its end or to the first chunk that is cut short,
 * damaged or out of sequence; what came before counts, and rank_record::damage says what
 * stopped the reader. A file that cannot be opened gives a record with has_identity false and
 * the reason in damage.
 * @param path the record
 * @return what was read (never throws for the file's content or I/O)
 */
[[nodiscard]] rank_record read_record(const std::string& path);

/**
 * @brief True when the file starts like a record (its first 4 bytes are the chunk magic).
 * @param path any file
 * @return false also when it cannot be read
 */
[[nodiscard]] bool looks_like_record(const std::string& path) noexcept;

}  // namespace funnel::report
