// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The sharing report's pieces against figures computed by hand: the union of busy spans, the
// ranks-at-once profile, the record format (round trip, cut short, damaged, not a record), the
// merge (overlaps, gaps, clock offsets between processes, empty records, ranks that ended
// early, missing ranks, the caller's window) and every verdict rule.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/report/busy_interval_set.hpp"
#include "funnel/report/concurrency_profile.hpp"
#include "funnel/report/detail/record_format.hpp"
#include "funnel/report/gpu_summary.hpp"
#include "funnel/report/merge_records.hpp"
#include "funnel/report/read_record.hpp"
#include "funnel/report/record_writer.hpp"
#include "funnel/report/report_json.hpp"
#include "funnel/report/report_text.hpp"
#include "funnel/report/verdict.hpp"

namespace fr = funnel::report;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t s = 1000000000;              // ns per second
constexpr std::int64_t node_zero = 5000 * s;        // CLOCK_MONOTONIC at the job's start
constexpr std::int64_t real_zero = 1767225600 * s;  // CLOCK_REALTIME at the job's start

// A temporary directory, removed with everything in it.
class scratch_dir {
 public:
  scratch_dir() {
    char pattern[] = "/tmp/funnel-report-unit.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return path_ + "/" + name; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A record of one rank built in memory. Times are given in seconds on the node's clock from
// the job's start; the record keeps them on its own clock, `clock_skew` ns behind the node's.
struct rank_spec {
  int global_rank = 0;
  int local_rank = 0;
  std::string uuid = "GPU-A";
  std::int64_t clock_skew = 0;
  double start = 0;
  double end = 10;
  bool clean = true;
  std::vector<std::pair<double, double>> kernels;
  std::vector<std::pair<double, double>> copies;
  std::string boot_id = "boot-1";
  std::int64_t mono_shift = 0;       // another boot's monotonic clock
  std::uint64_t kernel_records = 0;  // kernels and copies the producer traced
  std::uint64_t copy_records = 0;
};

std::int64_t at(double seconds) { return static_cast<std::int64_t>(seconds * 1e9 + 0.5); }

fr::clock_sample sample(const rank_spec& r, double seconds) {
  const std::int64_t mono = node_zero + at(seconds) + r.mono_shift;
  return {mono - r.clock_skew, mono, real_zero + at(seconds)};
}

fr::rank_record make_record(const rank_spec& r) {
  fr::rank_record rec;
  rec.path = "/records/rank-" + std::to_string(r.global_rank) + ".record";
  rec.has_identity = true;
  rec.identity.producer = "test";
  rec.identity.host = "node1";
  rec.identity.boot_id = r.boot_id;
  rec.identity.pid = 1000 + r.global_rank;
  rec.identity.global_rank = r.global_rank;
  rec.identity.local_rank = r.local_rank;
  rec.identity.start_clock = sample(r, r.start + 0.25);
  rec.identity.process_start_monotonic_ns = node_zero + at(r.start) + r.mono_shift;
  rec.identity.process_start_realtime_ns = real_zero + at(r.start);
  rec.devices.push_back({0, r.uuid, "Test GPU"});
  auto& slot = rec.activity[0];
  for (const auto& [a, b] : r.kernels) {
    slot.kernels.add({sample(r, a).record_ns, sample(r, b).record_ns});
  }
  for (const auto& [a, b] : r.copies) {
    slot.copies.add({sample(r, a).record_ns, sample(r, b).record_ns});
  }
  slot.kernel_records = r.kernel_records;
  slot.copy_records = r.copy_records;
  rec.last_seen = sample(r, r.end);
  rec.clean_end = r.clean;
  return rec;
}

// The two-rank case of docs/report.md: rank 0 kernels [1,3) [5,6), copies [2.5,4); rank 1
// kernels [2,5); the job from 0 to 10 s.
std::vector<rank_spec> two_ranks() {
  rank_spec r0;
  r0.kernels = {{1, 3}, {5, 6}};
  r0.copies = {{2.5, 4}};
  r0.clock_skew = 123456789;
  rank_spec r1;
  r1.global_rank = 1;
  r1.local_rank = 1;
  r1.start = 1;
  r1.end = 9;
  r1.kernels = {{2, 5}};
  r1.clock_skew = -987654321012;
  return {r0, r1};
}

fr::node_report merge(const std::vector<rank_spec>& specs, fr::merge_options options = {}) {
  std::vector<fr::rank_record> records;
  for (const auto& r : specs) records.push_back(make_record(r));
  if (options.timeline_bins == 400) options.timeline_bins = 10;
  return fr::merge_records(std::move(records), options);
}

void expect_two_rank_figures(const fr::node_report& report) {
  ASSERT_EQ(report.gpus.size(), 1u);
  const fr::gpu_summary& g = report.gpus[0];
  EXPECT_NEAR(report.wall_s, 10.0, 1e-9);
  EXPECT_NEAR(g.busy_s, 5.0, 1e-9);  // [1,6)
  EXPECT_NEAR(g.busy_fraction, 0.5, 1e-9);
  EXPECT_NEAR(g.kernel_busy_fraction, 0.5, 1e-9);
  EXPECT_NEAR(g.copy_busy_fraction, 0.15, 1e-9);
  ASSERT_EQ(g.ranks.size(), 2u);
  EXPECT_NEAR(g.ranks[0].gpu_s, 4.0, 1e-9);  // [1,4) [5,6)
  EXPECT_NEAR(g.ranks[0].kernel_s, 3.0, 1e-9);
  EXPECT_NEAR(g.ranks[0].copy_s, 1.5, 1e-9);
  EXPECT_NEAR(g.ranks[1].gpu_s, 3.0, 1e-9);
  EXPECT_NEAR(g.ranks_in_flight, 7.0 / 5.0, 1e-9);
  EXPECT_NEAR(g.kernel_ranks_in_flight, 6.0 / 5.0, 1e-9);
  EXPECT_EQ(g.max_ranks_in_flight, 2);
  // With MPS on (or unknown) the overlapping spans ran together; time-sliced, one at a time.
  const bool sliced = g.mps == "off";
  EXPECT_NEAR(g.ranks_at_once, sliced ? 1.0 : 7.0 / 5.0, 1e-9);
  EXPECT_NEAR(g.kernel_ranks_at_once, sliced ? 1.0 : 6.0 / 5.0, 1e-9);
  EXPECT_EQ(g.max_ranks_at_once, sliced ? 1 : 2);
  const std::vector<double> at_count =
      sliced ? std::vector<double>{5.0, 5.0} : std::vector<double>{5.0, 3.0, 2.0};  // 2: [2,4)
  ASSERT_EQ(g.time_at_count_s.size(), at_count.size());
  for (std::size_t k = 0; k < at_count.size(); ++k) {
    EXPECT_NEAR(g.time_at_count_s[k], at_count[k], 1e-9) << "count " << k;
  }
  EXPECT_NEAR(g.rank_spread.min_s, 3.0, 1e-9);
  EXPECT_NEAR(g.rank_spread.max_s, 4.0, 1e-9);
  EXPECT_NEAR(g.rank_spread.mean_s, 3.5, 1e-9);
  EXPECT_NEAR(g.rank_spread.cv, 0.5 / 3.5, 1e-9);
  EXPECT_EQ(g.rank_spread.min_rank, "rank 1");
  EXPECT_EQ(g.rank_spread.max_rank, "rank 0");
  const std::vector<double> busy = {0, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  const std::vector<double> at_once =
      sliced ? busy : std::vector<double>{0, 1, 2, 2, 1, 1, 0, 0, 0, 0};
  ASSERT_EQ(g.timeline_busy.size(), 10u);
  for (std::size_t i = 0; i < busy.size(); ++i) {
    EXPECT_NEAR(g.timeline_busy[i], busy[i], 1e-9) << "bin " << i;
    EXPECT_NEAR(g.timeline_ranks_at_once[i], at_once[i], 1e-9) << "bin " << i;
  }
}

}  // namespace

TEST(BusyIntervalSet, UnionOfOverlapsTouchesAndGaps) {
  fr::busy_interval_set set;
  set.add({50, 60});
  set.add({10, 20});
  set.add({15, 30});  // overlaps [10,20)
  set.add({30, 35});  // touches [15,30)
  set.add({40, 40});  // empty: dropped
  set.add({45, 41});  // reversed: dropped
  const std::vector<fr::busy_interval> want = {{10, 35}, {50, 60}};
  EXPECT_EQ(set.spans(), want);
  EXPECT_EQ(set.total_ns(), 35);
  EXPECT_EQ(set.covered_ns(20, 55), 15 + 5);
  EXPECT_EQ(set.covered_ns(36, 49), 0);
  const std::vector<fr::busy_interval> clipped = {{30, 35}, {50, 52}};
  EXPECT_EQ(set.clipped(30, 52).spans(), clipped);
  set.shift(-10);
  EXPECT_EQ(set.spans().front(), (fr::busy_interval{0, 25}));
  EXPECT_EQ(set.take().size(), 2u);
  EXPECT_TRUE(set.empty());
}

TEST(ConcurrencyProfile, CountsRanksWithWorkRunning) {
  std::vector<fr::busy_interval_set> ranks(3);
  ranks[0].add({0, 10});
  ranks[1].add({5, 15});
  ranks[2].add({8, 9});
  const fr::concurrency_profile p(ranks, 0, 20);
  // 0: [15,20); 1: [0,5) [10,15); 2: [5,8) [9,10); 3: [8,9).
  const std::vector<std::int64_t> want = {5, 10, 4, 1};
  EXPECT_EQ(p.time_at_count(), want);
  std::vector<double> busy;
  std::vector<double> at_once;
  p.bin({0, 10, 20}, busy, at_once);
  EXPECT_DOUBLE_EQ(busy[0], 1.0);
  EXPECT_DOUBLE_EQ(at_once[0], (10 + 5 + 1) / 10.0);
  EXPECT_DOUBLE_EQ(busy[1], 0.5);
  EXPECT_DOUBLE_EQ(at_once[1], 0.5);
}

TEST(RecordFormat, RoundTrip) {
  scratch_dir dir;
  fr::rank_identity who;
  who.producer = "unit";
  who.host = "node1";
  who.boot_id = "b";
  who.pid = 42;
  who.global_rank = 7;
  who.local_rank = 3;
  who.local_size = 8;
  who.launcher_mps = "on";
  who.launcher_gpu_uuid = "GPU-x";
  who.launcher_gpu_index = 2;
  who.command = "app with\nnewline";
  who.start_clock = {100, 200, 300};
  const std::string path = dir.file("rank-7.record");
  {
    fr::record_writer w(path, who);
    w.add_device({0, "GPU-x", "Test GPU"});
    w.append(0, fr::activity_kind::kernel, {{50, 60}, {10, 20}, {15, 30}}, {400, 500, 600});
    w.append(0, fr::activity_kind::copy, {{12, 14}}, {410, 510, 610});
    w.flush();
    w.append(0, fr::activity_kind::kernel, {{55, 70}}, {420, 520, 620});
    w.count(0, fr::activity_kind::kernel, 5);
    w.count(0, fr::activity_kind::copy, 1);
    w.count(0, fr::activity_kind::kernel, 2);
    w.alive({430, 530, 630});
    w.note("a note");
    w.finish({440, 540, 640}, 3);
  }  // the destructor flushes
  const fr::rank_record r = fr::read_record(path);
  EXPECT_EQ(r.damage, "");
  ASSERT_TRUE(r.has_identity);
  EXPECT_EQ(r.identity.global_rank, 7);
  EXPECT_EQ(r.identity.local_rank, 3);
  EXPECT_EQ(r.identity.local_size, 8);
  EXPECT_EQ(r.identity.launcher_mps, "on");
  EXPECT_EQ(r.identity.launcher_gpu_index, 2);
  EXPECT_EQ(r.identity.command, "app with newline");
  EXPECT_EQ(r.identity.start_clock.realtime_ns, 300);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].uuid, "GPU-x");
  EXPECT_EQ(r.devices[0].name, "Test GPU");
  auto activity = r.activity;
  const std::vector<fr::busy_interval> kernels = {{10, 30}, {50, 70}};
  EXPECT_EQ(activity[0].kernels.spans(), kernels);
  EXPECT_EQ(activity[0].copies.total_ns(), 2);
  EXPECT_EQ(activity[0].kernel_records, 7u);
  EXPECT_EQ(activity[0].copy_records, 1u);
  EXPECT_EQ(r.notes, std::vector<std::string>{"a note"});
  EXPECT_TRUE(r.clean_end);
  EXPECT_EQ(r.dropped_records, 3u);
  EXPECT_EQ(r.last_seen.monotonic_ns, 540);
  EXPECT_EQ(r.chunks, 11u);
}

