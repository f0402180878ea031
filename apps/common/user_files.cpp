// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "user_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli_support.hpp"
#include "funnel/error.hpp"
#include "funnel/ipc/unique_fd.hpp"

namespace funnel::app {
namespace {

/// What a file that can never take the output is, or null.
const char* unwritable_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return nullptr;
}

}  // namespace

void check_output_file(const std::string& option, const std::string& path) {
  const auto refuse = [&](const std::string& why) {
    throw invalid_argument(option + " " + not_valid(path, "a writable file (" + why + ")"));
  };
  struct stat info {};
  const bool exists = ::stat(path.c_str(), &info) == 0;
  if (const char* kind = exists ? unwritable_kind(info.st_mode) : nullptr) {
    refuse(std::string("it is ") + kind);
  }
  // O_NONBLOCK: a device that would block an open is refused by the open, not waited for.
  const unique_fd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644));
  if (!fd) refuse(std::strerror(errno));
  if (!exists) ::unlink(path.c_str());
}

}  // namespace funnel::app
