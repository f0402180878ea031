#include "funnel/io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "funnel/error.hpp"

namespace funnel::io {
namespace {

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Closes on scope exit; close errors after a successful fsync carry no information we need.
struct fd_closer {
  int fd;
  ~fd_closer() {
    if (fd >= 0) ::close(fd);
  }
};

void sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  FUNNEL_SYSTEM_CHECK(fd < 0, "open", path);
  fd_closer closer{fd};
  FUNNEL_SYSTEM_CHECK(::fsync(fd) != 0, "fsync", path);
}

}  // namespace

void sync_file(const std::string& path) { sync_path(path, O_RDONLY); }

void sync_directory(const std::string& path) { sync_path(path, O_RDONLY | O_DIRECTORY); }

void rename_durably(const std::string& from, const std::string& to) {
  FUNNEL_SYSTEM_CHECK(std::rename(from.c_str(), to.c_str()) != 0, "rename", from + " -> " + to);
  sync_directory(parent_of(to));
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    FUNNEL_SYSTEM_CHECK(fd < 0, "open", tmp);
    fd_closer closer{fd};
    std::size_t done = 0;
    while (done < contents.size()) {
      const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
      if (n < 0 && errno == EINTR) continue;
      FUNNEL_SYSTEM_CHECK(n < 0, "write", tmp);
      done += static_cast<std::size_t>(n);
    }
    FUNNEL_SYSTEM_CHECK(::fsync(fd) != 0, "fsync", tmp);
  }
  rename_durably(tmp, path);
}

std::string read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  FUNNEL_SYSTEM_CHECK(fd < 0, "open", path);
  fd_closer closer{fd};
  std::string contents;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    FUNNEL_SYSTEM_CHECK(n < 0, "read", path);
    if (n == 0) break;
    contents.append(buffer, static_cast<std::size_t>(n));
  }
  return contents;
}

}  // namespace funnel::io