TEST(RecordFormat, SecondProcessOfARankGetsItsOwnFile) {
  scratch_dir dir;
  fr::rank_identity who;
  who.pid = 77;
  const std::string path = dir.file("rank-0.record");
  fr::record_writer first(path, who);
  fr::record_writer second(path, who);
  EXPECT_EQ(second.path(), dir.file("rank-0.77.record"));
}

TEST(RecordFormat, ExpandPath) {
  fr::rank_identity who;
  who.pid = 9;
  who.host = "n1";
  EXPECT_EQ(fr::record_writer::expand_path("%r-%l-%p-%h-%%-%q", who), "9-9-9-n1-%-%q");
  who.local_rank = 2;
  EXPECT_EQ(fr::record_writer::expand_path("d/rank-%r.record", who), "d/rank-2.record");
  who.global_rank = 12;
  EXPECT_EQ(fr::record_writer::expand_path("d/rank-%r-%l.record", who), "d/rank-12-2.record");
}

TEST(RecordFormat, CreateFailsWithSystemError) {
  fr::rank_identity who;
  EXPECT_THROW(fr::record_writer("/nonexistent-dir/x.record", who), funnel::system_error);
}

namespace {

// A record of three interval chunks after identity and device; returns the byte offset at
// which each chunk starts.
std::vector<std::uintmax_t> write_three_chunks(const std::string& path) {
  fr::rank_identity who;
  who.global_rank = 0;
  who.start_clock = {0, 0, 0};
  std::vector<std::uintmax_t> starts;
  fr::record_writer w(path, who);
  starts.push_back(0);
  starts.push_back(w.bytes_written());
  w.add_device({0, "GPU-A", ""});
  w.flush();
  for (int i = 0; i < 3; ++i) {
    starts.push_back(w.bytes_written());
    w.append(0, fr::activity_kind::kernel, {{i * 100, i * 100 + 10}}, {i * 100 + 10, 0, 0});
    w.flush();
  }
  starts.push_back(w.bytes_written());
  return starts;
}

}  // namespace

