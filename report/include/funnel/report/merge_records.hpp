// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file merge_records.hpp
 * @brief Merges the records of one node into per-rank and per-GPU figures.
 */
#pragma once

#include <string>
#include <vector>

#include "funnel/report/merge_options.hpp"
#include "funnel/report/node_report.hpp"
#include "funnel/report/rank_record.hpp"

namespace funnel::report {

/**
 * @brief Reads every record of a directory: regular files whose name ends in ".record" or
 * that start with the chunk magic (report.json and other files are passed over).
 * @param directory the records' directory
 * @return the records, sorted by file name; damaged ones included (rank_record::damage)
 * @throw funnel::system_error when the directory cannot be read
 */
[[nodiscard]] std::vector<rank_record> read_records(const std::string& directory);

/**
 * @brief Puts the records on one clock, groups them by rank and by GPU and computes every
 * figure of the report (docs/report.md), verdicts included.
 * @param records what read_records() returned (or records built in memory)
 * @param options what the caller knows
 * @return the report
 */
[[nodiscard]] node_report merge_records(std::vector<rank_record> records,
                                        const merge_options& options);

}  // namespace funnel::report
