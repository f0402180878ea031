// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "key_value_config.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "cli_support.hpp"
#include "funnel/error.hpp"

namespace funnel::app {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

}  // namespace

key_value_config::key_value_config(const CLI::App& app, std::string path,
                                   std::vector<std::string> forbidden)
    : app_(&app), path_(std::move(path)), forbidden_(std::move(forbidden)) {}

std::vector<CLI::ConfigItem> key_value_config::from_config(std::istream& input) const {
  lines_.clear();
  // Two names of one option (e.g. steps and niter) are one setting too.
  std::map<const CLI::Option*, std::string> set_by;
  std::vector<CLI::ConfigItem> result;
  std::string line;
  int number = 0;
  while (std::getline(input, line)) {
    ++number;
    const std::string where = echo(path_) + ":" + std::to_string(number) + ": ";
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    line = trim(line);
    if (line.empty()) continue;
    const auto equals = line.find('=');
    if (equals == std::string::npos) {
      throw invalid_argument(where + not_valid(line, "'key = value'"));
    }
    const std::string key = trim(line.substr(0, equals));
    if (std::find(forbidden_.begin(), forbidden_.end(), key) != forbidden_.end()) {
      throw invalid_argument(where + "'" + echo(key) + "' is not valid in a config file");
    }
    const CLI::Option* option = key.empty() ? nullptr : app_->get_option_no_throw("--" + key);
    if (option == nullptr) {
      throw invalid_argument(where + "unknown key '" + echo(key) +
                             "' (keys are the long option names, see --help)");
    }
    if (const auto seen = lines_.find(key); seen != lines_.end()) {
      throw invalid_argument(where + "'" + echo(key) + "' is already set on line " +
                             std::to_string(seen->second));
    }
    if (const auto other = set_by.find(option); other != set_by.end()) {
      throw invalid_argument(where + "'" + echo(key) + "' sets what '" + echo(other->second) +
                             "' on line " + std::to_string(lines_.at(other->second)) +
                             " already set (they name one option)");
    }
    set_by[option] = key;
    lines_[key] = number;
    CLI::ConfigItem item;
    item.name = key;
    item.inputs = {trim(line.substr(equals + 1))};
    result.push_back(std::move(item));
  }
  if (input.bad()) throw invalid_argument(echo(path_) + ": could not be read");
  return result;
}

std::string key_value_config::to_config(const CLI::App* app, bool, bool, std::string) const {
  std::ostringstream out;
  for (const CLI::Option* option : app->get_options()) {
    if (option->count() == 0 || option->get_lnames().empty()) continue;
    const auto values = option->results();
    out << option->get_lnames().front() << " = " << (values.empty() ? "" : values.back()) << "\n";
  }
  return out.str();
}

std::string key_value_config::locate(const std::string& message) const {
  for (const auto& [key, line] : lines_) {
    const std::string name = "--" + key;
    if (message.rfind(name, 0) == 0 &&
        (message.size() == name.size() || message[name.size()] == ' ')) {
      return echo(path_) + ":" + std::to_string(line) + ": " + key + message.substr(name.size());
    }
  }
  return echo(path_) + ": " + message;
}

}  // namespace funnel::app