TEST(RecordFormat, TruncatedTailKeepsWhatCameBefore) {
  scratch_dir dir;
  const std::string path = dir.file("r.record");
  const auto starts = write_three_chunks(path);
  fs::resize_file(path, starts[5] - 7);  // the last chunk loses its last 7 bytes
  const fr::rank_record r = fr::read_record(path);
  EXPECT_TRUE(r.truncated_tail);
  EXPECT_NE(r.damage.find("chunk 4 at byte " + std::to_string(starts[4]) + ": cut short"),
            std::string::npos)
      << r.damage;
  EXPECT_FALSE(r.clean_end);
  auto activity = r.activity;
  EXPECT_EQ(activity[0].kernels.total_ns(), 20);  // two of three chunks
  // Cut inside a header.
  fs::resize_file(path, starts[4] + 5);
  const fr::rank_record h = fr::read_record(path);
  EXPECT_NE(h.damage.find("cut short (5 of 24 header bytes)"), std::string::npos) << h.damage;
}

TEST(RecordFormat, DamagedChunkStopsTheReader) {
  scratch_dir dir;
  const std::string path = dir.file("r.record");
  const auto starts = write_three_chunks(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(starts[3] + 30));  // inside chunk 3's payload
    f.put('\x7f');
  }
  const fr::rank_record r = fr::read_record(path);
  EXPECT_FALSE(r.truncated_tail);
  EXPECT_EQ(r.damage, "chunk 3 at byte " + std::to_string(starts[3]) + ": checksum mismatch");
  auto activity = r.activity;
  EXPECT_EQ(activity[0].kernels.total_ns(), 10);  // chunk 2 only
  EXPECT_EQ(r.chunks, 3u);
}

