// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: names and bookkeeping of a checkpoint directory (no HDF5 needed).
//
//   <dir>/funnel.lock           directory_lock of the writing run
//   <dir>/ckpt-<step>/          complete checkpoints (8+ digit step)
//   <dir>/ckpt-<step>.tmp/      being written; never read
//   <dir>/ckpt-<step>.old/      being removed; never read
//   <dir>/latest                "ckpt-<step>\n": the newest complete checkpoint
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace funnel::io::detail {

/// @brief File name of a checkpoint's main HDF5 file inside `ckpt-<step>/`.
inline constexpr const char* checkpoint_file_name = "checkpoint.h5";
/// @brief Folder of the per-rank block files inside `ckpt-<step>/` (file_per_rank mode).
inline constexpr const char* checkpoint_blocks_name = "blocks";

/// @brief Largest `latest` file read (it holds one name).
inline constexpr std::size_t max_latest_bytes = 256;

/// @brief "ckpt-<step>", step zero-padded to 8 digits; step in [0, checkpoint_writer::max_step].
std::string checkpoint_name(std::int64_t step);
/// @brief The step of a name "ckpt-<digits>", nullopt for any other name.
std::optional<std::int64_t> parse_checkpoint_name(const std::string& name);
/// @brief Complete checkpoints of `dir` as (step, name), ascending by step; in a shared
/// directory only this user's.
std::vector<std::pair<std::int64_t, std::string>> list_checkpoints(const std::string& dir);
/// @brief Removes what killed writers leave behind: `*.tmp` and `*.old` entries (this user's).
void remove_leftovers(const std::string& dir);
/// @brief Creates `<dir>/<name>` (which must not exist), private to this user when `dir` is
/// shared.
void make_checkpoint_directory(const std::string& dir, const std::string& name);
/**
 * @brief Moves the finished `<name>.tmp` into place as `<name>` and fsyncs `dir`; an existing
 * `<name>` (the same step written again) is swapped out atomically where the file system can.
 */
void install_checkpoint(const std::string& dir, const std::string& name);
/// @brief Atomically points `latest` at `name`.
void publish_latest(const std::string& dir, const std::string& name);
/**
 * @brief The name in `latest`, nullopt when there is none. Throws funnel::error when `latest` is
 * not a regular file (a link, a FIFO, a device: it is never followed or opened), is too large,
 * holds anything but a checkpoint name, or (in a shared directory) is another user's.
 */
std::optional<std::string> read_latest(const std::string& dir);
/// @brief Removes complete checkpoints beyond the newest `keep_last`, never `keep`.
void prune_checkpoints(const std::string& dir, int keep_last, const std::string& keep);
/// @brief Removes every complete checkpoint and `latest` (starting a directory over).
void remove_checkpoints(const std::string& dir);

}  // namespace funnel::io::detail
