/**
 * @file json.hpp
 * @brief A small JSON value for funnel-bench: built up in code, written out, and parsed back
 * (worker results and funnel-stencil's --summary files).
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace funnel::bench {

/**
 * @brief A JSON value: null, boolean, number, string, array or object (keys keep their order).
 *
 * Numbers are doubles; non-finite numbers are written as null (JSON has no inf/nan).
 */
class json_value {
 public:
  /// @brief The JSON types.
  enum class kind { null, boolean, number, string, array, object };

  /// @brief null.
  json_value() = default;
  /// @brief A boolean.
  json_value(bool value) : kind_(kind::boolean), bool_(value) {}  // NOLINT: implicit by design
  /// @brief A number from any arithmetic type but bool.
  template <class T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  json_value(T value)  // NOLINT: implicit by design
      : kind_(kind::number), number_(static_cast<double>(value)) {}
  /// @brief A string.
  json_value(std::string value)  // NOLINT: implicit by design
      : kind_(kind::string), string_(std::move(value)) {}
  /// @brief A string (kept from converting to bool).
  json_value(const char* value) : json_value(std::string(value)) {}  // NOLINT

  /// @brief An empty array.
  [[nodiscard]] static json_value array();
  /// @brief An empty object.
  [[nodiscard]] static json_value object();
  /**
   * @brief An array of numbers or strings.
   * @param values the elements
   */
  template <class T>
  [[nodiscard]] static json_value array_of(const std::vector<T>& values) {
    json_value out = array();
    for (const T& v : values) out.push_back(json_value(v));
    return out;
  }

  /// @brief The type held.
  [[nodiscard]] kind type() const noexcept { return kind_; }
  /// @brief True for null.
  [[nodiscard]] bool is_null() const noexcept { return kind_ == kind::null; }

  /**
   * @brief Appends to an array.
   * @param value the new element
   * @return the element as stored
   * @throw funnel::invalid_argument unless this is an array
   */
  json_value& push_back(json_value value);
  /**
   * @brief Sets `key` of an object (replacing an existing value, keeping its place).
   * @param key member name
   * @param value member value
   * @return the member as stored
   * @throw funnel::invalid_argument unless this is an object
   */
  json_value& set(const std::string& key, json_value value);
  /**
   * @brief A member of an object.
   * @param key member name
   * @return the member, or nullptr when absent or when this is not an object
   */
  [[nodiscard]] const json_value* find(const std::string& key) const noexcept;
  /**
   * @brief A member of an object that must be there.
   * @param key member name
   * @throw funnel::invalid_argument naming the key when it is absent
   */
  [[nodiscard]] const json_value& at(const std::string& key) const;

  /// @brief The boolean (throws funnel::invalid_argument for another type).
  [[nodiscard]] bool as_bool() const;
  /// @brief The number (throws funnel::invalid_argument for another type).
  [[nodiscard]] double as_number() const;
  /// @brief The string (throws funnel::invalid_argument for another type).
  [[nodiscard]] const std::string& as_string() const;
  /// @brief The elements of an array (throws funnel::invalid_argument for another type).
  [[nodiscard]] const std::vector<json_value>& items() const;
  /// @brief The member names of an object, in order (throws for another type).
  [[nodiscard]] const std::vector<std::string>& keys() const;
  /// @brief The member values of an object, in the order of keys() (throws for another type).
  [[nodiscard]] const std::vector<json_value>& values() const;

  /**
   * @brief The value as JSON text.
   * @param indent spaces per level; 0 writes one line
   */
  [[nodiscard]] std::string dump(int indent = 2) const;
  /**
   * @brief Parses JSON text.
   * @param text the document
   * @return the value
   * @throw funnel::invalid_argument naming the offset and what was expected
   */
  [[nodiscard]] static json_value parse(std::string_view text);
  /**
   * @brief Reads and parses a JSON file.
   * @param path file name
   * @throw funnel::system_error when it cannot be read, funnel::invalid_argument when it is not
   * JSON (the message names the file)
   */
  [[nodiscard]] static json_value parse_file(const std::string& path);

 private:
  void write(std::string& out, int indent, int depth) const;
  void expect(kind wanted, const char* what) const;

  kind kind_ = kind::null;
  bool bool_ = false;
  double number_ = 0.0;
  std::string string_;
  std::vector<json_value> items_;  // array elements, or object values
  std::vector<std::string> keys_;  // object keys, parallel to items_
};

/**
 * @brief Writes `text` as a quoted JSON string.
 * @param text raw text
 * @return the quoted, escaped string
 */
[[nodiscard]] std::string json_quote(std::string_view text);

}  // namespace funnel::bench
