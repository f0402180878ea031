// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "halo_settings.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

#include "funnel/error.hpp"
#include "message_pieces.hpp"

namespace funnel::detail {

namespace {

// "0" or a byte count with an optional K, M or G suffix (powers of 1024), at most
// max_mpi_message; nullopt for anything else.
std::optional<std::size_t> parse_chunk(const std::string& text) {
  std::string digits = text;
  std::size_t unit = 1;
  const std::size_t suffix = digits.empty()
                                 ? std::string::npos
                                 : std::string("KMG").find(static_cast<char>(
                                       std::toupper(static_cast<unsigned char>(digits.back()))));
  if (suffix != std::string::npos) {
    unit = std::size_t{1} << (10 * (suffix + 1));
    digits.pop_back();
  }
  if (digits.empty() || digits.size() > 10 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const unsigned long long value = std::stoull(digits);
  if (value > max_mpi_message / unit) return std::nullopt;
  return static_cast<std::size_t>(value) * unit;
}

}  // namespace

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
  if (const auto c = value("FUNNEL_HALO_MPI_CHUNK")) {
    env.mpi_chunk = parse_chunk(*c);
    if (!env.mpi_chunk) {
      throw invalid_argument("FUNNEL_HALO_MPI_CHUNK '" + c->substr(0, 40) +
                             "' is not allowed (0 for whole faces, or bytes up to 1G with an "
                             "optional K, M or G suffix)");
    }
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
  if (const auto c = options.mpi_chunk ? options.mpi_chunk : environment.mpi_chunk) {
    s.mpi_chunk = *c;
  }
  return s;
}

}  // namespace funnel::detail
