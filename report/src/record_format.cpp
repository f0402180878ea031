// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/detail/record_format.hpp"

#include <cstdlib>
#include <map>
#include <sstream>

namespace funnel::report::detail {
namespace {

template <typename T>
void put_le(std::string& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<char>(static_cast<unsigned char>(value >> (8 * i))));
  }
}

template <typename T>
T get_le(const unsigned char* p) noexcept {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(p[i]) << (8 * i);
  return value;
}

}  // namespace

std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t state) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    state ^= p[i];
    state *= 1099511628211ULL;
  }
  return state;
}

void put_u16(std::string& out, std::uint16_t value) { put_le(out, value); }
void put_u32(std::string& out, std::uint32_t value) { put_le(out, value); }
void put_u64(std::string& out, std::uint64_t value) { put_le(out, value); }
void put_i64(std::string& out, std::int64_t value) {
  put_le(out, static_cast<std::uint64_t>(value));
}

std::uint16_t get_u16(const unsigned char* p) noexcept { return get_le<std::uint16_t>(p); }
std::uint32_t get_u32(const unsigned char* p) noexcept { return get_le<std::uint32_t>(p); }
std::uint64_t get_u64(const unsigned char* p) noexcept { return get_le<std::uint64_t>(p); }
std::int64_t get_i64(const unsigned char* p) noexcept {
  return static_cast<std::int64_t>(get_le<std::uint64_t>(p));
}

namespace {

// A value kept on one line: line breaks and other control characters become spaces.
std::string one_line(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return out;
}

std::map<std::string, std::string> parse_lines(const std::string& payload) {
  std::map<std::string, std::string> values;
  std::istringstream in(payload);
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

bool to_int64(const std::map<std::string, std::string>& values, const char* key,
              std::int64_t& out) {
  const auto it = values.find(key);
  if (it == values.end() || it->second.empty()) return false;
  char* end = nullptr;
  const long long parsed = std::strtoll(it->second.c_str(), &end, 10);
  if (end != it->second.c_str() + it->second.size()) return false;
  out = parsed;
  return true;
}

int to_int(const std::map<std::string, std::string>& values, const char* key) {
  std::int64_t v = -1;
  return to_int64(values, key, v) && v >= INT32_MIN && v <= INT32_MAX ? static_cast<int>(v) : -1;
}

std::string text_of(const std::map<std::string, std::string>& values, const char* key) {
  const auto it = values.find(key);
  return it == values.end() ? std::string{} : it->second;
}

}  // namespace

std::string encode_identity(const rank_identity& who) {
  std::ostringstream out;
  out << "producer=" << one_line(who.producer) << '\n'
      << "host=" << one_line(who.host) << '\n'
      << "boot_id=" << one_line(who.boot_id) << '\n'
      << "pid=" << who.pid << '\n'
      << "global_rank=" << who.global_rank << '\n'
      << "world_size=" << who.world_size << '\n'
      << "local_rank=" << who.local_rank << '\n'
      << "local_size=" << who.local_size << '\n'
      << "job_id=" << one_line(who.job_id) << '\n'
      << "launcher_mps=" << one_line(who.launcher_mps) << '\n'
      << "launcher_gpu_uuid=" << one_line(who.launcher_gpu_uuid) << '\n'
      << "launcher_gpu_index=" << who.launcher_gpu_index << '\n'
      << "command=" << one_line(who.command) << '\n'
      << "process_start_monotonic_ns=" << who.process_start_monotonic_ns << '\n'
      << "process_start_realtime_ns=" << who.process_start_realtime_ns << '\n'
      << "cuda_driver_version=" << one_line(who.cuda_driver_version) << '\n'
      << "clock_record_ns=" << who.start_clock.record_ns << '\n'
      << "clock_monotonic_ns=" << who.start_clock.monotonic_ns << '\n'
      << "clock_realtime_ns=" << who.start_clock.realtime_ns << '\n';
  return out.str();
}

bool decode_identity(const std::string& payload, rank_identity& who) {
  const auto values = parse_lines(payload);
  rank_identity id;
  id.producer = text_of(values, "producer");
  id.host = text_of(values, "host");
  id.boot_id = text_of(values, "boot_id");
  if (!to_int64(values, "pid", id.pid)) id.pid = -1;
  id.global_rank = to_int(values, "global_rank");
  id.world_size = to_int(values, "world_size");
  id.local_rank = to_int(values, "local_rank");
  id.local_size = to_int(values, "local_size");
  id.job_id = text_of(values, "job_id");
  id.launcher_mps = text_of(values, "launcher_mps");
  id.launcher_gpu_uuid = text_of(values, "launcher_gpu_uuid");
  id.launcher_gpu_index = to_int(values, "launcher_gpu_index");
  id.command = text_of(values, "command");
  if (!to_int64(values, "process_start_monotonic_ns", id.process_start_monotonic_ns)) {
    id.process_start_monotonic_ns = 0;
  }
  if (!to_int64(values, "process_start_realtime_ns", id.process_start_realtime_ns)) {
    id.process_start_realtime_ns = 0;
  }
  id.cuda_driver_version = text_of(values, "cuda_driver_version");
  // Without its clock sample a record cannot be placed in time: it is no record.
  if (!to_int64(values, "clock_record_ns", id.start_clock.record_ns) ||
      !to_int64(values, "clock_monotonic_ns", id.start_clock.monotonic_ns) ||
      !to_int64(values, "clock_realtime_ns", id.start_clock.realtime_ns)) {
    return false;
  }
  who = std::move(id);
  return true;
}

std::string encode_device(const record_device& device) {
  std::ostringstream out;
  out << "slot=" << device.slot << '\n'
      << "uuid=" << one_line(device.uuid) << '\n'
      << "name=" << one_line(device.name) << '\n';
  return out.str();
}

bool decode_device(const std::string& payload, record_device& device) {
  const auto values = parse_lines(payload);
  std::int64_t slot = -1;
  if (!to_int64(values, "slot", slot) || slot < 0 || slot > UINT32_MAX) return false;
  device.slot = static_cast<std::uint32_t>(slot);
  device.uuid = text_of(values, "uuid");
  device.name = text_of(values, "name");
  return true;
}

}  // namespace funnel::report::detail
