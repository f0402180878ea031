// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "stall_watchdog.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "funnel/config.hpp"
#include "funnel/error.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel::detail {
namespace {

// What /proc says of a process: the state letter after the command name.
std::string process_state(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!stat || !std::getline(stat, text)) return "has exited";
  const auto close = text.rfind(") ");
  if (close == std::string::npos || close + 2 >= text.size()) return "is in an unknown state";
  switch (text[close + 2]) {
    case 'Z':
    case 'X':
      return "has exited";
    case 'T':
    case 't':
      return "is stopped (a signal such as SIGSTOP, or a debugger)";
    case 'D':
      return "is blocked in the kernel";
    default:
      return "is running";
  }
}

std::string seconds_text(std::chrono::milliseconds t) {
  std::ostringstream out;
  out << static_cast<double>(t.count()) / 1000.0 << " s";
  return out.str();
}

// Linux stretches every sleep by the thread's timer slack (50 us by default), more than a step
// of a small grid lasts: while a wait polls, its sleeps ask for 1 us of slack, and the thread's
// own setting comes back afterwards (the app's other sleeps are not ours to change).
class precise_sleeps {
 public:
  precise_sleeps() noexcept {
#ifdef __linux__
    const int previous = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
    if (previous > 0 && prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL) == 0) previous_ = previous;
#endif
  }
  ~precise_sleeps() {
#ifdef __linux__
    if (previous_ > 0)
      (void)prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(previous_), 0UL, 0UL, 0UL);
#endif
  }
  precise_sleeps(const precise_sleeps&) = delete;
  precise_sleeps& operator=(const precise_sleeps&) = delete;
  precise_sleeps(precise_sleeps&&) = delete;
  precise_sleeps& operator=(precise_sleeps&&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace

std::chrono::microseconds poll_pause(std::chrono::microseconds previous,
                                     std::chrono::steady_clock::duration waited) noexcept {
  using std::chrono::microseconds;
  const auto relative = std::chrono::duration_cast<microseconds>(waited) / 32;
  const microseconds cap = std::clamp(relative, microseconds(16), microseconds(200));
  return std::clamp(previous * 2, microseconds(2), cap);
}

template <class Done>
void stall_watchdog::poll(const Done& done, const char* what,
                          std::chrono::microseconds spin) const {
  if (!done()) {
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + timeout_;
    // Work that advances only while this rank calls in (MPI) is tested back to back first;
    // yielding lets the ranks that share the core run meanwhile.
    const auto spin_end = std::min(start + spin, deadline);
    bool finished = false;
    while (!finished && std::chrono::steady_clock::now() < spin_end) {
      std::this_thread::yield();
      finished = done();
    }
    if (!finished) {
      const precise_sleeps timers;
      std::chrono::microseconds pause(0);
      do {
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) stalled(what);
        // Then sleeps: ranks oversubscribing the cores must not spin against each other.
        pause = poll_pause(pause, now - start);
        std::this_thread::sleep_for(pause);
      } while (!done());
    }
  }
  // A wait on the GPU that gave up lets the work end (every later wait returns at once): the
  // work being done is then no success.
  check_device();
}

void stall_watchdog::wait(const event& e) const {
  poll([&e] { return e.query(); }, "waiting for this rank's GPU work");
}

void stall_watchdog::wait(stream_view stream) const {
  if (!stream.is_cuda()) return;
#if FUNNEL_HAS_CUDA
  poll(
      [stream] {
        const cudaError_t status = cudaStreamQuery(stream.native_handle());
        if (status == cudaErrorNotReady) return false;
        FUNNEL_CUDA_TRY(status, "stall_watchdog: querying a stream");
        return true;
      },
      "waiting for this rank's GPU work");
#endif
}

void stall_watchdog::wait(MPI_Request& request) const {
  poll(
      [&request] {
        int done = 0;
        FUNNEL_MPI_TRY(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "stall_watchdog");
        return done != 0;
      },
      "waiting for the other ranks in a collective", mpi_spin);
}

void stall_watchdog::watch_device(const volatile std::uint32_t* flag,
                                  std::array<int, 6> neighbour_of_face) {
  device_flag_ = flag;
  neighbour_of_face_ = neighbour_of_face;
}

void stall_watchdog::check_device() const {
  if (device_flag_ == nullptr) return;
  const std::uint32_t face = *device_flag_;
  if (face == 0) return;
  const int rank = face <= 6 ? neighbour_of_face_[face - 1] : -1;
  stalled("on the GPU, waiting for rank " + std::to_string(rank) +
          " to write this rank's ghosts (the GPU's wait gave up; later steps' ghosts are stale)");
}

void stall_watchdog::stalled(const std::string& what) const {
  std::string message =
      "halo exchange stalled: no progress for " + seconds_text(timeout_) + " " + what;
  std::string others;
  for (const auto& p : peers_) {
    const std::string state = process_state(p.pid);
    const std::string line = "neighbour rank " + std::to_string(p.rank) + " (pid " +
                             std::to_string(p.pid) + ") " + state;
    // The neighbours that are not simply running come first: one of them stopped the job.
    if (state == "is running") {
      others += "; " + line;
    } else {
      message += "; " + line;
    }
  }
  throw stall_error(message + others +
                    " (FUNNEL_HALO_TIMEOUT sets the timeout in seconds; see docs/stencil.md)");
}

}  // namespace funnel::detail
