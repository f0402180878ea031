// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file cli_support.hpp
 * @brief What funnel-stencil and funnel-bench share on top of CLI11: the validators that give
 * every bad value the same one-line message, user input quoted safely, CLI11's errors turned
 * into that line, and one help layout.
 */
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace funnel::app {

/// @brief The most characters of user input a message quotes (longer input is cut).
constexpr std::size_t echo_limit = 80;

/**
 * @brief User input as a message quotes it: control characters, quotes, backslashes and bytes
 * outside printable ASCII escaped (`\n`, `\t`, `\xNN`), cut to echo_limit characters with the
 * input's length said ("...' (100000000 bytes)"), so a message stays one short line.
 * @param text what the user gave
 */
[[nodiscard]] std::string echo(std::string_view text);

/**
 * @brief A message made safe to print as one line: control characters escaped (`\n`, `\xNN`,
 * and the UTF-8 C1 controls and line separators as `\uNNNN`); a long one keeps its first 240
 * and last 100 characters around its size, so the line stays under 400 characters and still
 * ends with what is wrong.
 * @param message the text
 */
[[nodiscard]] std::string printable(std::string_view message);

/**
 * @brief `'<echo(value)>' is not valid: expected <allowed>`: the validators' message (CLI11
 * puts the option's name in front of it).
 * @param value the bad value
 * @param allowed what is allowed, e.g. "an integer >= 0"
 */
[[nodiscard]] std::string not_valid(std::string_view value, const std::string& allowed);

/// @brief An integer in [min, max] (decimal, optional sign); names the range when refused.
[[nodiscard]] CLI::Validator integer_in(std::int64_t min, std::int64_t max = INT64_MAX);
/// @brief `auto`, or an integer in [min, max]; names both when refused.
[[nodiscard]] CLI::Validator auto_or_integer_in(std::int64_t min, std::int64_t max);
/// @brief A number above 0 and at most 1e15 (finite, no inf/nan).
[[nodiscard]] CLI::Validator positive_number();
/// @brief One of `words`.
[[nodiscard]] CLI::Validator one_of(const std::vector<std::string>& words);
/// @brief A comma-separated list of integers >= min (at least one).
[[nodiscard]] CLI::Validator integer_list(std::int64_t min);
/// @brief A comma-separated list of words from `words` (at least one).
[[nodiscard]] CLI::Validator word_list(const std::vector<std::string>& words);
/// @brief A non-empty path.
[[nodiscard]] CLI::Validator non_empty_path();
/// @brief A byte count >= 1 with an optional K, M or G suffix (powers of 1024).
[[nodiscard]] CLI::Validator byte_count();

/**
 * @brief Parses text a validator of this file accepted.
 * @throw funnel::invalid_argument when it is not an integer (a validator was skipped)
 */
[[nodiscard]] std::int64_t to_integer(const std::string& text);
/// @brief Parses a list integer_list() accepted.
[[nodiscard]] std::vector<std::int64_t> to_integers(const std::string& text);
/// @brief Splits a comma-separated list (an empty item where two commas meet).
[[nodiscard]] std::vector<std::string> split_list(const std::string& text);
/// @brief Parses a byte count byte_count() accepted.
[[nodiscard]] std::size_t to_bytes(const std::string& text);

/**
 * @brief One line for the user from a CLI11 parse error (a bad value, a missing value, a flag
 * given a value, ...), in the style of the validators: `--steps 'abc' is not valid: ...`.
 * @param e what CLI11 threw
 */
[[nodiscard]] std::string describe(const CLI::Error& e);

/// @brief The backends this build has: auto|cuda|host, or auto|host without CUDA.
[[nodiscard]] std::vector<std::string> backend_choices();

/// @brief Choices as --help and the messages show them: "a|b|c".
[[nodiscard]] std::string join_choices(const std::vector<std::string>& words);

/**
 * @brief Throws the first argument CLI11 left over (an unknown option or a stray argument).
 * @param app a parsed app that allows extras
 * @param help_hint how the user gets help, e.g. "funnel-stencil --help"
 * @throw funnel::invalid_argument `unknown option '--x' (see ...)` / `unexpected argument 'x'`
 */
void reject_extras(const CLI::App& app, const std::string& help_hint);

/**
 * @brief Gives `app` the help layout both programs share (options in groups, descriptions from
 * column 30 wrapped at 100, values shown as the choices or a placeholder, options without a
 * description left out) and the settings they
 * share: repeated options take the last value, leftovers are kept for reject_extras().
 * @param app a new app, before its options are added
 */
void apply_common_style(CLI::App& app);

}  // namespace funnel::app
