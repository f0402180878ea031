// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/merge_records.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "funnel/error.hpp"
#include "funnel/report/concurrency_profile.hpp"
#include "funnel/report/read_record.hpp"

namespace funnel::report {
namespace {

constexpr double ns_to_s = 1e-9;

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() &&
         text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Everything known of one rank while the records are merged.
struct rank_work {
  rank_summary summary;
  std::string launcher_gpu_uuid;
  int launcher_gpu_index = -1;
  std::string launcher_mps;  // FUNNEL_MPS as funnel-run set it for this rank ("" unknown)
  // Per GPU UUID, on the node clock: kernels and copies.
  std::map<std::string, rank_record::slot_activity> on_gpu;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// Sorts ranks as a person counts them: global rank, then local rank, then pid.
auto rank_order(const rank_summary& r) {
  return std::make_tuple(r.global_rank < 0, r.global_rank, r.local_rank < 0, r.local_rank,
                         r.pids.empty() ? 0 : r.pids.front());
}

std::string rank_key(const rank_identity& id) {
  if (id.global_rank >= 0) return "g" + std::to_string(id.global_rank);
  if (id.local_rank >= 0) return "l" + std::to_string(id.local_rank);
  return "p" + std::to_string(id.pid);
}

gpu_summary::spread spread_of(const std::vector<gpu_summary::rank_share>& ranks) {
  gpu_summary::spread s;
  if (ranks.empty()) return s;
  double sum = 0;
  std::size_t lo = 0;
  std::size_t hi = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    sum += ranks[i].gpu_s;
    if (ranks[i].gpu_s < ranks[lo].gpu_s) lo = i;
    if (ranks[i].gpu_s > ranks[hi].gpu_s) hi = i;
  }
  s.mean_s = sum / static_cast<double>(ranks.size());
  double squares = 0;
  for (const auto& r : ranks) squares += (r.gpu_s - s.mean_s) * (r.gpu_s - s.mean_s);
  const double sd = std::sqrt(squares / static_cast<double>(ranks.size()));
  s.cv = s.mean_s > 0 ? sd / s.mean_s : 0.0;
  s.min_s = ranks[lo].gpu_s;
  s.max_s = ranks[hi].gpu_s;
  s.min_rank = ranks[lo].label;
  s.max_rank = ranks[hi].label;
  return s;
}

// Without MPS the GPU runs one context at a time: whenever it is busy exactly one rank's work
// runs, however many ranks' spans overlap (docs/report.md, "Limits").
void time_sliced(gpu_summary& g) {
  const bool busy = g.busy_s > 0;
  g.ranks_at_once = busy ? 1.0 : 0.0;
  g.kernel_ranks_at_once = g.kernel_ranks_in_flight > 0 ? 1.0 : 0.0;
  g.max_ranks_at_once = busy ? 1 : 0;
  g.time_at_count_s = {g.wall_s - g.busy_s, g.busy_s};
  g.timeline_ranks_at_once = g.timeline_busy;
}

}  // namespace

std::vector<rank_record> read_records(const std::string& directory) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(directory.c_str()), closedir);
  FUNNEL_SYSTEM_CHECK(!dir, "opendir", "the record directory '" + directory + "'");
  std::vector<std::string> names;
  while (const dirent* entry = readdir(dir.get())) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = directory + "/" + name;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (ends_with(name, ".record") || looks_like_record(path)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::vector<rank_record> records;
  records.reserve(names.size());
  for (const std::string& name : names) records.push_back(read_record(directory + "/" + name));
  return records;
}

