// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file regular_file.hpp
 * @brief Bounded reads of small input files that must be regular files.
 */
#pragma once

#include <cstddef>
#include <string>

namespace funnel::io {

/**
 * @brief Reads a whole small file that must be a regular file, at most `max_bytes` of it.
 *
 * Made for inputs a user names (configuration files, a checkpoint's `latest`): the file's type is
 * checked before it is opened and again on the open descriptor, so a FIFO does not block, a
 * device or a directory is refused instead of being read without end or as empty, and a file that
 * is too large is refused before it is read. Symbolic links are followed.
 * Every message names the file as `'PATH'`, or as `WHAT 'PATH'` when `what` is given, so that a
 * program can pass the message on to its user as it is (e.g. `--config 'app.conf' is a FIFO, not
 * a regular file`).
 * @param path file to read
 * @param max_bytes largest size accepted
 * @param what what the file is to the caller, put before its name in messages (an option such as
 * "--config", or e.g. "configuration file"); empty: the path alone
 * @return its contents
 * @throw funnel::error naming the file when it is not a regular file or is larger than max_bytes
 * @throw funnel::system_error when it cannot be examined, opened or read
 */
[[nodiscard]] std::string read_regular_file(const std::string& path, std::size_t max_bytes,
                                            const std::string& what = {});

}  // namespace funnel::io
