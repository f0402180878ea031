// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/trace/trace_recorder.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "funnel/error.hpp"

namespace funnel {
namespace {

using json = nlohmann::ordered_json;

// Microseconds rounded to nanoseconds: the shortest text of such a number has at most three
// decimals, so a long trace stays compact.
double micros(double us) { return std::round(us * 1000.0) / 1000.0; }

// Appends one event to a comma-separated list (one event per line). Invalid UTF-8 in a name
// becomes U+FFFD rather than an exception while a trace is written.
void append_event(std::string& out, const json& event) {
  if (!out.empty()) out += ",\n";
  out += event.dump(-1, ' ', false, json::error_handler_t::replace);
}

void write_document(std::ostream& out, const std::vector<std::string>& fragments) {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  for (const auto& fragment : fragments) {
    if (fragment.empty()) continue;
    if (!first) out << ",\n";
    out << fragment;
    first = false;
  }
  out << "\n]}\n";
}

void write_document_file(const std::string& path, const std::vector<std::string>& fragments) {
  std::ofstream file(path, std::ios::out | std::ios::trunc);
  FUNNEL_SYSTEM_CHECK(!file, "open", "trace file '" + path + "'");
  write_document(file, fragments);
  file.flush();
  FUNNEL_SYSTEM_CHECK(!file, "write", "trace file '" + path + "'");
}

// Collective: rank 0's errno (0: success) goes to every rank, which all throw the same
// funnel::system_error when it is not 0.
void agree_on_failure(MPI_Comm comm, int failure, const char* call, const std::string& path) {
  FUNNEL_MPI_TRY(MPI_Bcast(&failure, 1, MPI_INT, 0, comm), "trace_recorder::write_gathered");
  if (failure != 0) {
    throw system_error(
        "trace file '" + path + "': " + call + " failed on rank 0: " + std::strerror(failure),
        failure);
  }
}

}  // namespace

trace_recorder::trace_recorder(std::string process_name, int process_id)
    : process_name_(std::move(process_name)),
      process_id_(process_id),
      epoch_(std::chrono::steady_clock::now()) {}

int trace_recorder::track(const std::string& name) {
  for (std::size_t i = 0; i < tracks_.size(); ++i) {
    if (tracks_[i] == name) return static_cast<int>(i);
  }
  tracks_.push_back(name);
  return static_cast<int>(tracks_.size() - 1);
}

void trace_recorder::add_span(int track, std::string name, double start_us, double duration_us,
                              std::vector<trace_arg> args) {
  FUNNEL_EXPECTS(track >= 0 && track < static_cast<int>(tracks_.size()),
                 "track " + std::to_string(track) + " is unknown: this recorder has " +
                     std::to_string(tracks_.size()) + " tracks (ids from track())");
  FUNNEL_EXPECTS(std::isfinite(start_us) && std::isfinite(duration_us) && duration_us >= 0.0,
                 "span '" + name + "' has start " + std::to_string(start_us) + " us and duration " +
                     std::to_string(duration_us) + " us: both must be finite, duration >= 0");
  spans_.push_back(trace_span{std::move(name), track, start_us, duration_us, std::move(args)});
}

double trace_recorder::now_us() const noexcept { return to_us(std::chrono::steady_clock::now()); }

double trace_recorder::to_us(std::chrono::steady_clock::time_point t) const noexcept {
  return std::chrono::duration<double, std::micro>(t - epoch_).count();
}

std::string trace_recorder::events_json() const {
  std::string out;
  append_event(out, {{"name", "process_name"},
                     {"ph", "M"},
                     {"pid", process_id_},
                     {"args", {{"name", process_name_}}}});
  for (std::size_t t = 0; t < tracks_.size(); ++t) {
    append_event(out, {{"name", "thread_name"},
                       {"ph", "M"},
                       {"pid", process_id_},
                       {"tid", t},
                       {"args", {{"name", tracks_[t]}}}});
    append_event(out, {{"name", "thread_sort_index"},
                       {"ph", "M"},
                       {"pid", process_id_},
                       {"tid", t},
                       {"args", {{"sort_index", t}}}});
  }
  // One event object, its members overwritten per span: no allocation of the keys per span.
  json event = {{"name", ""}, {"cat", "funnel"}, {"ph", "X"},  {"pid", process_id_},
                {"tid", 0},   {"ts", 0.0},       {"dur", 0.0}, {"args", json::object()}};
  for (const auto& span : spans_) {
    event["name"] = span.name;
    event["tid"] = span.track;
    event["ts"] = micros(span.start_us);
    event["dur"] = micros(span.duration_us);
    json& args = event["args"];
    args.clear();
    for (const auto& arg : span.args) args[arg.key] = arg.value;
    append_event(out, event);
  }
  return out;
}

void trace_recorder::write(std::ostream& out) const { write_document(out, {events_json()}); }

void trace_recorder::write_file(const std::string& path) const {
  write_document_file(path, {events_json()});
}

void trace_recorder::write_gathered(MPI_Comm comm, const std::string& path) const {
  int rank = 0;
  int size = 1;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &rank), "trace_recorder::write_gathered");
  FUNNEL_MPI_TRY(MPI_Comm_size(comm, &size), "trace_recorder::write_gathered");
  // Rank 0 opens the file before anything is gathered, and every rank learns whether it could:
  // a path that cannot be written fails the call on every rank, so none is left waiting in a
  // collective that rank 0 never reaches.
  std::ofstream file;
  int failure = 0;
  if (rank == 0) {
    file.open(path, std::ios::out | std::ios::trunc);
    if (!file) failure = errno != 0 ? errno : EIO;
  }
  agree_on_failure(comm, failure, "open", path);

  const std::string mine = events_json();
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(rank == 0 ? size : 0));
  FUNNEL_MPI_TRY(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm),
                 "trace_recorder::write_gathered lengths");
  std::vector<int> displacements(lengths.size());
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    displacements[r] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[r]);
  }
  std::vector<char> all(total);
  FUNNEL_MPI_TRY(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                             displacements.data(), MPI_CHAR, 0, comm),
                 "trace_recorder::write_gathered events");
  if (rank == 0) {
    std::vector<std::string> fragments;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      fragments.emplace_back(all.data() + displacements[r], static_cast<std::size_t>(lengths[r]));
    }
    errno = 0;
    write_document(file, fragments);
    file.flush();
    if (!file) failure = errno != 0 ? errno : EIO;
  }
  // A full disk is the job's error too: every rank throws it.
  agree_on_failure(comm, failure, "write", path);
}

}  // namespace funnel
