// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "file_system.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "funnel/error.hpp"
#include "funnel/ipc/unique_fd.hpp"

namespace funnel::io::detail {
namespace {

namespace fs = std::filesystem;

void check(const std::error_code& ec, const char* call, const std::string& path) {
  if (ec)
    throw system_error(std::string(call) + " '" + path + "' failed: " + ec.message(), ec.value());
}

std::string octal_mode(mode_t mode) {
  char text[16];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// A group of the owner alone: named after the owner, its primary group, no other members (the
// "user private group" many Linux distributions give each user, with umask 002).
bool private_group(uid_t owner, gid_t group) {
  struct passwd pw {};
  struct group gr {};
  struct passwd* user = nullptr;
  struct group* found = nullptr;
  std::vector<char> buffer(1 << 16);
  if (::getpwuid_r(owner, &pw, buffer.data(), buffer.size() / 2, &user) != 0 || user == nullptr ||
      ::getgrgid_r(group, &gr, buffer.data() + buffer.size() / 2, buffer.size() / 2, &found) != 0 ||
      found == nullptr || user->pw_gid != group ||
      std::strcmp(found->gr_name, user->pw_name) != 0) {
    return false;
  }
  for (char** member = found->gr_mem; *member != nullptr; ++member) {
    if (std::strcmp(*member, user->pw_name) != 0) return false;
  }
  return true;
}

bool others_may_write(const struct stat& st) {
  if ((st.st_mode & S_IWOTH) != 0) return true;
  return (st.st_mode & S_IWGRP) != 0 && !private_group(st.st_uid, st.st_gid);
}

// The file system cannot allocate without writing: the reservation is skipped, not emulated.
bool cannot_allocate(int errnum) {
  return errnum == EOPNOTSUPP || errnum == ENOSYS || errnum == EINVAL;
}

// fallocate(2) without glibc's posix_fallocate fallback, which would write every byte.
int allocate(int fd, std::uint64_t bytes) {
  if (bytes == 0) return 0;
  int rc = 0;
  do {
    rc = ::fallocate(fd, 0, 0, static_cast<off_t>(bytes));
  } while (rc != 0 && errno == EINTR);
  return rc == 0 ? 0 : errno;
}

[[noreturn]] void no_space(int errnum, std::uint64_t bytes, const std::string& path) {
  funnel::detail::fail_system(errnum, "fallocate", __FILE__, __LINE__,
                              "reserving " + std::to_string(bytes) + " bytes for '" + path + "'");
}

// The entry at `path` (not following links) when it exists and belongs to another user.
bool foreign_entry(const std::string& path, struct stat& st) {
  if (::lstat(path.c_str(), &st) != 0) {
    FUNNEL_SYSTEM_CHECK(errno != ENOENT, "stat", path);
    return false;
  }
  return st.st_uid != ::geteuid();
}

}  // namespace

std::string join(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parent_path(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void make_directories(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  check(ec, "create_directories", path);
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  check(ec, "remove_all", path);
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

std::vector<std::string> list_directory(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  check(ec, "list", path);
  return names;
}

std::string excerpt(const std::string& text, std::size_t max_length) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max_length; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char code[8];
      std::snprintf(code, sizeof code, "\\x%02x", c);
      out += code;
    }
  }
  return text.size() > max_length ? out + "..." : out;
}

std::string file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

std::string read_regular_at(int dir, const std::string& name, const std::string& shown,
                            std::size_t max_bytes, bool follow_links, const std::string& what) {
  // Every message names the file alike: 'PATH', or e.g. --config 'PATH'.
  const std::string named = (what.empty() ? std::string{} : what + " ") + "'" + shown + "'";
  const int no_follow = follow_links ? 0 : AT_SYMLINK_NOFOLLOW;
  struct stat before {};
  FUNNEL_SYSTEM_CHECK(::fstatat(dir, name.c_str(), &before, no_follow) != 0, "stat", named);
  if (!S_ISREG(before.st_mode)) {
    throw error(named + " is " + file_type_name(before.st_mode) + ", not a regular file" +
                (S_ISLNK(before.st_mode) ? " (not followed here)" : ""));
  }
  const unique_fd fd(::openat(dir, name.c_str(),
                              O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW)));
  FUNNEL_SYSTEM_CHECK(fd.get() < 0, "open", named);
  struct stat opened {};
  FUNNEL_SYSTEM_CHECK(::fstat(fd.get(), &opened) != 0, "stat", named);
  if (!S_ISREG(opened.st_mode) || opened.st_ino != before.st_ino ||
      opened.st_dev != before.st_dev) {
    throw error(named + " changed while it was opened: it is " + file_type_name(opened.st_mode) +
                " now");
  }
  if (static_cast<std::uint64_t>(opened.st_size) > max_bytes) {
    throw error(named + " has " + std::to_string(opened.st_size) + " bytes; at most " +
                std::to_string(max_bytes) + " are read");
  }
  std::string contents;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    FUNNEL_SYSTEM_CHECK(n < 0, "read", named);
    if (n == 0) break;
    contents.append(buffer, static_cast<std::size_t>(n));
    if (contents.size() > max_bytes) {
      throw error(named + " grew past " + std::to_string(max_bytes) + " bytes while it was read");
    }
  }
  return contents;
}

