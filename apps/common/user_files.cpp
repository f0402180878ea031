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

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

std::string read_input_file(const std::string& option, const std::string& path,
                            std::size_t max_bytes) {
  const std::string expected = "a regular file of at most " + std::to_string(max_bytes) + " bytes";
  const auto refuse = [&](const std::string& why) {
    throw invalid_argument(option + " " + not_valid(path, expected + " (" + why + ")"));
  };
  if (path.empty()) refuse("empty path");
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type check below refuses it.
  const unique_fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd) refuse(std::strerror(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) refuse(std::strerror(errno));
  if (!S_ISREG(info.st_mode)) refuse(kind_of(info.st_mode));
  if (static_cast<std::size_t>(info.st_size) > max_bytes) {
    refuse("it has " + std::to_string(info.st_size) + " bytes");
  }
  std::string text;
  char block[65536];
  while (true) {
    const ssize_t got = ::read(fd.get(), block, sizeof block);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) refuse(std::strerror(errno));
    if (got == 0) break;
    text.append(block, static_cast<std::size_t>(got));
    // The file may grow while it is read: the cap holds for what is read, too.
    if (text.size() > max_bytes) refuse("it grew past the limit while being read");
  }
  return text;
}

void check_output_file(const std::string& option, const std::string& path) {
  const auto refuse = [&](const std::string& why) {
    throw invalid_argument(option + " " + not_valid(path, "a writable file (" + why + ")"));
  };
  struct stat info {};
  const bool exists = ::stat(path.c_str(), &info) == 0;
  if (exists && (S_ISDIR(info.st_mode) || S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode))) {
    refuse(std::string("it is ") + kind_of(info.st_mode));
  }
  // O_NONBLOCK: a device that would block an open is refused by the open, not waited for.
  const unique_fd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644));
  if (!fd) refuse(std::strerror(errno));
  if (!exists) ::unlink(path.c_str());
}

}  // namespace funnel::app
