/**
 * @file user_files.hpp
 * @brief Files the user names: a small input read without ever blocking or reading without
 * bound (a --config file), and an output checked before a run spends time on what it would
 * write there (--summary, --trace).
 */
#pragma once

#include <cstddef>
#include <string>

namespace funnel::app {

/**
 * @brief The whole content of a regular file of at most `max_bytes` bytes.
 *
 * Opened without blocking (a FIFO or a device never stalls the run) and refused unless it is a
 * regular file; every read error is reported.
 * @param option the option that named the file, for the message (e.g. "--config")
 * @param path the file
 * @param max_bytes the largest size accepted
 * @throw funnel::invalid_argument `--config 'PATH' is not valid: expected ... (why)`
 */
[[nodiscard]] std::string read_input_file(const std::string& option, const std::string& path,
                                          std::size_t max_bytes);

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
