// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/ipc/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "funnel/error.hpp"

namespace funnel {
namespace {

void close_logged(int fd) noexcept {
  if (fd < 0) return;
  // Linux releases the descriptor even when close reports EINTR, so never retry.
  if (::close(fd) != 0 && errno != EINTR) {
    detail::log_error("close(" + std::to_string(fd) + ") failed: " + std::strerror(errno));
  }
}

}  // namespace

unique_fd::~unique_fd() { close_logged(fd_); }

unique_fd& unique_fd::operator=(unique_fd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

int unique_fd::release() noexcept { return std::exchange(fd_, -1); }

void unique_fd::reset(int fd) noexcept {
  if (fd == fd_) return;
  close_logged(std::exchange(fd_, fd));
}

unique_fd unique_fd::duplicate() const {
  FUNNEL_EXPECTS(valid(), "unique_fd::duplicate on an empty unique_fd");
  const int copy = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  FUNNEL_SYSTEM_CHECK(copy < 0, "fcntl(F_DUPFD_CLOEXEC)", "fd " + std::to_string(fd_));
  return unique_fd(copy);
}

}  // namespace funnel
