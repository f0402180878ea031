// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// trace_recorder: the Chrome trace JSON parses back and holds exactly the recorded spans.
#include "funnel/trace/trace_recorder.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>

#include "funnel/error.hpp"

namespace {

using json = nlohmann::json;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<const json*> events_with_phase(const json& doc, const std::string& ph) {
  std::vector<const json*> out;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == ph) out.push_back(&e);
  }
  return out;
}

TEST(TraceRecorder, WritesValidChromeTraceWithEverySpan) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> start(0.0, 1e6);
  std::uniform_int_distribution<std::int64_t> bytes(0, std::int64_t{1} << 40);

  funnel::trace_recorder rec("rank \"0\" \\ test", 3);
  const int h2d = rec.track("h2d");
  const int kernel = rec.track("kernel");
  EXPECT_EQ(rec.track("h2d"), h2d);  // same name, same track
  const int d2h = rec.track("d2h");
  struct expected {
    int track;
    double ts, dur;
    std::int64_t bytes;
  };
  std::vector<expected> want;
  for (int chunk = 0; chunk < 5; ++chunk) {
    for (int t : {h2d, kernel, d2h}) {
      const expected e{t, start(rng), start(rng) / 1000.0, bytes(rng)};
      rec.add_span(t, rec.tracks()[static_cast<std::size_t>(t)], e.ts, e.dur,
                   {{"chunk", chunk}, {"bytes", e.bytes}});
      want.push_back(e);
    }
  }
  char dir_template[] = "/tmp/funnel-trace-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string path = std::string{dir_template} + "/trace.json";
  rec.write_file(path);

  const json doc = json::parse(read_all(path));
  const auto spans = events_with_phase(doc, "X");
  ASSERT_EQ(spans.size(), want.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const json& e = *spans[i];
    EXPECT_EQ(e.at("pid").get<int>(), 3);
    EXPECT_EQ(e.at("tid").get<int>(), want[i].track);
    EXPECT_EQ(e.at("name").get<std::string>(),
              rec.tracks()[static_cast<std::size_t>(want[i].track)]);
    EXPECT_NEAR(e.at("ts").get<double>(), want[i].ts, 1e-3);
    EXPECT_NEAR(e.at("dur").get<double>(), want[i].dur, 1e-3);
    EXPECT_EQ(e.at("args").at("chunk").get<std::int64_t>(), static_cast<std::int64_t>(i / 3));
    EXPECT_EQ(e.at("args").at("bytes").get<std::int64_t>(), want[i].bytes);
  }
  const auto meta = events_with_phase(doc, "M");
  int named_tracks = 0;
  bool named_process = false;
  for (const json* m : meta) {
    if (m->at("name").get<std::string>() == "thread_name") {
      EXPECT_EQ(m->at("args").at("name").get<std::string>(),
                rec.tracks()[m->at("tid").get<std::size_t>()]);
      ++named_tracks;
    }
    if (m->at("name").get<std::string>() == "process_name") {
      EXPECT_EQ(m->at("args").at("name").get<std::string>(), "rank \"0\" \\ test");
      named_process = true;
    }
  }
  EXPECT_EQ(named_tracks, 3);
  EXPECT_TRUE(named_process);
  std::remove(path.c_str());
  rmdir(dir_template);
}

TEST(TraceRecorder, EmptyTraceIsValid) {
  funnel::trace_recorder rec;
  std::ostringstream out;
  rec.write(out);
  const json doc = json::parse(out.str());
  EXPECT_TRUE(events_with_phase(doc, "X").empty());
  EXPECT_EQ(events_with_phase(doc, "M").size(), 1u);
}

TEST(TraceRecorder, RejectsUnknownTracksAndBadTimes) {
  funnel::trace_recorder rec;
  const int t = rec.track("kernel");
  EXPECT_THROW(rec.add_span(t + 1, "x", 0.0, 1.0), funnel::invalid_argument);
  EXPECT_THROW(rec.add_span(t, "x", 0.0, -1.0), funnel::invalid_argument);
  EXPECT_THROW(rec.add_span(t, "x", std::numeric_limits<double>::quiet_NaN(), 1.0),
               funnel::invalid_argument);
  EXPECT_TRUE(rec.spans().empty());
  EXPECT_THROW(rec.write_file("/nonexistent-dir/trace.json"), funnel::system_error);
}

TEST(TraceRecorder, ClockIsMonotonicFromTheEpoch) {
  funnel::trace_recorder rec;
  const double a = rec.now_us();
  const double b = rec.now_us();
  EXPECT_GE(a, 0.0);
  EXPECT_GE(b, a);
}

}  // namespace