// A count chunk of a kind no writer uses, or of the wrong size, stops the reader there; the
// counts before it stay.
TEST(RecordFormat, MalformedCountChunkStopsTheReader) {
  scratch_dir dir;
  fr::rank_identity who;
  who.pid = 7;
  for (const bool wrong_size : {false, true}) {
    SCOPED_TRACE(wrong_size ? "wrong size" : "unknown kind");
    const std::string path = dir.file(wrong_size ? "size.record" : "kind.record");
    std::uint64_t good_end = 0;
    {
      fr::record_writer w(path, who);
      w.count(0, fr::activity_kind::kernel, 4);
      w.flush();
      good_end = w.bytes_written();
      if (!wrong_size) w.count(0, static_cast<fr::activity_kind>(5), 1);
    }
    if (wrong_size) {  // a chunk 2 (identity, count) of type 7 whose payload lacks its count
      std::string payload;
      fr::detail::put_u32(payload, 0);
      fr::detail::put_u32(payload, 0);
      std::string chunk(fr::detail::chunk_magic, sizeof fr::detail::chunk_magic);
      fr::detail::put_u16(chunk, fr::detail::format_version);
      fr::detail::put_u16(chunk, fr::detail::chunk_counts);
      fr::detail::put_u32(chunk, static_cast<std::uint32_t>(payload.size()));
      fr::detail::put_u32(chunk, 2);
      std::uint64_t sum = fr::detail::fnv1a(chunk.data(), chunk.size());
      sum = fr::detail::fnv1a(payload.data(), payload.size(), sum);
      fr::detail::put_u64(chunk, sum);
      std::ofstream(path, std::ios::app | std::ios::binary) << chunk << payload;
    }
    const fr::rank_record r = fr::read_record(path);
    EXPECT_EQ(r.damage,
              "chunk 2 at byte " + std::to_string(good_end) + ": " +
                  (wrong_size ? "count chunk of the wrong size" : "count chunk of unknown kind 5"));
    auto activity = r.activity;
    EXPECT_EQ(activity[0].kernel_records, 4u);
  }
}

