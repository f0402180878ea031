// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/io/directory_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <utility>

#include "file_system.hpp"
#include "funnel/error.hpp"
#include "funnel/ipc/unique_fd.hpp"

namespace funnel::io {
namespace {

constexpr int max_attempts = 4;

std::string host_name() {
  char name[256] = {};
  FUNNEL_SYSTEM_CHECK(::gethostname(name, sizeof name - 1) != 0, "gethostname", "lock owner");
  return name;
}

struct lock_owner {
  std::string host;
  long pid = -1;
};

// Parses "host=<h>\npid=<p>\n"; pid stays -1 when the file is not in that form.
lock_owner parse_owner(const std::string& contents) {
  lock_owner owner;
  std::size_t start = 0;
  while (start < contents.size()) {
    auto end = contents.find('\n', start);
    if (end == std::string::npos) end = contents.size();
    const std::string line = contents.substr(start, end - start);
    if (line.rfind("host=", 0) == 0) owner.host = line.substr(5);
    if (line.rfind("pid=", 0) == 0) {
      try {
        owner.pid = std::stol(line.substr(4));
      } catch (const std::exception&) {
        owner.pid = -1;
      }
    }
    start = end + 1;
  }
  return owner;
}

// kill(pid, 0) also succeeds for a zombie (a killed process nobody reaped yet, common when the
// launcher died too), so a zombie counts as dead.
bool process_alive(long pid) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  const auto paren = text.rfind(')');
  return !(paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z');
}

// Lock files are a few dozen bytes.
constexpr std::size_t max_lock_bytes = 4096;

// A leftover of this name (e.g. of an earlier process with the same pid) is replaced.
void write_private_file(int dir, const std::string& name, const std::string& shown,
                        const std::string& contents) {
  const unique_fd fd = detail::create_replacing(dir, name, shown, 0644);
  detail::write_all(fd.get(), contents, shown);
}

std::string read_lock(int dir, const std::string& name, const std::string& shown) {
  return detail::read_regular_at(dir, name, shown, max_lock_bytes, false);
}

std::string describe(const lock_owner& owner) {
  return "pid " + std::to_string(owner.pid) + " on host '" + detail::excerpt(owner.host) + "'";
}

}  // namespace

directory_lock::directory_lock(const std::string& directory) : path_(directory + "/" + file_name) {
  // Every name below is opened relative to the directory, opened once, and never through a link.
  directory_fd_.reset(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  FUNNEL_SYSTEM_CHECK(!directory_fd_, "open", directory);
  acquire(directory);
}

void directory_lock::acquire(const std::string& directory) {
  const int dir = directory_fd_.get();
  const std::string host = host_name();
  const long self = static_cast<long>(::getpid());
  contents_ = "host=" + host + "\npid=" + std::to_string(self) + "\n";
  // Created under a private name and hard-linked to the lock name: link() fails atomically when
  // the name exists (also on NFS, unlike O_EXCL on old clients) and the lock is never seen
  // half-written.
  const std::string mine = std::string(file_name) + "." + host + "." + std::to_string(self);
  write_private_file(dir, mine, directory + "/" + mine, contents_);
  struct unlink_on_exit {
    int dir;
    const std::string& name;
    ~unlink_on_exit() { ::unlinkat(dir, name.c_str(), 0); }
  } cleanup{dir, mine};

  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    if (::linkat(dir, mine.c_str(), dir, file_name, 0) == 0) {
      FUNNEL_SYSTEM_CHECK(::fsync(dir) != 0, "fsync", directory);
      return;
    }
    FUNNEL_SYSTEM_CHECK(errno != EEXIST, "link", mine + " -> " + path_);
    std::string held;
    try {
      held = read_lock(dir, file_name, path_);
    } catch (const system_error& e) {
      if (e.errnum() == ENOENT) continue;  // released meanwhile: try again
      throw;
    } catch (const error& e) {
      throw error("directory '" + directory + "' cannot be locked: " + e.what() +
                  "; remove it if no run uses the directory");
    }
    const lock_owner owner = parse_owner(held);
    if (owner.pid <= 0) {
      throw error("directory '" + directory + "' is locked by '" + path_ +
                  "', whose contents are not 'host=...\\npid=...': remove it if no run uses " +
                  "the directory");
    }
    if (owner.host != host) {
      throw error("directory '" + directory + "' is in use by " + describe(owner) +
                  " (lock file '" + path_ + "'); a process on another host cannot be checked: " +
                  "if that run is gone, remove the lock file");
    }
    if (process_alive(owner.pid)) {
      throw error("directory '" + directory + "' is in use by another run: " + describe(owner) +
                  " holds '" + path_ + "'; two runs must not write the same checkpoint directory");
    }
    // Stale. Move it aside first so that of two processes taking it over only one succeeds; if
    // what we moved is not the stale lock we judged (someone took over in between), put it back.
    const std::string aside = mine + ".stale";
    if (::renameat(dir, file_name, dir, aside.c_str()) != 0) {
      FUNNEL_SYSTEM_CHECK(errno != ENOENT, "rename", path_ + " -> " + aside);
      continue;
    }
    std::string moved;
    try {
      moved = read_lock(dir, aside, directory + "/" + aside);
    } catch (const error&) {
      moved.clear();
    }
    if (moved != held) {
      (void)::linkat(dir, aside.c_str(), dir, file_name,
                     0);  // fails only if a third process locked it
    } else {
      took_over_ = true;
    }
    ::unlinkat(dir, aside.c_str(), 0);
  }
  throw error("could not take the lock '" + path_ + "' after " + std::to_string(max_attempts) +
              " attempts: other processes keep taking it");
}

directory_lock::~directory_lock() { release(); }

directory_lock::directory_lock(directory_lock&& other) noexcept
    : path_(std::exchange(other.path_, {})),
      contents_(std::exchange(other.contents_, {})),
      directory_fd_(std::move(other.directory_fd_)),
      took_over_(other.took_over_) {}

directory_lock& directory_lock::operator=(directory_lock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::exchange(other.path_, {});
    contents_ = std::exchange(other.contents_, {});
    directory_fd_ = std::move(other.directory_fd_);
    took_over_ = other.took_over_;
  }
  return *this;
}

void directory_lock::release() noexcept {
  if (path_.empty()) return;
  try {
    // Only remove the file if it is still ours: never delete a lock someone else took over.
    if (read_lock(directory_fd_.get(), file_name, path_) == contents_) {
      if (::unlinkat(directory_fd_.get(), file_name, 0) != 0) {
        funnel::detail::log_error("could not remove lock file '" + path_ + "'");
      }
    } else {
      funnel::detail::log_error("lock file '" + path_ +
                                "' no longer names this process; left in place");
    }
  } catch (const std::exception& e) {
    funnel::detail::log_error(std::string("releasing lock: ") + e.what());
  }
  path_.clear();
  directory_fd_.reset();
}

}  // namespace funnel::io
