// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// report_make_records SCENARIO DIR: writes synthetic records with the writer API (as funnel's
// apps can) for report_cli_test.py, with figures known in advance (docs/report.md):
//   mps_on       4 ranks under MPS whose kernels all run in [1, 9) s of a 10 s job: busy 80 %,
//                4.0 ranks at once
//   time_sliced  4 ranks without MPS, rank r's kernel in [1 + r/2, 1.5 + r/2) s: busy 20 %,
//                1.0 at once
//   damaged      time_sliced, then rank 1's record cut short, a byte of rank 2's damaged, rank 3
//                killed (no end marker), a file that is no record; local rank 4 never wrote one
//   empty        no record at all
// report_make_records rank PATH: this process's own record at PATH, as funnel's apps would write
// it (real clocks, the launcher's identity): GPU 0 busy for the 0.2 s before the call (the fake
// app of report_launch_test.sh).
// Every process's own clock is set apart from the node's by a different offset.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "funnel/report/record_writer.hpp"

namespace fr = funnel::report;

namespace {

constexpr std::int64_t s = 1000000000;
constexpr std::int64_t mono_zero = 1000 * s;
constexpr std::int64_t real_zero = 1767225600LL * s;

struct process {
  int rank = 0;
  std::string mps = "off";
  std::vector<fr::busy_interval> kernels;  // seconds * 1e9 on the node clock, from job start
  std::vector<fr::busy_interval> copies;
  bool clean = true;
  double end_s = 10;
};

fr::clock_sample at(std::int64_t t, std::int64_t skew) {
  return {mono_zero + t - skew, mono_zero + t, real_zero + t};
}

std::uintmax_t write(const std::string& dir, const process& p) {
  const std::int64_t skew = (p.rank * 7919 + 13) * 1000003LL;  // a different zero per process
  fr::rank_identity who;
  who.producer = "report_make_records";
  who.host = "synthetic-node";
  who.boot_id = "synthetic-boot";
  who.pid = 40000 + p.rank;
  who.global_rank = p.rank;
  who.local_rank = p.rank;
  who.local_size = 5;
  who.launcher_mps = p.mps;
  who.launcher_gpu_uuid = "GPU-00000000-1111-2222-3333-444444444444";
  who.launcher_gpu_index = 0;
  who.command = "synthetic";
  who.cuda_driver_version = "13.0";
  who.process_start_monotonic_ns = mono_zero;
  who.process_start_realtime_ns = real_zero;
  who.start_clock = at(s / 10, skew);
  fr::record_writer w(dir + "/rank-" + std::to_string(p.rank) + ".record", who);
  w.add_device({0, who.launcher_gpu_uuid, "Synthetic GPU"});
  w.flush();
  auto shifted = [skew](std::vector<fr::busy_interval> spans) {
    for (auto& x : spans) {
      x.start_ns += mono_zero - skew;
      x.end_ns += mono_zero - skew;
    }
    return spans;
  };
  // Two flushes, as the injection library's periodic ones.
  const auto end = static_cast<std::int64_t>(p.end_s * 1e9);
  w.append(0, fr::activity_kind::kernel, shifted(p.kernels), at(end / 2, skew));
  w.flush();
  if (!p.copies.empty()) w.append(0, fr::activity_kind::copy, shifted(p.copies), at(end, skew));
  w.alive(at(end, skew));
  if (p.clean) w.finish(at(end, skew), 0);
  w.flush();
  return w.bytes_written();
}

std::vector<process> time_sliced() {
  std::vector<process> ps;
  for (int r = 0; r < 4; ++r) {
    process p;
    p.rank = r;
    p.kernels = {{s + r * s / 2, s + r * s / 2 + s / 2}};
    ps.push_back(p);
  }
  return ps;
}

// One record of this process, ending now, with its last 0.2 s busy.
int write_own(const std::string& path) {
  fr::rank_identity who = fr::rank_identity::of_this_process("report_make_records", std::getenv);
  who.start_clock = fr::clock_sample::take(nullptr);
  fr::record_writer w(path, who);
  w.add_device({0, who.launcher_gpu_uuid, "Synthetic GPU"});
  const std::int64_t now = fr::clock_sample::monotonic_now();
  w.append(0, fr::activity_kind::kernel, {{now - s / 5, now}}, fr::clock_sample::take(nullptr));
  w.finish(fr::clock_sample::take(nullptr), 0);
  w.flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "rank") return write_own(argv[2]);
  if (argc != 3) {
    std::cerr << "usage: report_make_records mps_on|time_sliced|damaged|empty DIR, or rank PATH\n";
    return 2;
  }
  const std::string scenario = argv[1];
  const std::string dir = argv[2];
  std::filesystem::create_directories(dir);
  if (scenario == "mps_on") {
    for (int r = 0; r < 4; ++r) {
      process p;
      p.rank = r;
      p.mps = "on";
      p.kernels = {{s, 9 * s}};
      p.copies = {{s, s + s / 10}};
      write(dir, p);
    }
  } else if (scenario == "time_sliced") {
    for (const process& p : time_sliced()) write(dir, p);
  } else if (scenario == "damaged") {
    auto ps = time_sliced();
    ps[3].clean = false;
    ps[3].end_s = 6;
    for (const process& p : ps) write(dir, p);
    const std::string cut = dir + "/rank-1.record";
    std::filesystem::resize_file(cut, std::filesystem::file_size(cut) - 5);
    std::fstream f(dir + "/rank-2.record", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    f.seekp(static_cast<std::streamoff>(f.tellg()) - 60);  // inside the last interval chunk
    f.put('\x55');
    std::ofstream(dir + "/junk.record") << "this is no record\n";
  } else if (scenario != "empty") {
    std::cerr << "report_make_records: unknown scenario '" << scenario << "'\n";
    return 2;
  }
  return 0;
}
