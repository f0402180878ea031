// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "cli_support.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>

#include "funnel/config.hpp"
#include "funnel/error.hpp"

namespace funnel::app {
namespace {

/// Whole-text decimal integer (optional sign): false for anything else or out of range.
bool parse_integer(const std::string& text, std::int64_t& value) {
  if (text.empty() || text.size() > 32) return false;
  const std::size_t first = text[0] == '+' || text[0] == '-' ? 1 : 0;
  if (first == text.size()) return false;
  for (std::size_t i = first; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  value = parsed;
  return true;
}

std::string join(const std::vector<std::string>& words, const char* separator) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : separator) + word;
  return out;
}

/// A validator whose check returns what is allowed ("" when the value is fine); no help text
/// (each option shows its choices or a placeholder as its type name instead).
CLI::Validator validator(std::function<std::string(const std::string&)> allowed_unless_valid) {
  return CLI::Validator(
      [check = std::move(allowed_unless_valid)](std::string& value) -> std::string {
        const std::string allowed = check(value);
        return allowed.empty() ? std::string{} : not_valid(value, allowed);
      },
      "");
}

/// The option name at the start of a CLI11 message ("--steps: ..."), "" when there is none.
std::string leading_name(const std::string& message) {
  const auto colon = message.find(": ");
  if (colon == std::string::npos || message.rfind("-", 0) != 0) return {};
  return message.substr(0, colon);
}

constexpr std::size_t help_width = 100;  // the help's lines wrap here
constexpr std::size_t name_column = 30;  // descriptions start here

/// `text` wrapped at help_width, continuation lines indented by `indent` spaces; `first` is
/// what the first line already holds.
std::string wrap(const std::string& text, std::size_t indent, std::size_t first) {
  std::string out;
  std::size_t column = first;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (column > indent && column + 1 + word.size() > help_width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (column > indent || (column == indent && !out.empty())) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  return out;
}

/// CLI11's layout with the descriptions wrapped, and an option listed by its short names and
/// first long name only (further long names are other spellings, e.g. --niter for -niter).
/// Options without a description are left out (they are described elsewhere, e.g. -nx).
class wrapping_formatter : public CLI::Formatter {
 public:
  std::string make_option(const CLI::Option* option, bool positional) const override {
    if (option->get_description().empty()) return {};
    std::string line = "  " + make_option_name(option, positional) + make_option_opts(option);
    if (line.size() >= name_column) {
      line += "\n" + std::string(name_column, ' ');
    } else {
      line.resize(name_column, ' ');
    }
    return line + wrap(make_option_desc(option), name_column, name_column) + "\n";
  }
  std::string make_option_name(const CLI::Option* option, bool positional) const override {
    if (positional || option->get_lnames().empty()) {
      return CLI::Formatter::make_option_name(option, positional);
    }
    std::string names;
    for (const auto& name : option->get_snames()) names += "-" + name + ",";
    return names + "--" + option->get_lnames().front();
  }
  std::string make_description(const CLI::App* app) const override {
    const std::string text = app->get_description();
    return text.empty() ? std::string{} : wrap(text, 0, 0) + "\n\n";
  }
};

}  // namespace

std::string echo(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= echo_limit) {
      return out + "...(" + std::to_string(text.size()) + " bytes)";
    }
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned>(c));
          out += hex;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string printable(std::string_view message) {
  // The line stays short enough to read (and under the 400 characters the tests allow with the
  // program's name before it): a long message keeps its start and its end, which says what is
  // wrong, and the middle gives way to its size.
  constexpr std::size_t escape_at_most = 64 * 1024;
  constexpr std::size_t head = 240;
  constexpr std::size_t tail = 100;
  const std::string_view text = message.substr(0, escape_at_most);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto next = [&](std::size_t k) {
      return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0U;
    };
    char hex[8];
    if (byte == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte == 0x7f) {
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned>(byte));
      out += hex;
    } else if (byte == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f) {
      // UTF-8 C1 controls (U+0080..U+009F, NEL among them) end a line for some readers.
      std::snprintf(hex, sizeof hex, "\\u%04x", next(1));
      out += hex;
      ++i;
    } else if (byte == 0xe2 && next(1) == 0x80 && (next(2) == 0xa8 || next(2) == 0xa9)) {
      out += next(2) == 0xa8 ? "\\u2028" : "\\u2029";  // line and paragraph separators
      i += 2;
    } else {
      out += text[i];
    }
  }
  if (out.size() <= head + tail + 40) return out;
  // Cut at character boundaries: never inside a UTF-8 sequence.
  const auto continuation = [&](std::size_t k) {
    return (static_cast<unsigned char>(out[k]) & 0xc0U) == 0x80U;
  };
  std::size_t cut = head;
  while (cut > 0 && continuation(cut)) --cut;
  std::size_t resume = out.size() - tail;
  while (resume < out.size() && continuation(resume)) ++resume;
  return out.substr(0, cut) + " ...(" + std::to_string(message.size()) + " bytes in all)... " +
         out.substr(resume);
}

std::string not_valid(std::string_view value, const std::string& allowed) {
  return "'" + echo(value) + "' is not valid: expected " + allowed;
}

CLI::Validator integer_in(std::int64_t min, std::int64_t max) {
  const std::string allowed =
      max == std::numeric_limits<std::int64_t>::max()
          ? "an integer >= " + std::to_string(min)
          : "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return validator([=](const std::string& text) {
    std::int64_t value = 0;
    return parse_integer(text, value) && value >= min && value <= max ? std::string{} : allowed;
  });
}

