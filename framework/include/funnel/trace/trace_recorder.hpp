// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file trace_recorder.hpp
 * @brief Collects spans per track and writes them as Chrome trace JSON (opens in Perfetto).
 */
#pragma once

#include <mpi.h>

#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

#include "funnel/trace/trace_span.hpp"

namespace funnel {

/**
 * @brief A timeline of one process: named tracks (one per stream) holding timed spans.
 *
 * Output is the Chrome trace event format: `{"traceEvents": [...]}` with one "X" (complete)
 * event per span, `ts`/`dur` in microseconds, `pid` = the process id given here (the MPI rank)
 * and `tid` = the track, plus "M" metadata events naming the process and tracks. It opens in
 * https://ui.perfetto.dev and chrome://tracing. Not thread-safe: record from one thread.
 */
class trace_recorder {
 public:
  /**
   * @brief An empty timeline whose epoch (time 0) is now.
   * @param process_name label of this process in the viewer (e.g. "funnel rank 3")
   * @param process_id the Chrome trace pid (use the MPI rank so merged traces stay apart)
   */
  explicit trace_recorder(std::string process_name = "funnel", int process_id = 0);

  /**
   * @brief The id of the track called `name`, added after the existing ones when new.
   * @param name track label, e.g. "h2d", "kernel", "d2h"
   * @return the track id (the Chrome trace tid)
   */
  int track(const std::string& name);

  /**
   * @brief Records a span.
   * @param track id from track()
   * @param name span label
   * @param start_us start, µs since the epoch (see now_us)
   * @param duration_us length in µs
   * @param args details shown with the span
   * @throw funnel::invalid_argument for an unknown track or a negative or non-finite time
   */
  void add_span(int track, std::string name, double start_us, double duration_us,
                std::vector<trace_arg> args = {});

  /**
   * @brief The current time on this timeline, for add_span().
   * @return microseconds from the epoch to now (steady clock)
   */
  [[nodiscard]] double now_us() const noexcept;
  /**
   * @brief A time point on this timeline, e.g. one taken before a span was known.
   * @param t a steady-clock time
   * @return microseconds from the epoch to `t` (negative before the epoch)
   */
  [[nodiscard]] double to_us(std::chrono::steady_clock::time_point t) const noexcept;
  /**
   * @brief The tracks added so far.
   * @return their names, indexed by track id
   */
  [[nodiscard]] const std::vector<std::string>& tracks() const noexcept { return tracks_; }
  /**
   * @brief The spans recorded so far, e.g. for tests or a summary.
   * @return the spans, in recording order
   */
  [[nodiscard]] const std::vector<trace_span>& spans() const noexcept { return spans_; }
  /// @brief Drops all spans (tracks stay).
  void clear() noexcept { spans_.clear(); }

  /**
   * @brief Writes the whole timeline as a Chrome trace JSON document.
   * @param out destination stream
   */
  void write(std::ostream& out) const;
  /**
   * @brief Writes the timeline to a file (replaced if it exists).
   * @param path file name
   * @throw funnel::system_error when the file cannot be written
   */
  void write_file(const std::string& path) const;
  /**
   * @brief Collective: rank 0 of `comm` writes every rank's timeline into one file.
   *
   * Rank 0 opens the file before the timelines are gathered; whether it could open and write
   * it is shared with every rank, so a failure throws the same error on all of them.
   * @param comm communicator whose ranks all call this
   * @param path file written by rank 0
   * @throw funnel::mpi_error on MPI failure; funnel::system_error on every rank when rank 0
   * cannot open or write the file
   */
  void write_gathered(MPI_Comm comm, const std::string& path) const;

 private:
  [[nodiscard]] std::string events_json() const;

  std::string process_name_;
  int process_id_;
  std::chrono::steady_clock::time_point epoch_;
  std::vector<std::string> tracks_;
  std::vector<trace_span> spans_;
};

}  // namespace funnel
