// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The stall watchdog's polls: how long they sleep, that a wait polling on another rank
// returns, and that a collective's wait, which tests back to back first, still times out. Its look
// at the word a GPU wait writes when it gives up (kernel signals): every wait checks it, even one
// whose work is already done (a wait that gave up lets the work end), and the error names the
// neighbour across the face. Host backend: the word is plain memory here, as the pinned word is to
// the host on CUDA.
#include "stall_watchdog.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/prctl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "funnel/error.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace {

using funnel::detail::poll_pause;
using funnel::detail::stall_watchdog;
using std::chrono::microseconds;

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

// The sleeps of a poll: 2, 4, 8, 16 us, then no longer than 16 us while the wait is young (a
// step of a small grid), growing with the wait up to 200 us.
TEST(StallWatchdog, PollSleepsDoubleUpToABoundThatGrowsWithTheWait) {
  EXPECT_EQ(poll_pause(microseconds(0), microseconds(0)), microseconds(2));
  EXPECT_EQ(poll_pause(microseconds(2), microseconds(3)), microseconds(4));
  EXPECT_EQ(poll_pause(microseconds(8), microseconds(20)), microseconds(16));
  EXPECT_EQ(poll_pause(microseconds(16), microseconds(130)), microseconds(16));
  EXPECT_EQ(poll_pause(microseconds(16), microseconds(1600)), microseconds(32));
  EXPECT_EQ(poll_pause(microseconds(32), microseconds(1600)), microseconds(50));
  EXPECT_EQ(poll_pause(microseconds(200), std::chrono::seconds(5)), microseconds(200));
  microseconds pause(0);
  microseconds waited(0);
  for (int i = 0; i < 1000; ++i) {
    pause = poll_pause(pause, waited);
    EXPECT_LE(pause, std::max(microseconds(16), waited / 32))
        << "after " << waited.count() << " us";
    waited += pause;
  }
  EXPECT_EQ(pause, microseconds(200));
}

// A wait that polls (rank 1 joins the barrier 5 ms late) returns once the collective completes,
// and leaves the thread's timer slack as it found it.
TEST(StallWatchdog, PollingWaitReturnsAndRestoresTheTimerSlack) {
  const int before = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
  const stall_watchdog w(std::chrono::seconds(30), {});
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(MPI_Ibarrier(MPI_COMM_WORLD, &request), MPI_SUCCESS);
  EXPECT_NO_THROW(w.wait(request));
  EXPECT_EQ(request, MPI_REQUEST_NULL);
  EXPECT_EQ(prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL), before);
}

// Rank 0 gives the barrier 2 ms (its wait tests back to back for the first 1 ms), and rank 1
// joins only after rank 0's wait has given up: the wait must throw stall_error, whatever the
// load, and the barrier then completes for both.
TEST(StallWatchdog, CollectiveWaitTimesOutAfterItsSpin) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ASSERT_LT(stall_watchdog::mpi_spin, std::chrono::milliseconds(2));
  int token = 0;
  if (rank == 1) {
    ASSERT_EQ(MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
  }
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(MPI_Ibarrier(MPI_COMM_WORLD, &request), MPI_SUCCESS);
  if (rank == 0) {
    const stall_watchdog impatient(std::chrono::milliseconds(2), {});
    EXPECT_THROW(impatient.wait(request), funnel::stall_error);
    EXPECT_NE(request, MPI_REQUEST_NULL);
    ASSERT_EQ(MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD), MPI_SUCCESS);
  }
  const stall_watchdog w(std::chrono::seconds(30), {});
  EXPECT_NO_THROW(w.wait(request));
  EXPECT_EQ(request, MPI_REQUEST_NULL);
}

}  // namespace
