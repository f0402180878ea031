// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/record_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "funnel/error.hpp"
#include "funnel/report/busy_interval_set.hpp"
#include "funnel/report/detail/record_format.hpp"

namespace funnel::report {
namespace {

// The record library is linked into the injection library, which is loaded into programs
// that have no MPI: it uses funnel's error types but not FUNNEL_SYSTEM_CHECK, whose
// definition (framework/src/core/error.cpp) needs MPI.
[[noreturn]] void fail(int errnum, const std::string& what) {
  throw system_error(what + ": " + std::strerror(errnum), errnum);
}

void put_sample(std::string& out, const clock_sample& at) {
  detail::put_i64(out, at.record_ns);
  detail::put_i64(out, at.monotonic_ns);
  detail::put_i64(out, at.realtime_ns);
}

// `path` with ".<pid>" before its extension (after the last '/'), or at its end.
std::string with_pid(const std::string& path, std::int64_t pid) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  const bool has_extension =
      dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  const std::string tag = "." + std::to_string(pid);
  return has_extension ? path.substr(0, dot) + tag + path.substr(dot) : path + tag;
}

int create(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
}

}  // namespace

record_writer::record_writer(const std::string& path, const rank_identity& who) : path_(path) {
  fd_ = create(path_);
  if (fd_ < 0 && errno == EEXIST) {
    path_ = with_pid(path, who.pid >= 0 ? who.pid : static_cast<std::int64_t>(getpid()));
    fd_ = create(path_);
  }
  if (fd_ < 0) fail(errno, "cannot create the record '" + path_ + "'");
  stage(detail::chunk_identity, detail::encode_identity(who));
  try {
    flush();
  } catch (...) {
    close();
    throw;
  }
}

record_writer::record_writer(record_writer&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      sequence_(other.sequence_),
      written_(other.written_),
      staged_(std::move(other.staged_)) {}

record_writer& record_writer::operator=(record_writer&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    sequence_ = other.sequence_;
    written_ = other.written_;
    staged_ = std::move(other.staged_);
  }
  return *this;
}

record_writer::~record_writer() { close(); }

void record_writer::close() noexcept {
  if (fd_ < 0) return;
  try {
    flush();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "funnel: record %s: %s (ignored while closing)\n", path_.c_str(),
                 e.what());
  }
  ::close(fd_);
  fd_ = -1;
}

std::string record_writer::expand_path(const std::string& pattern, const rank_identity& who) {
  const std::string pid = std::to_string(who.pid >= 0 ? who.pid : getpid());
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char code = pattern[++i];
    if (code == 'r') {
      out += who.global_rank >= 0  ? std::to_string(who.global_rank)
             : who.local_rank >= 0 ? std::to_string(who.local_rank)
                                   : pid;
    } else if (code == 'l') {
      out += who.local_rank >= 0 ? std::to_string(who.local_rank) : pid;
    } else if (code == 'p') {
      out += pid;
    } else if (code == 'h') {
      out += who.host.empty() ? std::string{"host"} : who.host;
    } else if (code == '%') {
      out += '%';
    } else {
      out += '%';
      out += code;
    }
  }
  return out;
}

void record_writer::stage(std::uint16_t type, const std::string& payload) {
  std::string header;
  header.append(detail::chunk_magic, sizeof detail::chunk_magic);
  detail::put_u16(header, detail::format_version);
  detail::put_u16(header, type);
  detail::put_u32(header, static_cast<std::uint32_t>(payload.size()));
  detail::put_u32(header, sequence_++);
  std::uint64_t sum = detail::fnv1a(header.data(), header.size());
  sum = detail::fnv1a(payload.data(), payload.size(), sum);
  detail::put_u64(header, sum);
  staged_ += header;
  staged_ += payload;
}

void record_writer::add_device(const record_device& device) {
  stage(detail::chunk_device, detail::encode_device(device));
}

void record_writer::append(std::uint32_t slot, activity_kind kind, std::vector<busy_interval> spans,
                           const clock_sample& at) {
  const std::vector<busy_interval> merged = busy_interval_set(std::move(spans)).take();
  std::size_t first = 0;
  do {
    const std::size_t count = std::min(merged.size() - first, detail::max_spans_per_chunk);
    std::string payload;
    payload.reserve(44 + 16 * count);
    detail::put_u32(payload, slot);
    detail::put_u32(payload, static_cast<std::uint32_t>(kind));
    put_sample(payload, at);
    detail::put_u64(payload, count);
    for (std::size_t i = first; i < first + count; ++i) {
      detail::put_i64(payload, merged[i].start_ns);
      detail::put_i64(payload, merged[i].end_ns);
    }
    stage(detail::chunk_intervals, payload);
    first += count;
  } while (first < merged.size());
}

void record_writer::count(std::uint32_t slot, activity_kind kind, std::uint64_t records) {
  std::string payload;
  detail::put_u32(payload, slot);
  detail::put_u32(payload, static_cast<std::uint32_t>(kind));
  detail::put_u64(payload, records);
  stage(detail::chunk_counts, payload);
}

void record_writer::alive(const clock_sample& at) {
  std::string payload;
  put_sample(payload, at);
  stage(detail::chunk_alive, payload);
}

void record_writer::note(const std::string& text) { stage(detail::chunk_note, text); }

void record_writer::finish(const clock_sample& at, std::uint64_t dropped_records) {
  std::string payload;
  put_sample(payload, at);
  detail::put_u64(payload, dropped_records);
  stage(detail::chunk_end, payload);
}

void record_writer::flush() {
  if (staged_.empty()) return;
  if (fd_ < 0) {
    staged_.clear();
    throw invalid_argument("the record '" + path_ + "' is closed");
  }
  std::string data = std::move(staged_);
  staged_.clear();
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno, "cannot write the record '" + path_ + "'");
    done += static_cast<std::size_t>(n);
    written_ += static_cast<std::uint64_t>(n);
  }
}

}  // namespace funnel::report
