/**
 * @file input_file.hpp
 * @brief Reading a small input file the user named (a --config file) without ever blocking or
 * reading without bound.
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

}  // namespace funnel::app
