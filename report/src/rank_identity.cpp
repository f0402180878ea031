// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/rank_identity.hpp"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>

namespace funnel::report {
namespace {

using lookup_fn = std::function<const char*(const char*)>;

// The first of `names` that holds a whole non-negative number; -1 when none does. Anything
// else counts as unset: the identity must never stop the app it is recorded in.
int first_count(const lookup_fn& lookup, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* text = lookup(name);
    if (text == nullptr || *text == '\0') continue;
    const std::string value{text};
    if (value.find_first_not_of("0123456789") != std::string::npos || value.size() > 9) continue;
    return static_cast<int>(std::strtol(value.c_str(), nullptr, 10));
  }
  return -1;
}

std::string first_text(const lookup_fn& lookup, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* text = lookup(name);
    if (text != nullptr && *text != '\0') return text;
  }
  return {};
}

std::int64_t read_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The process's start as CLOCK_BOOTTIME ns (field 22 of /proc/self/stat, in clock ticks);
// -1 when it cannot be read.
std::int64_t process_start_boottime_ns() {
  std::ifstream in("/proc/self/stat");
  std::string text;
  if (!std::getline(in, text)) return -1;
  // The command may hold spaces and parentheses: fields are counted after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return -1;
  }
  const long ticks = sysconf(_SC_CLK_TCK);
  if (ticks <= 0) return -1;
  const long long start = std::strtoll(field.c_str(), nullptr, 10);
  return static_cast<std::int64_t>(start) * (1000000000 / ticks);
}

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

rank_identity rank_identity::of_this_process(const std::string& producer, const lookup_fn& lookup) {
  rank_identity id;
  id.producer = producer;
  utsname names{};
  if (uname(&names) == 0) id.host = names.nodename;
  id.boot_id = read_first_line("/proc/sys/kernel/random/boot_id");
  id.pid = static_cast<std::int64_t>(getpid());
  id.global_rank = first_count(lookup, {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                        "SLURM_PROCID", "MV2_COMM_WORLD_RANK", "PALS_RANKID"});
  id.world_size = first_count(lookup, {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
                                       "MV2_COMM_WORLD_SIZE", "PALS_SIZE"});
  // funnel-run's own variables first: they are what the rank was bound by.
  id.local_rank = first_count(
      lookup, {"FUNNEL_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
               "MPI_LOCALRANKID", "PALS_LOCAL_RANKID", "PMI_LOCAL_RANK", "SLURM_LOCALID"});
  id.local_size = first_count(
      lookup, {"FUNNEL_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE",
               "MPI_LOCALNRANKS", "PALS_LOCAL_SIZE", "PMI_LOCAL_SIZE"});
  id.job_id = first_text(lookup, {"FUNNEL_JOB_ID", "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID"});
  id.launcher_mps = first_text(lookup, {"FUNNEL_MPS"});
  if (id.launcher_mps != "on" && id.launcher_mps != "off") id.launcher_mps.clear();
  id.launcher_gpu_uuid = first_text(lookup, {"FUNNEL_GPU_UUID"});
  id.launcher_gpu_index = first_count(lookup, {"FUNNEL_GPU_INDEX"});
  id.command = program_invocation_short_name;

  const std::int64_t start_boot = process_start_boottime_ns();
  if (start_boot >= 0) {
    const std::int64_t boot = read_clock(CLOCK_BOOTTIME);
    const std::int64_t mono = read_clock(CLOCK_MONOTONIC);
    const std::int64_t real = read_clock(CLOCK_REALTIME);
    const std::int64_t age = boot - start_boot;
    if (age >= 0) {
      id.process_start_monotonic_ns = mono - age;
      id.process_start_realtime_ns = real - age;
    }
  }
  return id;
}

std::string rank_identity::label() const {
  if (global_rank >= 0) return "rank " + std::to_string(global_rank);
  if (local_rank >= 0) return "local rank " + std::to_string(local_rank);
  return "pid " + std::to_string(pid);
}

}  // namespace funnel::report
