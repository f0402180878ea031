// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// libfunnel-report-inject.so in a real CUDA program (report_inject_target, no funnel code),
// loaded by CUDA_INJECTION64_PATH: the record names the GPU, holds the kernels (within 5 % of
// their event-timed length) and copies, and ends with the end marker; a program killed mid-run
// leaves its record so far without it; without FUNNEL_REPORT_RECORD nothing is written; a
// CUDA graph's kernels are recorded node by node or, with FUNNEL_REPORT_GRAPHS=whole, as one
// span per launch, with the same kernel time; hardware timestamps are noted only where the GPU
// has them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "funnel/report/merge_records.hpp"
#include "funnel/report/read_record.hpp"

namespace fr = funnel::report;
namespace fs = std::filesystem;

namespace {

#if defined(FUNNEL_REPORT_INJECT_LIBRARY) && defined(FUNNEL_REPORT_INJECT_TARGET)
constexpr const char* library = FUNNEL_REPORT_INJECT_LIBRARY;
constexpr const char* target = FUNNEL_REPORT_INJECT_TARGET;
#else
constexpr const char* library = nullptr;  // built without CUPTI
constexpr const char* target = nullptr;
#endif

struct outcome {
  int status = -1;
  std::string output;
};

// Runs the target with the injection library and `env` ("NAME=value ..."), in `dir`.
outcome run_target(const std::string& dir, const std::string& mode, const std::string& env) {
  const std::string log = dir + "/target.log";
  const std::string command = "cd '" + dir + "' && env CUDA_INJECTION64_PATH='" + library + "' " +
                              env + " '" + target + "' " + mode + " >'" + log + "' 2>&1";
  outcome o;
  const int raw = std::system(command.c_str());
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  o.output = text.str();
  return o;
}

double kernel_ms(const std::string& output) {
  const auto at = output.find("kernel_ms=");
  return at == std::string::npos ? -1.0 : std::atof(output.c_str() + at + 10);
}

class InjectGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (library == nullptr) GTEST_SKIP() << "built without CUPTI: no injection library";
    char pattern[] = "/tmp/funnel-report-inject.XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

}  // namespace

TEST_F(InjectGpu, RecordsKernelsCopiesAndTheEnd) {
  const outcome o = run_target(dir_, "run",
                               "FUNNEL_REPORT_RECORD='" + dir_ +
                                   "/rank-%r.record' OMPI_COMM_WORLD_RANK=3 FUNNEL_LOCAL_RANK=0");
  ASSERT_EQ(o.status, 0) << o.output;
  const fr::rank_record r = fr::read_record(dir_ + "/rank-3.record");
  ASSERT_TRUE(r.has_identity) << r.damage;
  EXPECT_EQ(r.damage, "");
  EXPECT_TRUE(r.clean_end);
  EXPECT_EQ(r.identity.global_rank, 3);
  EXPECT_EQ(r.identity.producer, "cupti-inject");
  EXPECT_FALSE(r.identity.cuda_driver_version.empty());
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].uuid.rfind("GPU-", 0), 0u) << r.devices[0].uuid;
  auto activity = r.activity;
  ASSERT_EQ(activity.count(r.devices[0].slot), 1u);
  auto& slot = activity[r.devices[0].slot];
  const double recorded_ms = static_cast<double>(slot.kernels.total_ns()) * 1e-6;
  const double timed_ms = kernel_ms(o.output);
  EXPECT_NEAR(recorded_ms, timed_ms, 0.05 * timed_ms) << o.output;
  EXPECT_GT(slot.copies.total_ns(), 0);
  EXPECT_EQ(r.dropped_records, 0u);
  // Every record traced is counted: three kernels; two copies and a memset.
  EXPECT_EQ(slot.kernel_records, 3u);
  EXPECT_EQ(slot.copy_records, 3u);
  // Hardware timestamps are asked for on every GPU; before Blackwell (compute capability 10)
  // CUPTI refuses them and the record says nothing of it.
  bool hardware = false;
  for (const std::string& n : r.notes)
    hardware = hardware || n.find("hardware events") != std::string::npos;
  const auto at = o.output.find("cc_major=");
  ASSERT_NE(at, std::string::npos) << o.output;
  const int cc_major = std::atoi(o.output.c_str() + at + 9);
  std::printf("compute capability %d: hardware timestamps %s\n", cc_major, hardware ? "on" : "off");
  if (cc_major < 10) {
    EXPECT_FALSE(hardware);
  }

  const fr::node_report report = fr::merge_records(fr::read_records(dir_), {});
  ASSERT_EQ(report.gpus.size(), 1u);
  EXPECT_GT(report.gpus[0].busy_fraction, 0.0);
  EXPECT_LE(report.gpus[0].busy_fraction, 1.0);
  EXPECT_EQ(report.gpus[0].outcome.rule, fr::verdict_rule::single_rank);
}

