// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "halo_settings.hpp"

#include <cstdlib>
#include <string>

#include "funnel/error.hpp"

namespace funnel::detail {

halo_environment halo_environment::parse(const std::function<const char*(const char*)>& lookup) {
  const auto value = [&](const char* name) -> std::optional<std::string> {
    const char* text = lookup(name);
    if (text == nullptr || *text == '\0') return std::nullopt;
    return std::string(text);
  };
  halo_environment env;
  if (const auto t = value("FUNNEL_HALO_TIMEOUT")) {
    if (t->size() > 7 || t->find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(*t) <= 0) {
      throw invalid_argument("FUNNEL_HALO_TIMEOUT '" + t->substr(0, 40) +
                             "' is not allowed (whole seconds from 1 to 9999999)");
    }
    env.stall_timeout = std::chrono::seconds(std::stoll(*t));
  }
  if (const auto s = value("FUNNEL_HALO_SIGNALS")) {
    try {
      env.signals = parse_halo_signals(*s);
    } catch (const invalid_argument&) {
      throw invalid_argument("FUNNEL_HALO_SIGNALS '" + s->substr(0, 40) +
                             "' is not allowed (auto, kernel or stream)");
    }
  }
  if (const auto p = value("FUNNEL_HALO_PUSH")) {
    if (*p != "on" && *p != "off") {
      throw invalid_argument("FUNNEL_HALO_PUSH '" + p->substr(0, 40) +
                             "' is not allowed (on or off)");
    }
    env.push = *p == "on";
  }
  return env;
}

const halo_environment& halo_environment::process() {
  static const halo_environment env =
      parse([](const char* name) -> const char* { return std::getenv(name); });
  return env;
}

halo_settings resolve(const halo_options& options, const halo_environment& environment) {
  halo_settings s;
  if (const auto t = options.stall_timeout ? options.stall_timeout : environment.stall_timeout) {
    s.stall_timeout = *t;
  }
  if (const auto g = options.signals ? options.signals : environment.signals) s.signals = *g;
  if (const auto p = options.push ? options.push : environment.push) s.push = *p;
  return s;
}

}  // namespace funnel::detail
