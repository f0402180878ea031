// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file user_files.hpp
 * @brief Files the user names for output (--summary, --trace, --field-dump): checked before a
 * run spends time on what it would write there. Inputs are read with
 * funnel::io::read_regular_file.
 */
#pragma once

#include <string>

namespace funnel::app {

/**
 * @brief Checks that `path` can be written before the run writes it at its end: it must be a
 * regular file or a device (not a directory, FIFO or socket) and writable, or one that can be
 * created (a file created by the check is removed again).
 * @param option the option that named the file, for the message (e.g. "--summary")
 * @param path the file
 * @throw funnel::invalid_argument `--summary 'PATH' is not valid: expected ... (why)`
 */
void check_output_file(const std::string& option, const std::string& path);

}  // namespace funnel::app