TEST_F(InjectGpu, KilledProcessLeavesItsRecordSoFar) {
  const outcome o = run_target(
      dir_, "kill", "FUNNEL_REPORT_FLUSH_MS=200 FUNNEL_REPORT_RECORD='" + dir_ + "/k-%p.record'");
  EXPECT_EQ(o.status, 128 + 9) << o.output;
  const auto records = fr::read_records(dir_);
  ASSERT_EQ(records.size(), 1u);
  const fr::rank_record& r = records[0];
  EXPECT_FALSE(r.clean_end);
  EXPECT_EQ(r.damage, "");
  auto activity = r.activity;
  ASSERT_FALSE(activity.empty());
  const double recorded_ms =
      static_cast<double>(activity.begin()->second.kernels.total_ns()) * 1e-6;
  EXPECT_NEAR(recorded_ms, kernel_ms(o.output), 0.05 * kernel_ms(o.output));
  const fr::node_report report = fr::merge_records(records, {});
  ASSERT_EQ(report.ranks.size(), 1u);
  EXPECT_TRUE(report.ranks[0].ended_early);
}

TEST_F(InjectGpu, NothingWithoutARecordPath) {
  const outcome o = run_target(dir_, "run", "FUNNEL_REPORT_RECORD=");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("funnel-report-inject: FUNNEL_REPORT_RECORD is not set"),
            std::string::npos)
      << o.output;
  EXPECT_TRUE(fr::read_records(dir_).empty());
}

// FUNNEL_REPORT_GRAPHS: nodes (default), whole and a bad value (one line, nodes): the graph's
// kernel time is recorded either way; only whole leaves the note that says so.
TEST_F(InjectGpu, GraphsNodeByNodeOrWhole) {
  const std::string whole_note = "each CUDA graph launch recorded as one span";
  for (const std::string value : {"", "nodes", "whole", "sideways"}) {
    SCOPED_TRACE("FUNNEL_REPORT_GRAPHS=" + value);
    const std::string record = dir_ + "/graph-" + (value.empty() ? "default" : value) + ".record";
    const outcome o = run_target(
        dir_, "graph", "FUNNEL_REPORT_GRAPHS=" + value + " FUNNEL_REPORT_RECORD='" + record + "'");
    ASSERT_EQ(o.status, 0) << o.output;
    const fr::rank_record r = fr::read_record(record);
    ASSERT_TRUE(r.has_identity) << r.damage;
    EXPECT_TRUE(r.clean_end);
    auto activity = r.activity;
    ASSERT_EQ(activity.size(), 1u);
    const double recorded_ms =
        static_cast<double>(activity.begin()->second.kernels.total_ns()) * 1e-6;
    EXPECT_NEAR(recorded_ms, kernel_ms(o.output), 0.05 * kernel_ms(o.output)) << o.output;
    // Two launches of three kernels: six kernel records node by node, two launches whole.
    EXPECT_EQ(activity.begin()->second.kernel_records, value == "whole" ? 2u : 6u);
    bool noted = false;
    for (const std::string& n : r.notes) noted = noted || n.find(whole_note) != std::string::npos;
    EXPECT_EQ(noted, value == "whole");
    EXPECT_EQ(
        o.output.find("FUNNEL_REPORT_GRAPHS='sideways' is not nodes or whole; nodes is used") !=
            std::string::npos,
        value == "sideways")
        << o.output;
  }
}