void write_all(int fd, const std::string& contents, const std::string& path) {
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    FUNNEL_SYSTEM_CHECK(n < 0, "write", path);
    done += static_cast<std::size_t>(n);
  }
}

unique_fd create_replacing(int dir, const std::string& name, const std::string& shown,
                           mode_t mode) {
  const auto create = [&] {
    return unique_fd(
        ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  };
  unique_fd fd = create();
  if (!fd && errno == EEXIST) {
    FUNNEL_SYSTEM_CHECK(::unlinkat(dir, name.c_str(), 0) != 0, "unlink", shown);
    fd = create();
  }
  FUNNEL_SYSTEM_CHECK(!fd, "open", shown);
  return fd;
}

void require_regular_file(const std::string& path, const std::string& what, bool follow_links) {
  struct stat st {};
  const int rc = follow_links ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  FUNNEL_SYSTEM_CHECK(rc != 0, "stat", path + " (" + what + ")");
  if (!S_ISREG(st.st_mode)) {
    throw error("'" + path + "' (" + what + ") is " + file_type_name(st.st_mode) +
                ", not a regular file");
  }
}

void require_directory(const std::string& path, const std::string& what) {
  struct stat st {};
  FUNNEL_SYSTEM_CHECK(::lstat(path.c_str(), &st) != 0, "stat", path + " (" + what + ")");
  if (!S_ISDIR(st.st_mode)) {
    throw error("'" + path + "' (" + what + ") is " + file_type_name(st.st_mode) +
                ", not a directory");
  }
}

space_reservation::space_reservation(space_reservation&& other) noexcept
    : path_(std::exchange(other.path_, {})) {}

space_reservation& space_reservation::operator=(space_reservation&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

void space_reservation::release() noexcept {
  if (path_.empty()) return;
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
    funnel::detail::log_error("could not remove the space placeholder '" + path_ + "'");
  }
  path_.clear();
}

space_reservation reserve_space(const std::string& path, std::uint64_t bytes) {
  // A placeholder left by a killed writer is replaced.
  const unique_fd fd = create_replacing(AT_FDCWD, path, path, 0600);
  space_reservation reservation(path);
  const int errnum = allocate(fd.get(), bytes);
  if (errnum == 0) return reservation;
  reservation.release();
  if (cannot_allocate(errnum)) return {};
  no_space(errnum, bytes, path);
}

void allocate_space(const std::string& path, std::uint64_t bytes) {
  const unique_fd fd(::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
  FUNNEL_SYSTEM_CHECK(fd.get() < 0, "open", path);
  const int errnum = allocate(fd.get(), bytes);
  if (errnum != 0 && !cannot_allocate(errnum)) no_space(errnum, bytes, path);
}

bool is_shared_directory(const std::string& path) {
  struct stat st {};
  FUNNEL_SYSTEM_CHECK(::stat(path.c_str(), &st) != 0, "stat", path);
  return others_may_write(st);
}

void check_output_directory(const std::string& path, const std::string& what) {
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const std::string parent = parent_path(dir);
  struct stat up {};
  FUNNEL_SYSTEM_CHECK(::stat(parent.c_str(), &up) != 0, "stat", parent);
  const bool parent_shared = others_may_write(up);
  if (parent_shared && (up.st_mode & S_ISVTX) == 0) {
    throw error(what + " '" + path + "' lies in '" + parent + "' (mode " + octal_mode(up.st_mode) +
                "), which other users may write and is not sticky: they could replace it; use "
                "a directory inside one only you can write");
  }
  struct stat st {};
  FUNNEL_SYSTEM_CHECK(::lstat(dir.c_str(), &st) != 0, "stat", path);
  if (S_ISLNK(st.st_mode)) {
    if (parent_shared) {
      throw error(what + " '" + path + "' is a symbolic link in '" + parent + "' (mode " +
                  octal_mode(up.st_mode) +
                  "), which other users may write: links there are not followed");
    }
    FUNNEL_SYSTEM_CHECK(::stat(dir.c_str(), &st) != 0, "stat", path);
  }
  if (!S_ISDIR(st.st_mode)) {
    throw error(what + " '" + path + "' is " + file_type_name(st.st_mode));
  }
  if (st.st_uid != ::geteuid()) {
    throw error(what + " '" + path + "' belongs to uid " + std::to_string(st.st_uid) + " (mode " +
                octal_mode(st.st_mode) + "), not to this user (uid " + std::to_string(::geteuid()) +
                "): use a directory of your own");
  }
  if (others_may_write(st) && (st.st_mode & S_ISVTX) == 0) {
    throw error(what + " '" + path + "' (mode " + octal_mode(st.st_mode) +
                ") may be written by other users, who could plant files and links in it: make "
                "it private (chmod go-w) or use a directory only you can write");
  }
}

bool is_foreign_entry(const std::string& path) {
  struct stat st {};
  return foreign_entry(path, st);
}

void refuse_foreign_entry(const std::string& path, const std::string& what) {
  struct stat st {};
  if (!foreign_entry(path, st)) return;
  throw error(what + " '" + path + "' is " + file_type_name(st.st_mode) + " of uid " +
              std::to_string(st.st_uid) + ", not of this user (uid " + std::to_string(::geteuid()) +
              "): another user put it there, and it is neither written through nor replaced; "
              "use a directory only you can write");
}

}  // namespace funnel::io::detail