CLI::Validator auto_or_integer_in(std::int64_t min, std::int64_t max) {
  const std::string allowed =
      "auto or an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return validator([=](const std::string& text) {
    std::int64_t value = 0;
    return text == "auto" || (parse_integer(text, value) && value >= min && value <= max)
               ? std::string{}
               : allowed;
  });
}

CLI::Validator positive_number() {
  return validator([](const std::string& text) -> std::string {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    const bool ok = !text.empty() && end == text.c_str() + text.size() && std::isfinite(value) &&
                    value > 0.0 && value <= 1e15;
    return ok ? "" : "a number above 0 (at most 1e15)";
  });
}

CLI::Validator one_of(const std::vector<std::string>& words) {
  return validator([words](const std::string& text) {
    for (const auto& word : words) {
      if (word == text) return std::string{};
    }
    return join(words, "|");
  });
}

CLI::Validator integer_list(std::int64_t min) {
  const std::string allowed = "a comma-separated list of integers >= " + std::to_string(min);
  return validator([=](const std::string& text) {
    std::int64_t value = 0;
    for (const auto& item : split_list(text)) {
      if (!parse_integer(item, value) || value < min) return allowed;
    }
    return std::string{};
  });
}

CLI::Validator word_list(const std::vector<std::string>& words) {
  const std::string allowed = "a comma-separated list of " + join(words, "|");
  return validator([words, allowed](const std::string& text) {
    for (const auto& item : split_list(text)) {
      bool known = false;
      for (const auto& word : words) known = known || word == item;
      if (!known) return allowed;
    }
    return std::string{};
  });
}

CLI::Validator non_empty_path() {
  return validator([](const std::string& text) { return text.empty() ? "a non-empty path" : ""; });
}

CLI::Validator byte_count() {
  return validator([](const std::string& text) -> std::string {
    try {
      (void)to_bytes(text);
      return "";
    } catch (const invalid_argument&) {
      return "a byte count >= 1, optionally with a K, M or G suffix (e.g. 64M)";
    }
  });
}

std::int64_t to_integer(const std::string& text) {
  std::int64_t value = 0;
  if (!parse_integer(text, value)) throw invalid_argument(not_valid(text, "an integer"));
  return value;
}

std::vector<std::int64_t> to_integers(const std::string& text) {
  std::vector<std::int64_t> values;
  for (const auto& item : split_list(text)) values.push_back(to_integer(item));
  return values;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

std::size_t to_bytes(const std::string& text) {
  std::string digits = text;
  std::size_t scale = 1;
  const char suffix = text.empty() ? '\0' : text.back();
  if (suffix == 'K' || suffix == 'M' || suffix == 'G' || suffix == 'k' || suffix == 'm' ||
      suffix == 'g') {
    digits.pop_back();
    const char unit = static_cast<char>(suffix & ~0x20);  // upper case
    scale = std::size_t{1} << (unit == 'K' ? 10 : unit == 'M' ? 20 : 30);
  }
  std::int64_t value = 0;
  if (!parse_integer(digits, value) || digits[0] == '+' || value < 1 ||
      static_cast<std::uint64_t>(value) > std::numeric_limits<std::size_t>::max() / scale) {
    throw invalid_argument(not_valid(text, "a byte count"));
  }
  return static_cast<std::size_t>(value) * scale;
}

std::string describe(const CLI::Error& e) {
  const std::string message = e.what();
  const std::string name = leading_name(message);
  const std::string kind = e.get_name();
  if (kind == "ValidationError" && !name.empty()) {
    // "--steps: 'abc' is not valid: ..." -> "--steps 'abc' is not valid: ..."
    return name + " " + message.substr(name.size() + 2);
  }
  const auto override_at = message.find(" was given a disallowed flag override");
  if (kind == "ArgumentMismatch" && override_at != std::string::npos) {
    const std::string flag = message.substr(0, override_at);
    return (flag.rfind("--", 0) == 0 ? "" : "--") + flag + " takes no value (it is a flag)";
  }
  if (kind == "ArgumentMismatch" && !name.empty()) return name + " needs a value (see --help)";
  if (kind == "ConversionError") {
    // A flag given a value that is not a boolean: "Could not convert: --quiet = maybe".
    const std::string prefix = "Could not convert: ";
    const auto equals = message.find(" = ");
    if (message.rfind(prefix, 0) == 0 && equals != std::string::npos) {
      return message.substr(prefix.size(), equals - prefix.size()) + " " +
             not_valid(message.substr(equals + 3), "no value, or true|false (it is a flag)");
    }
  }
  return echo(message);
}

std::vector<std::string> backend_choices() {
  std::vector<std::string> choices{"auto"};
  if (FUNNEL_HAS_CUDA) choices.emplace_back("cuda");
  choices.emplace_back("host");
  return choices;
}

std::string join_choices(const std::vector<std::string>& words) { return join(words, "|"); }

void reject_extras(const CLI::App& app, const std::string& help_hint) {
  const auto extras = app.remaining();
  if (extras.empty()) return;
  const std::string& first = extras.front();
  if (first.size() > 1 && first[0] == '-') {
    throw invalid_argument("unknown option '" + echo(first) + "' (see " + help_hint + ")");
  }
  throw invalid_argument("unexpected argument '" + echo(first) + "' (options start with --; see " +
                         help_hint + ")");
}

void apply_common_style(CLI::App& app) {
  app.allow_extras(true);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  auto formatter = std::make_shared<wrapping_formatter>();
  formatter->column_width(name_column);
  app.formatter(formatter);
}

}  // namespace funnel::app
