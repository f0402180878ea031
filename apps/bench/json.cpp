#include "json.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "funnel/detail/json_escape.hpp"
#include "funnel/error.hpp"

namespace funnel::bench {
namespace {

const char* kind_name(json_value::kind k) {
  switch (k) {
    case json_value::kind::null:
      return "null";
    case json_value::kind::boolean:
      return "boolean";
    case json_value::kind::number:
      return "number";
    case json_value::kind::string:
      return "string";
    case json_value::kind::array:
      return "array";
    case json_value::kind::object:
      return "object";
  }
  return "?";
}

// Shortest text that reads back as the same double, so files stay readable (0.1, not
// 0.10000000000000001) without losing precision.
std::string number_text(double value) {
  if (!std::isfinite(value)) return "null";
  char text[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

/// Recursive-descent parser over a string_view; errors name the offset.
class parser {
 public:
  explicit parser(std::string_view text) : text_(text) {}

  json_value document() {
    json_value v = value();
    skip_space();
    if (pos_ != text_.size()) fail("end of document");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& expected) const {
    throw invalid_argument("JSON: expected " + expected + " at offset " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool take(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool take_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }
  json_value value() {
    skip_space();
    if (pos_ >= text_.size()) fail("a value");
    const char c = text_[pos_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return json_value(string());
    if (take_word("true")) return json_value(true);
    if (take_word("false")) return json_value(false);
    if (take_word("null")) return json_value();
    return number();
  }
  json_value object() {
    json_value out = json_value::object();
    ++pos_;
    if (take('}')) return out;
    do {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') fail("a member name");
      std::string key = string();
      if (!take(':')) fail("':'");
      out.set(key, value());
    } while (take(','));
    if (!take('}')) fail("',' or '}'");
    return out;
  }
  json_value array() {
    json_value out = json_value::array();
    ++pos_;
    if (take(']')) return out;
    do {
      out.push_back(value());
    } while (take(','));
    if (!take(']')) fail("',' or ']'");
    return out;
  }
  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("an escape");
      c = text_[pos_++];
      switch (c) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          if (pos_ + 4 > text_.size()) fail("4 hex digits");
          const unsigned long code =
              std::strtoul(std::string(text_.substr(pos_, 4)).c_str(), nullptr, 16);
          pos_ += 4;
          // funnel writes only ASCII control characters this way; others become UTF-8.
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default:
          out += c;  // \" \\ \/
      }
    }
    if (pos_ >= text_.size()) fail("a closing '\"'");
    ++pos_;
    return out;
  }
  json_value number() {
    const std::string rest(text_.substr(pos_, 64));
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str()) fail("a value");
    pos_ += static_cast<std::size_t>(end - rest.c_str());
    return json_value(v);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string json_quote(std::string_view text) { return funnel::detail::json_quote(text); }

json_value json_value::array() {
  json_value v;
  v.kind_ = kind::array;
  return v;
}

json_value json_value::object() {
  json_value v;
  v.kind_ = kind::object;
  return v;
}

void json_value::expect(kind wanted, const char* what) const {
  if (kind_ != wanted) {
    throw invalid_argument(std::string("JSON: ") + what + " needs " + kind_name(wanted) +
                           ", found " + kind_name(kind_));
  }
}

json_value& json_value::push_back(json_value value) {
  expect(kind::array, "push_back");
  items_.push_back(std::move(value));
  return items_.back();
}

json_value& json_value::set(const std::string& key, json_value value) {
  expect(kind::object, "set");
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return items_[i] = std::move(value);
  }
  keys_.push_back(key);
  items_.push_back(std::move(value));
  return items_.back();
}

const json_value* json_value::find(const std::string& key) const noexcept {
  if (kind_ != kind::object) return nullptr;
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return &items_[i];
  }
  return nullptr;
}

const json_value& json_value::at(const std::string& key) const {
  const json_value* v = find(key);
  if (v == nullptr) throw invalid_argument("JSON: member \"" + key + "\" is missing");
  return *v;
}

bool json_value::as_bool() const {
  expect(kind::boolean, "as_bool");
  return bool_;
}

double json_value::as_number() const {
  expect(kind::number, "as_number");
  return number_;
}

const std::string& json_value::as_string() const {
  expect(kind::string, "as_string");
  return string_;
}

const std::vector<json_value>& json_value::items() const {
  expect(kind::array, "items");
  return items_;
}

const std::vector<std::string>& json_value::keys() const {
  expect(kind::object, "keys");
  return keys_;
}

const std::vector<json_value>& json_value::values() const {
  expect(kind::object, "values");
  return items_;
}

void json_value::write(std::string& out, int indent, int depth) const {
  const auto newline = [&](int level) {
    if (indent > 0) out += '\n' + std::string(static_cast<std::size_t>(indent * level), ' ');
  };
  switch (kind_) {
    case kind::null:
      out += "null";
      return;
    case kind::boolean:
      out += bool_ ? "true" : "false";
      return;
    case kind::number:
      out += number_text(number_);
      return;
    case kind::string:
      out += json_quote(string_);
      return;
    case kind::array:
    case kind::object: {
      const bool is_object = kind_ == kind::object;
      out += is_object ? '{' : '[';
      // Arrays of plain numbers stay on one line: raw timings would otherwise fill pages.
      bool flat = !is_object;
      for (const json_value& v : items_) flat = flat && v.kind_ == kind::number;
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (i > 0) out += flat ? ", " : ",";
        if (!flat) newline(depth + 1);
        if (is_object) out += json_quote(keys_[i]) + (indent > 0 ? ": " : ":");
        items_[i].write(out, indent, depth + 1);
      }
      if (!flat && !items_.empty()) newline(depth);
      out += is_object ? '}' : ']';
      return;
    }
  }
}

std::string json_value::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  return out;
}

json_value json_value::parse(std::string_view text) { return parser(text).document(); }

json_value json_value::parse_file(const std::string& path) {
  std::ifstream in(path);
  FUNNEL_SYSTEM_CHECK(!in, "open", path);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return parse(text.str());
  } catch (const invalid_argument& e) {
    throw invalid_argument(path + ": " + e.what());
  }
}

}  // namespace funnel::bench