TEST(RecordFormat, NotARecordAndEmptyFile) {
  scratch_dir dir;
  std::ofstream(dir.file("junk.record")) << "hello, not a record\n";
  std::ofstream(dir.file("empty.record")).close();
  std::ofstream(dir.file("notes.txt")) << "ignored: neither .record nor the magic\n";
  const fr::rank_record junk = fr::read_record(dir.file("junk.record"));
  EXPECT_FALSE(junk.has_identity);
  EXPECT_EQ(junk.damage, "not a funnel record (no chunk magic)");
  const fr::rank_record empty = fr::read_record(dir.file("empty.record"));
  EXPECT_EQ(empty.damage, "empty file");
  EXPECT_FALSE(fr::looks_like_record(dir.file("notes.txt")));
  const auto records = fr::read_records(dir.path());
  EXPECT_EQ(records.size(), 2u);
  const fr::node_report report = fr::merge_records(records, {});
  EXPECT_TRUE(report.ranks.empty());
  ASSERT_EQ(report.damaged.size(), 2u);
  EXPECT_EQ(report.damaged[0], "empty.record: empty file");
  EXPECT_THROW((void)fr::read_records(dir.file("missing-dir")), funnel::system_error);
}

TEST(Merge, OverlapsGapsAndClockOffsets) {
  fr::merge_options options;
  options.mps = "off";
  const fr::node_report report = merge(two_ranks(), options);
  EXPECT_EQ(report.clock, "monotonic");
  expect_two_rank_figures(report);
  ASSERT_EQ(report.ranks.size(), 2u);
  EXPECT_NEAR(report.ranks[1].start_s, 1.0, 1e-9);
  EXPECT_NEAR(report.ranks[1].wall_s, 8.0, 1e-9);
  EXPECT_FALSE(report.ranks[0].ended_early);
  EXPECT_EQ(report.gpus[0].outcome.rule, fr::verdict_rule::time_sliced_busy);
  EXPECT_EQ(report.gpus[0].outcome.text,
            "the GPU was busy 50 % with 2 ranks time-sliced: --mps on lets their kernels run at "
            "once");
  bool in_flight = false;
  for (const auto& l : fr::report_lines(report, "/records")) {
    in_flight = in_flight || l.find(
                                 "ranks at once 1.0 (kernels 1.0), at most 1; in flight 1.4 "
                                 "(kernels 1.2)") != std::string::npos;
  }
  EXPECT_TRUE(in_flight);
}

TEST(Merge, TracingCostFromTheTracedRecords) {
  // 10 s job: 200000 kernels and 100000 copies on rank 0, 100000 kernels on rank 1.
  std::vector<rank_spec> specs = two_ranks();
  specs[0].kernel_records = 200000;
  specs[0].copy_records = 100000;
  specs[1].kernel_records = 100000;
  const fr::node_report report = merge(specs);
  ASSERT_EQ(report.gpus.size(), 1u);
  const fr::gpu_summary& g = report.gpus[0];
  EXPECT_EQ(g.ranks[0].traced_records, 300000u);
  EXPECT_EQ(g.ranks[1].traced_records, 100000u);
  EXPECT_EQ(g.traced_records(), 400000u);
  EXPECT_NEAR(g.traced_per_s(), 40000.0, 1e-6);
  EXPECT_NEAR(g.tracing_cost_s(), 400000 * fr::tracing_cost_per_record_s, 1e-12);
  EXPECT_NEAR(g.tracing_cost_fraction(), 400000 * fr::tracing_cost_per_record_s / 10.0, 1e-12);
  const auto tracing_line = [](const fr::node_report& r) {
    for (const auto& l : fr::report_lines(r, "/records")) {
      if (l.find("  tracing: ") == 0) return l;
    }
    return std::string();
  };
  // 0.12 s of 10 s: 1.2 %, stated.
  EXPECT_EQ(tracing_line(report),
            "  tracing: 400000 kernels and copies traced, 40000 a second; at about 0.3 us of GPU "
            "time each, --report made this job about 120.0 ms (1 %) slower (docs/report.md, "
            "Cost)");
  // Below 1 % of the job (and without counts: records of a producer without CUPTI): no line.
  specs[0].kernel_records = 10000;
  specs[0].copy_records = 0;
  specs[1].kernel_records = 0;
  EXPECT_EQ(tracing_line(merge(specs)), "");
  const nlohmann::json j = fr::to_json(report, fr::report_context{});
  EXPECT_EQ(j.at("gpus")[0].at("tracing").at("records"), 400000u);
  EXPECT_EQ(j.at("gpus")[0].at("ranks")[1].at("traced_records"), 100000u);
  EXPECT_NEAR(j.at("gpus")[0].at("tracing").at("estimated_cost_fraction").get<double>(), 0.012,
              1e-12);
}

