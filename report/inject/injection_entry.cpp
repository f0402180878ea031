// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// libfunnel-report-inject.so's entry point. The CUDA driver loads the library named by
// CUDA_INJECTION64_PATH when the process initialises CUDA and calls InitializeInjection once;
// nothing of the app is rebuilt or relinked. With FUNNEL_REPORT_RECORD unset it records
// nothing. Variables (read once, here): FUNNEL_REPORT_RECORD (the record's path pattern,
// record_writer::expand_path), FUNNEL_REPORT_FLUSH_MS (flush period, default 1000).
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "activity_recorder.hpp"

namespace {

using funnel::report::inject::activity_recorder;

constexpr int default_flush_ms = 1000;  // a killed rank loses at most this much of its record
constexpr int min_flush_ms = 10;

activity_recorder* recorder = nullptr;

void at_exit() {
  if (recorder != nullptr) recorder->finish();
}

void in_forked_child() {
  if (recorder != nullptr) recorder->forked_child();
  recorder = nullptr;
}

int flush_period_ms() {
  const char* text = std::getenv("FUNNEL_REPORT_FLUSH_MS");
  if (text == nullptr || *text == '\0') return default_flush_ms;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < min_flush_ms || value > 3600000) {
    std::fprintf(stderr,
                 "funnel-report-inject: FUNNEL_REPORT_FLUSH_MS='%s' is not a period of %d to "
                 "3600000 ms; %d is used\n",
                 text, min_flush_ms, default_flush_ms);
    return default_flush_ms;
  }
  return static_cast<int>(value);
}

// FUNNEL_REPORT_GRAPHS: nodes (default: every kernel and copy of a CUDA graph its own span) or
// whole (a graph launch is one span: cheaper for graphs of short kernels, but the span also
// covers the graph's waits, so ranks look busy while they wait; docs/report.md).
bool whole_graphs() {
  const char* text = std::getenv("FUNNEL_REPORT_GRAPHS");
  if (text == nullptr || *text == '\0' || std::strcmp(text, "nodes") == 0) return false;
  if (std::strcmp(text, "whole") == 0) return true;
  std::fprintf(stderr,
               "funnel-report-inject: FUNNEL_REPORT_GRAPHS='%s' is not nodes or whole; nodes is "
               "used\n",
               text);
  return false;
}

}  // namespace

/// The CUDA driver's injection entry point (see the file comment). Returns 1: the app runs
/// on whatever happens here.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::atomic<bool> initialized{false};
  if (initialized.exchange(true)) return 1;
  const char* pattern = std::getenv("FUNNEL_REPORT_RECORD");
  if (pattern == nullptr || *pattern == '\0') {
    std::fprintf(stderr,
                 "funnel-report-inject: FUNNEL_REPORT_RECORD is not set; nothing is recorded\n");
    return 1;
  }
  recorder = activity_recorder::start(pattern, flush_period_ms(), whole_graphs());
  if (recorder != nullptr) {
    std::atexit(at_exit);
    pthread_atfork(nullptr, nullptr, in_forked_child);
  }
  return 1;
}
