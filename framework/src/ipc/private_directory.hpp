// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Checks shared by allgather_fds and job_directory: directories holding sockets that hand out a
// rank's memory must be this user's alone.
#pragma once

#include <string>

namespace funnel::detail {

/**
 * @brief Throws funnel::invalid_argument unless `dir` is a directory (not a link) owned by this
 * user with no group or other permission.
 * @param dir the directory
 * @param what how messages name it, e.g. "job directory"
 */
void check_private_directory(const std::string& dir, const std::string& what);

/// @brief The value of environment variable `name`, "" when it is unset.
[[nodiscard]] std::string env_or_empty(const char* name);

}  // namespace funnel::detail
