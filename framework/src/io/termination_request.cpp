// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/io/termination_request.hpp"

#include <signal.h>

#include <atomic>
#include <csignal>

#include "funnel/error.hpp"

namespace funnel::io {
namespace {

// Process-wide because signal dispositions are: the handler may only touch lock-free atomics.
volatile std::sig_atomic_t caught_signal = 0;
std::atomic<bool> installed{false};
struct sigaction previous_term {};
struct sigaction previous_usr1 {};

extern "C" void on_termination_signal(int signal_number) {
  if (caught_signal == 0) caught_signal = signal_number;
}

}  // namespace

termination_request::termination_request() {
  FUNNEL_EXPECTS(!installed.exchange(true),
                 "only one funnel::io::termination_request may exist at a time");
  struct sigaction action {};
  action.sa_handler = on_termination_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a signal arriving during a blocking call (MPI, write) must not make it fail.
  action.sa_flags = SA_RESTART;
  if (::sigaction(SIGTERM, &action, &previous_term) != 0 ||
      ::sigaction(SIGUSR1, &action, &previous_usr1) != 0) {
    const int saved = errno;
    installed = false;
    errno = saved;
    FUNNEL_SYSTEM_CHECK(true, "sigaction", "SIGTERM/SIGUSR1");
  }
}

termination_request::~termination_request() {
  ::sigaction(SIGTERM, &previous_term, nullptr);
  ::sigaction(SIGUSR1, &previous_usr1, nullptr);
  installed = false;
}

bool termination_request::requested() const noexcept { return caught_signal != 0; }

int termination_request::signal_number() const noexcept { return caught_signal; }

bool termination_request::agreed(MPI_Comm comm) const {
  int local = requested() ? 1 : 0;
  int any = 0;
  FUNNEL_MPI_TRY(MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, comm), "termination_request");
  return any != 0;
}

void termination_request::reset() noexcept { caught_signal = 0; }

}  // namespace funnel::io