TEST(Merge, RecordsOfDifferentBootsMeetOnRealtime) {
  auto specs = two_ranks();
  // Another boot: its monotonic clock means nothing here, its realtime clock does.
  specs[1].boot_id = "boot-2";
  specs[1].mono_shift = -4321 * s;
  fr::merge_options options;
  options.mps = "on";
  const fr::node_report report = merge(specs, options);
  EXPECT_EQ(report.clock, "realtime");
  expect_two_rank_figures(report);
}

TEST(Merge, EmptyRecordKilledRankAndMissingRanks) {
  auto specs = two_ranks();
  rank_spec idle;  // a rank that made a context and no GPU work
  idle.global_rank = 3;
  idle.local_rank = 3;
  idle.end = 4;
  idle.clean = false;  // and was killed at 4 s
  specs.push_back(idle);
  std::vector<fr::rank_record> records;
  for (const auto& r : specs) records.push_back(make_record(r));
  records.back().activity.clear();
  fr::merge_options options;
  options.expected_ranks = 5;
  options.timeline_bins = 10;
  options.mps = "on";
  const fr::node_report report = fr::merge_records(std::move(records), options);
  ASSERT_EQ(report.gpus.size(), 1u);
  const fr::gpu_summary& g = report.gpus[0];
  ASSERT_EQ(g.ranks.size(), 3u);
  EXPECT_NEAR(g.ranks[2].gpu_s, 0.0, 1e-12);
  EXPECT_TRUE(g.ranks[2].ended_early);
  EXPECT_NEAR(g.busy_fraction, 0.5, 1e-9);  // unchanged
  EXPECT_NEAR(g.rank_spread.min_s, 0.0, 1e-12);
  EXPECT_EQ(g.rank_spread.min_rank, "rank 3");
  EXPECT_EQ(report.missing, (std::vector<std::string>{"local rank 2", "local rank 4"}));
  ASSERT_EQ(report.ranks.size(), 3u);
  EXPECT_TRUE(report.ranks[2].ended_early);
  EXPECT_NEAR(report.ranks[2].end_s, 4.0, 1e-9);
  // MPS on, kernels 1.2 at once: MPS did not make them concurrent.
  EXPECT_EQ(g.outcome.rule, fr::verdict_rule::mps_serial);
  const auto lines = fr::report_lines(report, "/records");
  bool early = false;
  bool missing = false;
  for (const auto& l : lines) {
    early = early || l.find("ended early") == 0;
    missing = missing || l.find("missing: local rank 2, local rank 4") == 0;
  }
  EXPECT_TRUE(early);
  EXPECT_TRUE(missing);
}

TEST(Merge, CallersWindowAndGpuFromTheLauncher) {
  auto specs = two_ranks();
  std::vector<fr::rank_record> records;
  for (const auto& r : specs) records.push_back(make_record(r));
  // No device chunk: the GPU comes from FUNNEL_GPU_UUID.
  for (auto& r : records) {
    r.devices.clear();
    r.identity.launcher_gpu_uuid = "GPU-L";
    r.identity.launcher_gpu_index = 4;
    r.identity.launcher_mps = "on";
  }
  fr::merge_options options;
  options.job_start_realtime_ns = real_zero;
  options.job_end_realtime_ns = real_zero + 20 * s;  // the caller's window: 20 s
  const fr::node_report report = fr::merge_records(std::move(records), options);
  ASSERT_EQ(report.gpus.size(), 1u);
  EXPECT_EQ(report.gpus[0].uuid, "GPU-L");
  EXPECT_EQ(report.gpus[0].index, 4);
  EXPECT_EQ(report.gpus[0].mps, "on");  // what funnel-run told the ranks
  EXPECT_NEAR(report.wall_s, 20.0, 1e-9);
  EXPECT_NEAR(report.gpus[0].busy_fraction, 0.25, 1e-9);
}

