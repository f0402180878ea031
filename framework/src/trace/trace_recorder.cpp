#include "funnel/trace/trace_recorder.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "funnel/detail/json_escape.hpp"
#include "funnel/error.hpp"

namespace funnel {
namespace {

// Microseconds with nanosecond resolution, never in exponent form (viewers expect plain numbers).
std::string micros(double us) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", us);
  return text;
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
  std::ostringstream out;
  const std::string pid = std::to_string(process_id_);
  out << R"({"name":"process_name","ph":"M","pid":)" << pid << R"(,"args":{"name":)"
      << detail::json_quote(process_name_) << "}}";
  for (std::size_t t = 0; t < tracks_.size(); ++t) {
    out << ",\n"
        << R"({"name":"thread_name","ph":"M","pid":)" << pid << ",\"tid\":" << t
        << R"(,"args":{"name":)" << detail::json_quote(tracks_[t]) << "}},\n"
        << R"({"name":"thread_sort_index","ph":"M","pid":)" << pid << ",\"tid\":" << t
        << R"(,"args":{"sort_index":)" << t << "}}";
  }
  for (const auto& span : spans_) {
    out << ",\n{\"name\":" << detail::json_quote(span.name) << R"(,"cat":"funnel","ph":"X","pid":)"
        << pid << ",\"tid\":" << span.track << ",\"ts\":" << micros(span.start_us)
        << ",\"dur\":" << micros(span.duration_us) << ",\"args\":{";
    for (std::size_t a = 0; a < span.args.size(); ++a) {
      out << (a == 0 ? "" : ",") << detail::json_quote(span.args[a].key) << ":"
          << span.args[a].value;
    }
    out << "}}";
  }
  return out.str();
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
  if (rank != 0) return;
  std::vector<std::string> fragments;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    fragments.emplace_back(all.data() + displacements[r], static_cast<std::size_t>(lengths[r]));
  }
  write_document_file(path, fragments);
}

}  // namespace funnel
