/**
 * @file json_escape.hpp
 * @brief JSON string escaping shared by every place funnel writes JSON (trace files, the stencil
 *        summary, funnel-bench reports).
 */
#pragma once

#include <string>
#include <string_view>

namespace funnel::detail {

/**
 * @brief Escapes text for use inside a JSON string literal (RFC 8259), without the quotes.
 *
 * `"` and `\` are backslash-escaped, newline and tab become `\n` and `\t`, other control
 * characters below 0x20 become `\u00XX` (lowercase hex); every other byte, UTF-8 included, is
 * copied unchanged.
 * @param text the raw text
 * @return the escaped text, e.g. `a\"b\n` for `a"b` followed by a newline
 */
[[nodiscard]] std::string json_escape(std::string_view text);

/**
 * @brief Escapes text and wraps it in double quotes: a complete JSON string literal.
 * @param text the raw text
 * @return `"` + json_escape(text) + `"`
 */
[[nodiscard]] std::string json_quote(std::string_view text);

}  // namespace funnel::detail