node_report merge_records(std::vector<rank_record> records, const merge_options& options) {
  node_report report;
  report.records = static_cast<int>(records.size());

  // One clock for all: CLOCK_MONOTONIC when every record comes from one boot of one machine
  // (immune to NTP steps during the job), else CLOCK_REALTIME.
  std::set<std::string> boots;
  std::set<std::string> hosts;
  bool any_boot_unknown = false;
  for (const rank_record& r : records) {
    if (!r.has_identity) continue;
    if (r.identity.boot_id.empty()) any_boot_unknown = true;
    boots.insert(r.identity.boot_id);
    hosts.insert(r.identity.host);
    if (report.host.empty()) report.host = r.identity.host;
    if (report.cuda_driver_version.empty()) {
      report.cuda_driver_version = r.identity.cuda_driver_version;
    }
  }
  const bool monotonic = boots.size() <= 1 && !any_boot_unknown;
  report.clock = monotonic ? "monotonic" : "realtime";
  if (hosts.size() > 1) {
    report.notes.push_back("the records come from " + std::to_string(hosts.size()) +
                           " hosts: the report is meant for one node's records");
  }
  auto node_time = [monotonic](const clock_sample& at) {
    return monotonic ? at.monotonic_ns : at.realtime_ns;
  };

  // Ranks: the records of one rank together, on the node clock.
  std::map<std::string, rank_work> ranks;
  std::int64_t realtime_minus_node = 0;
  bool have_offset = false;
  for (rank_record& r : records) {
    const std::string name = base_name(r.path);
    if (!r.damage.empty()) report.damaged.push_back(name + ": " + r.damage);
    if (!r.has_identity) continue;
    const rank_identity& id = r.identity;
    if (!have_offset) {
      realtime_minus_node = id.start_clock.realtime_ns - node_time(id.start_clock);
      have_offset = true;
    }
    r.clock_offset_ns = node_time(id.start_clock) - id.start_clock.record_ns;
    const std::int64_t process_start =
        monotonic ? id.process_start_monotonic_ns : id.process_start_realtime_ns;
    const std::int64_t start = process_start > 0 ? process_start : node_time(id.start_clock);
    const std::int64_t end = std::max(start, node_time(r.last_seen));

    auto [it, fresh] = ranks.try_emplace(rank_key(id));
    rank_work& w = it->second;
    rank_summary& s = w.summary;
    if (fresh) {
      s.label = id.label();
      s.global_rank = id.global_rank;
      s.local_rank = id.local_rank;
      s.command = id.command;
      w.start_ns = start;
      w.end_ns = end;
    }
    w.start_ns = std::min(w.start_ns, start);
    w.end_ns = std::max(w.end_ns, end);
    s.pids.push_back(id.pid);
    s.records.push_back(name);
    if (!r.clean_end) s.ended_early = true;
    if (!r.damage.empty()) s.damage.push_back(name + ": " + r.damage);
    for (const std::string& n : r.notes) s.notes.push_back(n);
    s.dropped_records += r.dropped_records;
    s.spans += r.spans;
    s.record_bytes += r.bytes;
    if (w.launcher_gpu_uuid.empty()) {
      w.launcher_gpu_uuid = id.launcher_gpu_uuid;
      w.launcher_gpu_index = id.launcher_gpu_index;
    }
    if (w.launcher_mps.empty()) w.launcher_mps = id.launcher_mps;

    // Which GPU each slot is: the record's device chunk; else, for a process with one slot,
    // the GPU funnel-run gave the rank; else unknown.
    std::map<std::uint32_t, std::string> uuid_of;
    for (const record_device& d : r.devices) {
      if (!d.uuid.empty()) uuid_of[d.slot] = d.uuid;
      if (!d.uuid.empty()) w.on_gpu[d.uuid];  // a GPU it used, even without work on it
    }
    for (auto& [slot, spans] : r.activity) {
      std::string uuid;
      if (const auto found = uuid_of.find(slot); found != uuid_of.end()) {
        uuid = found->second;
      } else if (r.activity.size() == 1 && !id.launcher_gpu_uuid.empty()) {
        uuid = id.launcher_gpu_uuid;
      } else {
        uuid = "unknown";
      }
      rank_record::slot_activity& into = w.on_gpu[uuid];
      spans.kernels.shift(r.clock_offset_ns);
      spans.copies.shift(r.clock_offset_ns);
      into.kernels.add(spans.kernels);
      into.copies.add(spans.copies);
      into.kernel_records += spans.kernel_records;
      into.copy_records += spans.copy_records;
    }
  }
  // A rank whose records name no GPU but whom funnel-run bound to one is on that GPU, with
  // no work (e.g. killed before its first kernel).
  for (auto& [key, w] : ranks) {
    if (w.on_gpu.empty() && !w.launcher_gpu_uuid.empty()) w.on_gpu[w.launcher_gpu_uuid];
  }

  // The wall window: what the caller says, else the first start to the last end.
  std::int64_t ws = 0;
  std::int64_t we = 0;
  bool first = true;
  for (const auto& [key, w] : ranks) {
    ws = first ? w.start_ns : std::min(ws, w.start_ns);
    we = first ? w.end_ns : std::max(we, w.end_ns);
    first = false;
  }
  if (options.job_start_realtime_ns > 0 && have_offset) {
    ws = options.job_start_realtime_ns - realtime_minus_node;
  }
  if (options.job_end_realtime_ns > 0 && have_offset) {
    we = options.job_end_realtime_ns - realtime_minus_node;
  }
  if (we < ws) we = ws;
  report.wall_s = static_cast<double>(we - ws) * ns_to_s;
  report.job_start_realtime_ns = ws + realtime_minus_node;

  // Per rank: times relative to the job's start, GPU time over all its GPUs.
  for (auto& [key, w] : ranks) {
    rank_summary& s = w.summary;
    s.start_s = static_cast<double>(w.start_ns - ws) * ns_to_s;
    s.end_s = static_cast<double>(w.end_ns - ws) * ns_to_s;
    s.wall_s = s.end_s - s.start_s;
    busy_interval_set all;
    busy_interval_set kernels;
    busy_interval_set copies;
    for (auto& [uuid, a] : w.on_gpu) {
      s.gpus.push_back(uuid);
      kernels.add(a.kernels);
      copies.add(a.copies);
    }
    all.add(kernels);
    all.add(copies);
    s.gpu_s = static_cast<double>(all.covered_ns(ws, we)) * ns_to_s;
    s.kernel_s = static_cast<double>(kernels.covered_ns(ws, we)) * ns_to_s;
    s.copy_s = static_cast<double>(copies.covered_ns(ws, we)) * ns_to_s;
  }

  // Per GPU.
  std::map<std::string, std::vector<rank_work*>> by_gpu;
  for (auto& [key, w] : ranks) {
    for (auto& [uuid, a] : w.on_gpu) by_gpu[uuid].push_back(&w);
  }
  const int bins = std::clamp(options.timeline_bins, 1, 100000);
  for (auto& [uuid, members] : by_gpu) {
    std::sort(members.begin(), members.end(), [](const rank_work* a, const rank_work* b) {
      return rank_order(a->summary) < rank_order(b->summary);
    });
    gpu_summary g;
    g.uuid = uuid;
    // MPS: the caller's word, else what funnel-run told the GPU's ranks (funnel-run's --mps
    // auto leaves a GPU of one rank without MPS while others of the node have it).
    std::set<std::string> told;
    for (const rank_work* w : members) {
      if (!w->launcher_mps.empty()) told.insert(w->launcher_mps);
    }
    g.mps = !options.mps.empty() ? options.mps : told.size() == 1 ? *told.begin() : "unknown";
    g.wall_s = report.wall_s;
    std::vector<busy_interval_set> all_sets;
    std::vector<busy_interval_set> kernel_sets;
    busy_interval_set busy;
    busy_interval_set kernel_busy;
    busy_interval_set copy_busy;
    double sum_s = 0;
    double kernel_sum_s = 0;
    for (rank_work* w : members) {
      if (w->launcher_gpu_uuid == uuid && g.index < 0) g.index = w->launcher_gpu_index;
      rank_record::slot_activity& a = w->on_gpu[uuid];
      busy_interval_set kernels = a.kernels.clipped(ws, we);
      busy_interval_set copies = a.copies.clipped(ws, we);
      busy_interval_set both = kernels;
      both.add(copies);
      gpu_summary::rank_share share;
      share.label = w->summary.label;
      share.gpu_s = static_cast<double>(both.total_ns()) * ns_to_s;
      share.kernel_s = static_cast<double>(kernels.total_ns()) * ns_to_s;
      share.copy_s = static_cast<double>(copies.total_ns()) * ns_to_s;
      share.ended_early = w->summary.ended_early;
      share.traced_records = a.kernel_records + a.copy_records;
      sum_s += share.gpu_s;
      kernel_sum_s += share.kernel_s;
      g.ranks.push_back(share);
      busy.add(both);
      kernel_busy.add(kernels);
      copy_busy.add(copies);
      all_sets.push_back(std::move(both));
      kernel_sets.push_back(std::move(kernels));
    }
    g.busy_s = static_cast<double>(busy.total_ns()) * ns_to_s;
    const double kernel_s = static_cast<double>(kernel_busy.total_ns()) * ns_to_s;
    if (g.wall_s > 0) {
      g.busy_fraction = g.busy_s / g.wall_s;
      g.kernel_busy_fraction = kernel_s / g.wall_s;
      g.copy_busy_fraction = static_cast<double>(copy_busy.total_ns()) * ns_to_s / g.wall_s;
    }
    g.ranks_in_flight = g.busy_s > 0 ? sum_s / g.busy_s : 0.0;
    g.kernel_ranks_in_flight = kernel_s > 0 ? kernel_sum_s / kernel_s : 0.0;
    const concurrency_profile profile(std::move(all_sets), ws, we);
    const std::vector<std::int64_t> at_count = profile.time_at_count();
    for (std::size_t k = 0; k < at_count.size(); ++k) {
      g.time_at_count_s.push_back(static_cast<double>(at_count[k]) * ns_to_s);
      if (at_count[k] > 0 && k > 0) g.max_ranks_in_flight = static_cast<int>(k);
    }
    g.rank_spread = spread_of(g.ranks);
    std::vector<std::int64_t> edges;
    for (int i = 0; i <= bins; ++i) {
      edges.push_back(ws + static_cast<std::int64_t>(static_cast<long double>(we - ws) * i / bins));
    }
    g.timeline_bin_s = report.wall_s / bins;
    profile.bin(edges, g.timeline_busy, g.timeline_ranks_at_once);
    g.ranks_at_once = g.ranks_in_flight;
    g.kernel_ranks_at_once = g.kernel_ranks_in_flight;
    g.max_ranks_at_once = g.max_ranks_in_flight;
    if (g.mps == "off") time_sliced(g);
    report.gpus.push_back(std::move(g));
  }
  // Names of the GPUs from any record's device chunk.
  for (const rank_record& r : records) {
    for (const record_device& d : r.devices) {
      for (gpu_summary& g : report.gpus) {
        if (g.uuid == d.uuid && g.name.empty()) g.name = d.name;
      }
    }
  }
  std::sort(report.gpus.begin(), report.gpus.end(), [](const gpu_summary& a, const gpu_summary& b) {
    return std::make_tuple(a.index < 0, a.index, a.uuid) <
           std::make_tuple(b.index < 0, b.index, b.uuid);
  });
  for (gpu_summary& g : report.gpus) g.outcome = decide_verdict(g);

  for (auto& [key, w] : ranks) report.ranks.push_back(std::move(w.summary));
  std::sort(
      report.ranks.begin(), report.ranks.end(),
      [](const rank_summary& a, const rank_summary& b) { return rank_order(a) < rank_order(b); });

  // Missing: the local ranks 0..n-1 that left no record.
  if (options.expected_ranks > 0) {
    std::set<int> seen;
    bool all_known = true;
    for (const rank_summary& s : report.ranks) {
      if (s.local_rank >= 0) {
        seen.insert(s.local_rank);
      } else {
        all_known = false;
      }
    }
    if (all_known) {
      for (int k = 0; k < options.expected_ranks; ++k) {
        if (seen.count(k) == 0) report.missing.push_back("local rank " + std::to_string(k));
      }
    } else if (static_cast<int>(report.ranks.size()) < options.expected_ranks) {
      report.missing.push_back(
          std::to_string(options.expected_ranks - static_cast<int>(report.ranks.size())) +
          " ranks (which ones is unknown: records without a local rank)");
    }
  }
  for (const rank_summary& s : report.ranks) {
    if (s.dropped_records > 0) {
      report.notes.push_back(s.label + ": CUPTI dropped " + std::to_string(s.dropped_records) +
                             " activity records: its figures undercount");
    }
    for (const std::string& n : s.notes) report.notes.push_back(s.label + ": " + n);
  }
  return report;
}

}  // namespace funnel::report
