// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file cli.hpp
 * @brief funnel-bench's command line: the subcommands and their options as data, parsed with
 * CLI11 (apps/common gives both programs one style of help and errors), and typed access to
 * the values.
 */
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace funnel::bench {

/// @brief What an option's value must be; checked when the command line is parsed.
enum class value_kind {
  text,      ///< anything (a flag when the option has no value name)
  integer,   ///< an integer of at least `min`
  positive,  ///< a real number above 0
  integers,  ///< a comma-separated list of integers of at least `min`
  choice,    ///< one of `allowed`
  choices,   ///< a comma-separated list of `allowed` values
};

/// @brief One `--name value` (or `--name` flag) option of a subcommand.
struct option_spec {
  std::string name;                    ///< without "--"
  std::string value_name;              ///< e.g. "LIST"; empty for a flag
  std::string help;                    ///< one line
  std::string full_default;            ///< default of a full run ("" = none)
  std::string quick_default;           ///< default with --quick
  value_kind kind = value_kind::text;  ///< what the value must be
  long long min = 1;                   ///< smallest integer allowed (integer kinds)
  std::vector<std::string> allowed;    ///< allowed words (choice kinds)
  /// The option's own check when the command line is parsed, after its kind's: what is wrong
  /// with the value, or "" when it is good (none: the kind's check alone).
  std::function<std::string(const std::string&)> check;
};

/// @brief An option whose value is any text (or, with an empty value_name, a flag).
[[nodiscard]] option_spec text_option(std::string name, std::string value_name, std::string help,
                                      std::string full_default, std::string quick_default);
/// @brief An option whose value is an integer of at least `min`.
[[nodiscard]] option_spec integer_option(std::string name, std::string value_name, std::string help,
                                         std::string full_default, std::string quick_default,
                                         long long min = 1);
/// @brief An option whose value is a real number above 0.
[[nodiscard]] option_spec positive_option(std::string name, std::string value_name,
                                          std::string help, std::string full_default,
                                          std::string quick_default);
/// @brief An option whose value is a comma-separated list of integers of at least `min`.
[[nodiscard]] option_spec integers_option(std::string name, std::string value_name,
                                          std::string help, std::string full_default,
                                          std::string quick_default, long long min = 1);
/// @brief An option whose value is one of `allowed`.
[[nodiscard]] option_spec choice_option(std::string name, std::string value_name, std::string help,
                                        std::string full_default, std::string quick_default,
                                        std::vector<std::string> allowed);
/// @brief An option whose value is a comma-separated list of `allowed` words.
[[nodiscard]] option_spec choices_option(std::string name, std::string value_name, std::string help,
                                         std::string full_default, std::string quick_default,
                                         std::vector<std::string> allowed);

/// @brief A subcommand: its name, one-line brief, --help paragraph and options (the common ones are
/// added).
struct command_spec {
  std::string name;                  ///< e.g. "pool"
  std::string brief;                 ///< one line for the overview
  std::string summary;               ///< the paragraph of its --help
  std::vector<option_spec> options;  ///< its own options
  bool hidden = false;               ///< internal (worker) commands are not listed
};

/// @brief The options every subcommand takes (--json, --plot, --quick, --backend, ...).
[[nodiscard]] const std::vector<option_spec>& common_options();

/**
 * @brief The options of one subcommand: what was given, and the defaults of the others (the
 * full run's, or --quick's).
 *
 * Values are checked when the command line is parsed (parse_command_line), so the typed
 * getters only convert.
 */
class option_values {
 public:
  /**
   * @param command the subcommand's spec
   * @param given the options given, name -> value ("1" for a flag); options of other
   * subcommands are ignored (`all` hands every benchmark the common options)
   */
  option_values(const command_spec& command, std::map<std::string, std::string> given);

  /// @brief The subcommand these options belong to.
  [[nodiscard]] const std::string& command() const noexcept { return command_; }
  /// @brief True when --quick was given.
  [[nodiscard]] bool quick() const noexcept { return quick_; }
  /// @brief True when the flag (or option) was given.
  [[nodiscard]] bool flag(const std::string& name) const { return given_.count(name) > 0; }
  /// @brief The options given on the command line, name -> value.
  [[nodiscard]] const std::map<std::string, std::string>& given() const noexcept { return given_; }
  /// @brief The text value ("" when unset and without default).
  [[nodiscard]] std::string text(const std::string& name) const;
  /// @brief An integer value.
  [[nodiscard]] long long integer(const std::string& name) const;
  /// @brief A positive real value.
  [[nodiscard]] double positive(const std::string& name) const;
  /// @brief A comma-separated list of integers.
  [[nodiscard]] std::vector<long long> integers(const std::string& name) const;
  /// @brief A comma-separated list of words.
  [[nodiscard]] std::vector<std::string> choices(const std::string& name) const;
  /// @brief Every value (given or default) as name -> text, for the JSON record.
  [[nodiscard]] const std::map<std::string, std::string>& all() const noexcept { return values_; }

 private:
  std::string command_;
  bool quick_ = false;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::string> given_;
};

/// @brief What the command line asks for.
struct command_line {
  const command_spec* command = nullptr;     ///< the subcommand; nullptr: the overview's --help
  bool help = false;                         ///< --help: print its help and run nothing
  std::map<std::string, std::string> given;  ///< its options as given (see option_values)
};

/**
 * @brief Parses `funnel-bench <subcommand> [options]` with CLI11.
 * @param commands every subcommand
 * @param args the arguments after the program name (not empty)
 * @throw funnel::invalid_argument one line: an unknown subcommand or option, a missing value,
 * a value that is not of the option's kind (naming it and what is allowed)
 */
[[nodiscard]] command_line parse_command_line(const std::vector<command_spec>& commands,
                                              const std::vector<std::string>& args);

/**
 * @brief The --help text of one subcommand.
 * @param command its spec
 */
[[nodiscard]] std::string command_usage(const command_spec& command);

/**
 * @brief The overview --help text.
 * @param commands all subcommands (hidden ones are left out)
 */
[[nodiscard]] std::string overview_usage(const std::vector<command_spec>& commands);

}  // namespace funnel::bench
