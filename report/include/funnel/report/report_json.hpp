// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file report_json.hpp
 * @brief report.json: every figure of the report, with the machine and the options.
 */
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "funnel/report/merge_options.hpp"
#include "funnel/report/node_report.hpp"

namespace funnel::report {

/// @brief What report.json says about how the report was made.
struct report_context {
  std::string record_dir;                               ///< where the records were read
  std::string report_dir;                               ///< where report.json goes
  merge_options options;                                ///< the merge's options
  std::map<std::string, std::string> launcher_options;  ///< --option KEY=VALUE from the caller
};

/**
 * @brief The whole report as JSON (the layout: docs/report.md).
 * @param report the merged report
 * @param context how it was made
 * @return the document
 */
[[nodiscard]] nlohmann::json to_json(const node_report& report, const report_context& context);

/**
 * @brief Writes `document` to `path` through a temporary file and a rename, so a reader never
 * sees half a report.
 * @param path e.g. "<dir>/report.json"
 * @param document the JSON
 * @throw funnel::system_error when the file cannot be written
 */
void write_json_file(const std::string& path, const nlohmann::json& document);

}  // namespace funnel::report