TEST(Merge, MpsPerGpuFromWhatFunnelRunToldItsRanks) {
  auto specs = two_ranks();
  rank_spec alone;  // the only rank of GPU-B: funnel-run's --mps auto gave it no MPS
  alone.global_rank = 2;
  alone.local_rank = 2;
  alone.uuid = "GPU-B";
  alone.kernels = {{1, 2}};
  specs.push_back(alone);
  std::vector<fr::rank_record> records;
  for (const auto& r : specs) records.push_back(make_record(r));
  records[0].identity.launcher_mps = "on";
  records[1].identity.launcher_mps = "on";
  records[2].identity.launcher_mps = "off";
  const fr::node_report report = fr::merge_records(std::move(records), {});
  ASSERT_EQ(report.gpus.size(), 2u);
  EXPECT_EQ(report.gpus[0].uuid, "GPU-A");
  EXPECT_EQ(report.gpus[0].mps, "on");
  EXPECT_EQ(report.gpus[1].mps, "off");
  EXPECT_EQ(report.gpus[1].outcome.rule, fr::verdict_rule::single_rank);
}

TEST(Merge, SeveralProcessesOfOneRankAreOneRank) {
  auto specs = two_ranks();
  rank_spec again = specs[0];  // rank 0 again: a second CUDA process
  again.kernels = {{7, 8}};
  again.copies = {};
  std::vector<fr::rank_record> records;
  for (const auto& r : {specs[0], specs[1], again}) records.push_back(make_record(r));
  records[2].path = "/records/rank-0.2000.record";
  const fr::node_report report = fr::merge_records(std::move(records), {});
  ASSERT_EQ(report.ranks.size(), 2u);
  EXPECT_EQ(report.ranks[0].records.size(), 2u);
  EXPECT_NEAR(report.ranks[0].gpu_s, 5.0, 1e-9);
}

namespace {

fr::gpu_summary gpu_with(const std::string& mps, std::vector<double> rank_s, double busy_s,
                         double kernel_at_once, double wall_s = 10) {
  fr::gpu_summary g;
  g.mps = mps;
  g.wall_s = wall_s;
  g.busy_s = busy_s;
  g.busy_fraction = busy_s / wall_s;
  double sum = 0;
  for (std::size_t i = 0; i < rank_s.size(); ++i) {
    g.ranks.push_back({"rank " + std::to_string(i), rank_s[i], rank_s[i], 0, false});
    sum += rank_s[i];
  }
  g.ranks_in_flight = busy_s > 0 ? sum / busy_s : 0;
  g.kernel_ranks_in_flight = kernel_at_once;
  g.ranks_at_once = mps == "off" ? 1.0 : g.ranks_in_flight;
  g.kernel_ranks_at_once = mps == "off" ? 1.0 : kernel_at_once;
  return g;
}

}  // namespace

TEST(Verdict, EveryRule) {
  using fr::verdict_rule;
  const auto no_work = fr::decide_verdict(gpu_with("on", {0, 0}, 0, 0));
  EXPECT_EQ(no_work.rule, verdict_rule::no_work);

  const auto single = fr::decide_verdict(gpu_with("off", {3}, 3, 1));
  EXPECT_EQ(single.rule, verdict_rule::single_rank);
  EXPECT_EQ(single.text,
            "one rank kept the GPU busy 30 % of the job; more ranks per GPU (with MPS) could use "
            "the idle time");

  // 8 ranks under MPS, kernels 6.2 at once, busy 91 %.
  const auto concurrent =
      fr::decide_verdict(gpu_with("on", std::vector<double>(8, 9.1 * 6.2 / 8), 9.1, 6.2));
  EXPECT_EQ(concurrent.rule, verdict_rule::mps_concurrent);
  EXPECT_EQ(concurrent.text,
            "MPS let 6.2 ranks' kernels run at once; the GPU was busy 91 % of the job");

  // 8 ranks time-sliced, busy 23 %.
  const auto idle = fr::decide_verdict(gpu_with("off", std::vector<double>(8, 2.3 / 8), 2.3, 1.0));
  EXPECT_EQ(idle.rule, verdict_rule::time_sliced_idle);
  EXPECT_EQ(idle.text, "the GPU was busy 23 %: 8 ranks time-sliced, try --mps on");

  const auto unknown = fr::decide_verdict(gpu_with("unknown", {1, 1}, 2, 1.0));
  EXPECT_EQ(unknown.rule, verdict_rule::time_sliced_idle);
  EXPECT_EQ(unknown.text, "the GPU was busy 20 %: 2 ranks shared it, MPS unknown, try --mps on");

  const auto busy = fr::decide_verdict(gpu_with("off", {4, 4}, 8, 1.0));
  EXPECT_EQ(busy.rule, verdict_rule::time_sliced_busy);

  // 8 time-sliced ranks whose spans all cover the busy time: each waited while the others ran,
  // so none alone would have done it all.
  const auto waiting = fr::decide_verdict(gpu_with("off", std::vector<double>(8, 8.9), 8.9, 7.9));
  EXPECT_EQ(waiting.rule, verdict_rule::time_sliced_busy);
  EXPECT_EQ(waiting.text,
            "the GPU was busy 89 % with 8 ranks time-sliced (7.9 ranks' kernels in flight at "
            "once, run one at a time): --mps on lets their kernels run at once");

  // Rank 0 alone covers 95 % of the busy time; the other adds little.
  const auto enough = fr::decide_verdict(gpu_with("on", {9.5, 0.6}, 10, 1.0));
  EXPECT_EQ(enough.rule, verdict_rule::one_rank_enough);
  EXPECT_EQ(enough.text.rfind("one rank alone would have kept it as busy: fewer ranks per GPU "
                              "would lose nothing",
                              0),
            0u);

  // Perfect overlap under MPS is not "one rank enough": the ranks ran at once.
  const auto overlap = fr::decide_verdict(gpu_with("on", {10, 10, 10, 10}, 10, 4.0));
  EXPECT_EQ(overlap.rule, verdict_rule::mps_concurrent);

  const auto serial_idle = fr::decide_verdict(gpu_with("on", {1, 1}, 2, 1.0));
  EXPECT_EQ(serial_idle.rule, verdict_rule::mps_serial);
  EXPECT_EQ(serial_idle.text,
            "MPS was on, yet 1.0 ranks' kernels ran at once and the GPU was busy 20 %: the ranks "
            "give it too little work");
  EXPECT_STREQ(fr::to_string(verdict_rule::mps_serial), "mps_serial");
}

