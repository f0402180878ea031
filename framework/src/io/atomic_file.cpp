// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "file_system.hpp"
#include "funnel/error.hpp"
#include "funnel/ipc/unique_fd.hpp"

namespace funnel::io {
namespace {

// Links are not followed: in a directory others may write, a planted link must not redirect
// the fsync (or anything else) to a file elsewhere.
void sync_path(const std::string& path, int flags) {
  const unique_fd fd(::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
  FUNNEL_SYSTEM_CHECK(fd.get() < 0, "open", path);
  FUNNEL_SYSTEM_CHECK(::fsync(fd.get()) != 0, "fsync", path);
}

}  // namespace

void sync_file(const std::string& path) { sync_path(path, O_RDONLY); }

void sync_directory(const std::string& path) { sync_path(path, O_RDONLY | O_DIRECTORY); }

void rename_durably(const std::string& from, const std::string& to) {
  FUNNEL_SYSTEM_CHECK(std::rename(from.c_str(), to.c_str()) != 0, "rename", from + " -> " + to);
  sync_directory(detail::parent_path(to));
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string dir_path = detail::parent_path(path);
  const std::string name = detail::base_name(path);
  const std::string tmp = name + ".tmp";
  const std::string shown = path + ".tmp";
  const unique_fd dir(::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  FUNNEL_SYSTEM_CHECK(dir.get() < 0, "open", dir_path);
  // A temporary left by a killed writer (or a link planted under its name) is replaced.
  const unique_fd fd = detail::create_replacing(dir.get(), tmp, shown, 0644);
  detail::write_all(fd.get(), contents, shown);
  FUNNEL_SYSTEM_CHECK(::fsync(fd.get()) != 0, "fsync", shown);
  FUNNEL_SYSTEM_CHECK(::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0, "rename",
                      shown + " -> " + path);
  FUNNEL_SYSTEM_CHECK(::fsync(dir.get()) != 0, "fsync", dir_path);
}

}  // namespace funnel::io
