// A tiny strict JSON reader for tests: parses a document into a value tree or throws, so tests
// can both validate the syntax of funnel's trace files and look at their contents.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace funnel::test {

struct json_value {
  enum class kind { null, boolean, number, string, array, object } type = kind::null;
  bool boolean = false;
  double number = 0.0;
  std::string text;
  std::vector<json_value> items;
  std::map<std::string, json_value> members;

  [[nodiscard]] bool has(const std::string& key) const { return members.count(key) != 0; }
  [[nodiscard]] const json_value& at(const std::string& key) const {
    const auto it = members.find(key);
    if (it == members.end()) throw std::runtime_error("json: no member '" + key + "'");
    return it->second;
  }
};

class json_parser {
 public:
  explicit json_parser(const std::string& text) : text_(text) {}

  json_value parse_document() {
    json_value v = parse_value();
    skip_space();
    if (pos_ != text_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("json: " + what + " at offset " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char peek() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    return text_[pos_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string{"expected '"} + c + "'");
    ++pos_;
  }
  void literal(const std::string& word) {
    if (text_.compare(pos_, word.size(), word) != 0) fail("bad literal");
    pos_ += word.size();
  }
  json_value parse_value() {
    json_value v;
    const char c = peek();
    if (c == '{') {
      v.type = json_value::kind::object;
      ++pos_;
      if (peek() == '}') {
        ++pos_;
        return v;
      }
      do {
        if (peek() != '"') fail("expected a member name");
        std::string key = parse_string();
        expect(':');
        if (v.members.count(key) != 0) fail("duplicate member '" + key + "'");
        v.members.emplace(std::move(key), parse_value());
      } while (peek() == ',' && ++pos_);
      expect('}');
    } else if (c == '[') {
      v.type = json_value::kind::array;
      ++pos_;
      if (peek() == ']') {
        ++pos_;
        return v;
      }
      do {
        v.items.push_back(parse_value());
      } while (peek() == ',' && ++pos_);
      expect(']');
    } else if (c == '"') {
      v.type = json_value::kind::string;
      v.text = parse_string();
    } else if (c == 't') {
      literal("true");
      v.type = json_value::kind::boolean;
      v.boolean = true;
    } else if (c == 'f') {
      literal("false");
      v.type = json_value::kind::boolean;
    } else if (c == 'n') {
      literal("null");
    } else {
      v.type = json_value::kind::number;
      v.number = parse_number();
    }
    return v;
  }
  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
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
        case 'u':
          if (pos_ + 4 > text_.size()) fail("short \\u escape");
          out += static_cast<char>(std::strtol(text_.substr(pos_, 4).c_str(), nullptr, 16));
          pos_ += 4;
          break;
        default:
          fail("bad escape");
      }
    }
  }
  double parse_number() {
    // JSON grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    const std::size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else {
      digits();
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      digits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      digits();
    }
    return std::strtod(text_.substr(start, pos_ - start).c_str(), nullptr);
  }
  void digits() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == start) fail("expected digits");
  }

  const std::string& text_;
  std::size_t pos_ = 0;
};

inline json_value parse_json(const std::string& text) { return json_parser(text).parse_document(); }

}  // namespace funnel::test
