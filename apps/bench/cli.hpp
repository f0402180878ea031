/**
 * @file cli.hpp
 * @brief funnel-bench's command line: the subcommands, their options and typed access to them.
 */
#pragma once

#include <map>
#include <string>
#include <vector>

namespace funnel::bench {

/// @brief What an option's value must be; checked when the command line is parsed.
enum class value_kind {
  text,      ///< anything
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
 * @brief Parsed options of one subcommand, defaults filled in.
 *
 * Typed getters validate the text and throw funnel::invalid_argument with one line naming the
 * option, the bad value and what is allowed.
 */
class option_values {
 public:
  /**
   * @brief Parses `args` (everything after the subcommand name).
   * @param command the subcommand's spec
   * @param args `--name value`, `--name=value` or `--flag`
   * @throw funnel::invalid_argument for an unknown option, a missing value, a stray argument
   * or a value (given or default) that is not of the option's kind
   */
  option_values(const command_spec& command, const std::vector<std::string>& args);

  /// @brief The subcommand these options belong to.
  [[nodiscard]] const std::string& command() const noexcept { return command_; }
  /// @brief True when --quick was given.
  [[nodiscard]] bool quick() const noexcept { return quick_; }
  /// @brief True when the flag was given.
  [[nodiscard]] bool flag(const std::string& name) const;
  /// @brief True when the option was given on the command line (not a default).
  [[nodiscard]] bool given(const std::string& name) const;
  /// @brief The text value ("" when unset and without default).
  [[nodiscard]] std::string text(const std::string& name) const;
  /**
   * @brief An integer value.
   * @param name option name
   * @param min smallest allowed value
   * @throw funnel::invalid_argument when not an integer ≥ min
   */
  [[nodiscard]] long long integer(const std::string& name, long long min = 1) const;
  /**
   * @brief A positive real value.
   * @throw funnel::invalid_argument when not a number > 0
   */
  [[nodiscard]] double positive(const std::string& name) const;
  /**
   * @brief A comma-separated list of integers ≥ min.
   * @throw funnel::invalid_argument when empty or an element is not an integer ≥ min
   */
  [[nodiscard]] std::vector<long long> integers(const std::string& name, long long min = 1) const;
  /**
   * @brief A comma-separated list whose elements come from `allowed`.
   * @throw funnel::invalid_argument when empty or an element is not allowed
   */
  [[nodiscard]] std::vector<std::string> choices(const std::string& name,
                                                 const std::vector<std::string>& allowed) const;
  /**
   * @brief One value from `allowed`.
   * @throw funnel::invalid_argument when not allowed
   */
  [[nodiscard]] std::string choice(const std::string& name,
                                   const std::vector<std::string>& allowed) const;
  /// @brief Every value (given or default) as name → text, for the JSON record.
  [[nodiscard]] const std::map<std::string, std::string>& all() const noexcept { return values_; }

 private:
  [[noreturn]] void bad(const std::string& name, const std::string& value,
                        const std::string& allowed) const;

  std::string command_;
  bool quick_ = false;
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> given_;
};

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
