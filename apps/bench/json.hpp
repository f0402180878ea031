// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file json.hpp
 * @brief funnel-bench's JSON: nlohmann-json, with members kept in the order they are set (the
 * report reads naturally), and the two file helpers every benchmark uses.
 */
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace funnel::bench {

/// @brief A JSON value whose objects keep their members in insertion order.
using json = nlohmann::ordered_json;

/**
 * @brief Reads and parses a JSON file (a worker's result, a funnel-stencil --summary).
 * @param path file name
 * @throw funnel::system_error when it cannot be read, funnel::invalid_argument naming the file
 * when it is not JSON
 */
[[nodiscard]] json read_json_file(const std::string& path);

/**
 * @brief Writes `value` to `path` (replaced), indented by 2; non-finite numbers are written as
 * null and invalid UTF-8 in strings as U+FFFD.
 * @throw funnel::system_error when the file cannot be written
 */
void write_json_file(const std::string& path, const json& value);

}  // namespace funnel::bench
