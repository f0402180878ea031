// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The stall watchdog's look at the word a GPU wait writes when it gives up (kernel signals):
// every wait checks it, even one whose work is already done (a wait that gave up lets the work
// end), and the error names the neighbour across the face. Host backend: the word is plain memory
// here, as the pinned word is to the host on CUDA.
#include "stall_watchdog.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include "funnel/error.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace {

using funnel::detail::stall_watchdog;

funnel::event done_event() {
  funnel::event e(funnel::backend_kind::host);
  e.record(funnel::stream_view::host());
  return e;
}

TEST(StallWatchdog, WaitsPassWhileNoGpuWaitGaveUp) {
  stall_watchdog w(std::chrono::seconds(1), {});
  std::uint32_t word = 0;
  w.watch_device(&word, {-1, -1, 4, 5, -1, -1});
  EXPECT_NO_THROW(w.wait(done_event()));
  EXPECT_NO_THROW(w.check_device());
}

TEST(StallWatchdog, GpuWaitThatGaveUpNamesTheNeighbour) {
  stall_watchdog w(std::chrono::seconds(1), {});
  std::uint32_t word = 0;
  w.watch_device(&word, {-1, -1, 4, 5, -1, -1});
  word = 4;  // face 3 (y upper) + 1: rank 5 never wrote this rank's ghosts
  try {
    w.wait(done_event());
    ADD_FAILURE() << "a wait passed although the GPU's wait gave up";
  } catch (const funnel::stall_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("waiting for rank 5"), std::string::npos) << what;
    EXPECT_NE(what.find("on the GPU"), std::string::npos) << what;
  }
  EXPECT_THROW(w.check_device(), funnel::stall_error);
}

TEST(StallWatchdog, WithoutAWatchedWordNothingIsChecked) {
  const stall_watchdog w(std::chrono::seconds(1), {});
  EXPECT_NO_THROW(w.check_device());
  EXPECT_NO_THROW(w.wait(done_event()));
}

}  // namespace