TEST(Identity, FromTheLaunchersVariables) {
  std::map<std::string, std::string> env = {{"OMPI_COMM_WORLD_RANK", "5"},
                                            {"OMPI_COMM_WORLD_SIZE", "16"},
                                            {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                            {"FUNNEL_LOCAL_RANK", "2"},
                                            {"FUNNEL_LOCAL_SIZE", "x8"},
                                            {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"},
                                            {"FUNNEL_MPS", "maybe"},
                                            {"FUNNEL_GPU_UUID", "GPU-u"},
                                            {"SLURM_JOB_ID", "99"}};
  const auto lookup = [&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  const fr::rank_identity id = fr::rank_identity::of_this_process("unit", lookup);
  EXPECT_EQ(id.global_rank, 5);
  EXPECT_EQ(id.world_size, 16);
  EXPECT_EQ(id.local_rank, 2);  // funnel-run's variable wins
  EXPECT_EQ(id.local_size, 8);  // a bad value counts as unset
  EXPECT_EQ(id.launcher_mps, "");
  EXPECT_EQ(id.launcher_gpu_uuid, "GPU-u");
  EXPECT_EQ(id.job_id, "99");
  EXPECT_EQ(id.pid, static_cast<std::int64_t>(getpid()));
  EXPECT_GT(id.process_start_monotonic_ns, 0);
  EXPECT_LE(id.process_start_monotonic_ns, fr::clock_sample::monotonic_now());
  EXPECT_EQ(id.label(), "rank 5");
}

TEST(ReportText, Formats) {
  EXPECT_EQ(fr::format_percent(0.912), "91 %");
  EXPECT_EQ(fr::format_seconds(12.345), "12.35 s");
  EXPECT_EQ(fr::format_seconds(0.0123), "12.3 ms");
  EXPECT_EQ(fr::format_seconds(4.2e-5), "42 us");
  EXPECT_EQ(fr::format_seconds(0), "0 s");
}

TEST(ReportJson, HoldsEveryFigure) {
  fr::merge_options options;
  options.mps = "off";
  const fr::node_report report = merge(two_ranks(), options);
  fr::report_context context;
  context.options = options;
  context.launcher_options = {{"policy", "packed"}};
  const nlohmann::json j = fr::to_json(report, context);
  EXPECT_EQ(j.at("gpus").size(), 1u);
  EXPECT_NEAR(j.at("gpus")[0].at("busy_fraction").get<double>(), 0.5, 1e-9);
  EXPECT_EQ(j.at("gpus")[0].at("timeline").at("busy").size(), 10u);
  EXPECT_EQ(j.at("gpus")[0].at("verdict").at("rule"), "time_sliced_busy");
  EXPECT_EQ(j.at("options").at("launcher").at("policy"), "packed");
  EXPECT_EQ(j.at("ranks").size(), 2u);
}
