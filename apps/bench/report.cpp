// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace funnel::bench {
namespace {

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

std::string met_text(const comparison& c) {
  if (!c.target) return "-";
  if (!c.goal_applies) return "n/a (host)";
  return c.target->met_by(c.ratio) ? "met" : "NOT MET";
}

std::string pad(std::string text, std::size_t width) {
  // Column widths count characters, not bytes: "≥" and "≤" take three bytes each.
  std::size_t shown = 0;
  for (const char c : text) shown += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  // A text as wide as its column (or wider) still ends with a space before the next one.
  text.append(shown < width ? width - shown : 1, ' ');
  return text;
}

}  // namespace

std::string goal::text() const {
  return std::string(dir == direction::at_least ? "≥ " : "≤ ") + fixed(value, 2);
}

bool goal::met_by(double ratio) const noexcept {
  if (!std::isfinite(ratio)) return false;
  return dir == direction::at_least ? ratio >= value : ratio <= value;
}

goal at_least(double value) noexcept { return goal{goal::direction::at_least, value}; }
goal at_most(double value) noexcept { return goal{goal::direction::at_most, value}; }

outcome skipped(const std::string& name, const std::string& reason) {
  outcome o;
  o.name = name;
  o.status = "skipped";
  o.reason = reason;
  return o;
}

std::string si(double value) {
  if (!std::isfinite(value)) return "n/a";
  const char* prefixes[] = {"", " k", " M", " G", " T", " P"};
  int p = 0;
  double v = value;
  while (std::fabs(v) >= 1000.0 && p < 5) {
    v /= 1000.0;
    ++p;
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%.4g%s", v, prefixes[p]);
  return text;
}

std::string format_table(const std::vector<outcome>& outcomes) {
  std::ostringstream out;
  out << pad("benchmark", 10) << pad("case", 40) << pad("baseline", 26) << pad("funnel", 26)
      << pad("ratio", 8) << pad("goal", 8) << "met?\n";
  std::vector<std::string> notes;
  for (const outcome& o : outcomes) {
    if (o.status != "ok") {
      out << pad(o.name, 10) << o.status << ": " << o.reason << '\n';
      continue;
    }
    for (const comparison& c : o.rows) {
      const std::string unit = c.unit.empty() ? "" : " " + c.unit;
      out << pad(o.name, 10) << pad(c.what, 40) << pad(si(c.baseline) + unit, 26)
          << pad(si(c.funnel) + unit, 26) << pad(fixed(c.ratio, 3), 8)
          << pad(c.target ? c.target->text() : "-", 8) << met_text(c) << '\n';
      if (!c.note.empty()) notes.push_back(o.name + " " + c.what + ": " + c.note);
    }
    for (const std::string& n : o.notes) notes.push_back(o.name + ": " + n);
  }
  for (const std::string& n : notes) out << "  note: " << n << '\n';
  return out.str();
}

json to_json(const outcome& o) {
  json out = json::object();
  out["status"] = o.status;
  if (!o.reason.empty()) out["reason"] = o.reason;
  json rows = json::array();
  for (const comparison& c : o.rows) {
    json row = json::object();
    row["case"] = c.what;
    row["baseline_name"] = c.baseline_name;
    row["baseline"] = c.baseline;
    row["funnel_name"] = c.funnel_name;
    row["funnel"] = c.funnel;
    row["unit"] = c.unit;
    row["ratio"] = c.ratio;
    if (c.target) {
      row["goal"] = c.target->text();
      row["goal_applies"] = c.goal_applies;
      row["met"] = c.goal_applies ? json(c.target->met_by(c.ratio)) : json();
    }
    if (!c.note.empty()) row["note"] = c.note;
    rows.push_back(std::move(row));
  }
  out["rows"] = std::move(rows);
  out["notes"] = json(o.notes);
  out["raw"] = o.raw;
  return out;
}

}  // namespace funnel::bench
