// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "private_directory.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "funnel/error.hpp"

namespace funnel::detail {
namespace {

std::string octal(unsigned mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", mode);
  return text;
}

}  // namespace

void check_private_directory(const std::string& dir, const std::string& what) {
  struct stat info {};
  FUNNEL_SYSTEM_CHECK(::lstat(dir.c_str(), &info) != 0, "lstat", what + " '" + dir + "'");
  FUNNEL_EXPECTS(S_ISDIR(info.st_mode),
                 what + " '" + dir + "' exists but is not a directory (or is a symlink)");
  FUNNEL_EXPECTS(info.st_uid == ::geteuid(),
                 what + " '" + dir + "' is owned by uid " + std::to_string(info.st_uid) +
                     ", not by this user (uid " + std::to_string(::geteuid()) + "); refusing it");
  FUNNEL_EXPECTS((info.st_mode & 077) == 0,
                 what + " '" + dir + "' has mode " + octal(info.st_mode & 07777) +
                     ": group/other permissions are not allowed (expected 0700); refusing it");
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace funnel::detail
