// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file key_value_config.hpp
 * @brief The `--config FILE` format of funnel's programs for CLI11: `key = value` lines whose
 * keys are the long option names, `#` starting a comment.
 */
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

namespace funnel::app {

/**
 * @brief Reads `key = value` lines into CLI11 config items (App::parse_from_stream), checking
 * each line against the app's options so that a bad line is reported with its file and line.
 *
 * Values are taken whole (a comma-separated value stays one value); a key may appear once.
 * CLI11 applies an item only to an option the command line did not give, so the command line
 * wins wherever --config appears.
 */
class key_value_config : public CLI::Config {
 public:
  /**
   * @param app the app whose long option names are the keys (outlives this object)
   * @param path the file's name, for messages
   * @param forbidden keys that may not appear in a file (e.g. "config": no nesting)
   */
  key_value_config(const CLI::App& app, std::string path, std::vector<std::string> forbidden);

  /**
   * @brief The items of a config text.
   * @throw funnel::invalid_argument `PATH:LINE: ...` for a line without '=', an unknown or
   * forbidden key, or a key given twice
   */
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

  /// @brief `key = value` lines of the options the app was given (CLI11's interface).
  std::string to_config(const CLI::App* app, bool default_also, bool write_description,
                        std::string prefix) const override;

  /**
   * @brief `PATH:LINE: message` when `message` (from describe()) starts with the option of a
   * line of the file read last, else `PATH: message`.
   * @param message one line about a bad value
   */
  [[nodiscard]] std::string locate(const std::string& message) const;

 private:
  const CLI::App* app_;
  std::string path_;
  std::vector<std::string> forbidden_;
  mutable std::map<std::string, int> lines_;  // key -> line of the last text read
};

}  // namespace funnel::app
