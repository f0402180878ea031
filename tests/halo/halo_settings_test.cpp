// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The halo settings a job may give in the environment: each variable parsed, a bad value refused
// naming it, and an explicit halo_options value winning over the variable, which wins over the
// default.
#include "halo_settings.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "funnel/error.hpp"

namespace {

using funnel::halo_options;
using funnel::halo_signals;
using funnel::detail::halo_environment;
using funnel::detail::resolve;
using std::chrono::milliseconds;
using std::chrono::seconds;

halo_environment parse(const std::map<std::string, std::string>& vars) {
  return halo_environment::parse([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

std::string refusal(const std::map<std::string, std::string>& vars) {
  try {
    (void)parse(vars);
  } catch (const funnel::invalid_argument& e) {
    return e.message();
  }
  return "accepted";
}

TEST(HaloSettings, DefaultsWithoutOptionsOrEnvironment) {
  const auto s = resolve(halo_options{}, parse({}));
  EXPECT_EQ(s.stall_timeout, seconds(60));
  EXPECT_EQ(s.signals, halo_signals::automatic);
  EXPECT_FALSE(s.push);
  const auto empty = parse({{"FUNNEL_HALO_TIMEOUT", ""}, {"FUNNEL_HALO_PUSH", ""}});
  EXPECT_FALSE(empty.stall_timeout.has_value());
  EXPECT_FALSE(empty.push.has_value());
}

TEST(HaloSettings, TimeoutVariable) {
  EXPECT_EQ(resolve(halo_options{}, parse({{"FUNNEL_HALO_TIMEOUT", "7"}})).stall_timeout,
            seconds(7));
  halo_options o;
  o.stall_timeout = milliseconds(250);
  EXPECT_EQ(resolve(o, parse({{"FUNNEL_HALO_TIMEOUT", "7"}})).stall_timeout, milliseconds(250));
  for (const char* bad : {"0", "-3", "1.5", "12345678", "soon"}) {
    EXPECT_EQ(refusal({{"FUNNEL_HALO_TIMEOUT", bad}}),
              "FUNNEL_HALO_TIMEOUT '" + std::string(bad) +
                  "' is not allowed (whole seconds from 1 to 9999999)");
  }
}

TEST(HaloSettings, SignalsVariable) {
  EXPECT_EQ(resolve(halo_options{}, parse({{"FUNNEL_HALO_SIGNALS", "kernel"}})).signals,
            halo_signals::kernel);
  EXPECT_EQ(resolve(halo_options{}, parse({{"FUNNEL_HALO_SIGNALS", "stream"}})).signals,
            halo_signals::stream);
  halo_options o;
  o.signals = halo_signals::automatic;
  EXPECT_EQ(resolve(o, parse({{"FUNNEL_HALO_SIGNALS", "kernel"}})).signals,
            halo_signals::automatic);
  EXPECT_EQ(refusal({{"FUNNEL_HALO_SIGNALS", "fast"}}),
            "FUNNEL_HALO_SIGNALS 'fast' is not allowed (auto, kernel or stream)");
}

TEST(HaloSettings, PushVariable) {
  EXPECT_TRUE(resolve(halo_options{}, parse({{"FUNNEL_HALO_PUSH", "on"}})).push);
  EXPECT_FALSE(resolve(halo_options{}, parse({{"FUNNEL_HALO_PUSH", "off"}})).push);
  halo_options o;
  o.push = false;
  EXPECT_FALSE(resolve(o, parse({{"FUNNEL_HALO_PUSH", "on"}})).push);
  EXPECT_EQ(refusal({{"FUNNEL_HALO_PUSH", "sometimes"}}),
            "FUNNEL_HALO_PUSH 'sometimes' is not allowed (on or off)");
}

TEST(HaloSettings, MpiChunkVariable) {
  constexpr std::size_t mib = std::size_t{1} << 20;
  EXPECT_EQ(resolve(halo_options{}, parse({})).mpi_chunk, mib);
  const std::map<std::string, std::size_t> good = {
      {"0", 0}, {"4096", 4096}, {"64K", 65536}, {"2m", 2 * mib}, {"1G", 1024 * mib}};
  for (const auto& [text, bytes] : good) {
    EXPECT_EQ(resolve(halo_options{}, parse({{"FUNNEL_HALO_MPI_CHUNK", text}})).mpi_chunk, bytes)
        << text;
  }
  halo_options o;
  o.mpi_chunk = 0;
  EXPECT_EQ(resolve(o, parse({{"FUNNEL_HALO_MPI_CHUNK", "4M"}})).mpi_chunk, 0U);
  for (const char* bad : {"2G", "1048577K", "-1", "1.5M", "M", "4MB", "lots", "12345678901"}) {
    EXPECT_EQ(refusal({{"FUNNEL_HALO_MPI_CHUNK", bad}}),
              "FUNNEL_HALO_MPI_CHUNK '" + std::string(bad) +
                  "' is not allowed (0 for whole faces, or bytes up to 1G with an optional K, M "
                  "or G suffix)");
  }
}

TEST(HaloSettings, SignalNames) {
  for (const auto s : {halo_signals::automatic, halo_signals::kernel, halo_signals::stream}) {
    EXPECT_EQ(funnel::parse_halo_signals(funnel::to_string(s)), s);
  }
  EXPECT_THROW((void)funnel::parse_halo_signals("Kernel"), funnel::invalid_argument);
}

}  // namespace
