// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: the root metadata of a checkpoint file, which writer and reader must agree on, and
// the checksum that covers all of it.
//
// Format version 2 (version 1 files are refused with a line saying so): root attributes
// `format` ("funnel-checkpoint"), `format_version`, `run_id`, `step`, `time`, `problem`,
// `configuration`, `fields`, `dtype`, `global_cells`, `grid_spacing`, `funnel_version`, `writers`,
// `writer_boxes` (int64 [writers * 6]: lo x y z, hi x y z) and `metadata_checksum` (uint64: FNV-1a
// 64 over all of these and every dataset's `checksums`, see metadata_checksum()).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "funnel/decomposition/box.hpp"

namespace funnel::io::detail {

inline constexpr const char* checkpoint_format = "funnel-checkpoint";
inline constexpr std::int64_t checkpoint_format_version = 2;
/// Longest run id accepted.
inline constexpr std::size_t max_run_id_length = 64;

/// Everything a checkpoint file says besides the field data.
struct checkpoint_header {
  std::string run_id;
  std::int64_t step = 0;
  double time = 0.0;
  std::string problem;
  std::string configuration;
  index3 global_cells{1, 1, 1};
  std::array<double, 3> spacing{1, 1, 1};
  std::vector<std::string> fields;  ///< names, in the writer's order
  std::string dtype;                ///< the fields' dtype, or "mixed"
  std::string funnel_version;
  std::vector<box> writer_boxes;
  std::vector<std::vector<std::uint64_t>> checksums;  ///< [field][writer]
};

/// FNV-1a 64 over every value of `h` in a fixed order, each preceded by its name and size, so a
/// changed, missing or moved byte of any of them changes the result.
std::uint64_t metadata_checksum(const checkpoint_header& h);

/// Longest problem name accepted.
inline constexpr std::size_t max_problem_length = 256;

/// True for at most `max_length` characters, none of them a control character.
bool printable(const std::string& text, std::size_t max_length);

/// True for a run id of 1..max_run_id_length letters, digits, '-', '_' and '.'.
bool valid_run_id(const std::string& id);

/// A new run id: 16 random hexadecimal digits.
std::string new_run_id();

/// File name, next to checkpoint.h5, of its byte checksum (see write_file_sum()).
inline constexpr const char* checkpoint_sum_name = "checkpoint.sum";

/// Byte ranges (offset, length) of a file.
using byte_ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

/// The raw data of the datasets `fields` in the HDF5 file `main` (none for virtual datasets).
byte_ranges raw_data_ranges(const std::string& main, const std::vector<std::string>& fields);

/**
 * @brief Writes (and fsyncs) `<dir of main>/checkpoint.sum`: the main file's size and an FNV-1a 64
 * of all its bytes outside `raw_data` (which block checksums cover). HDF5 does not checksum all
 * it parses (variable-length strings and virtual dataset mappings live in a global heap without
 * one, and a damaged one can crash it), so a reader checks this before HDF5 opens the file.
 */
void write_file_sum(const std::string& main, byte_ranges raw_data);

/// @brief Throws funnel::error naming `main` unless its checkpoint.sum exists and matches.
void verify_file_sum(const std::string& main);

}  // namespace funnel::io::detail
