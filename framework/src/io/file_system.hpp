// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: file-system helpers of io (std::filesystem and POSIX errors turned into
// funnel::system_error / funnel::error, one line naming the path).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "funnel/ipc/unique_fd.hpp"

namespace funnel::io::detail {

/// @brief a + "/" + b.
std::string join(const std::string& a, const std::string& b);
/// @brief The part after the last '/'.
std::string base_name(const std::string& path);
/// @brief The part before the last '/' ("." when there is none).
std::string parent_path(const std::string& path);
/// @brief mkdir -p; throws funnel::system_error.
void make_directories(const std::string& path);
/// @brief rm -r; a missing path is fine; throws funnel::system_error.
void remove_tree(const std::string& path);
/// @brief True when `path` exists (any type; a link is not followed).
bool exists(const std::string& path);
/// @brief True when `path` is a directory.
bool is_directory(const std::string& path);
/// @brief Names of the entries of a directory (not sorted); throws funnel::system_error.
std::vector<std::string> list_directory(const std::string& path);

/// @brief `text` fit for a one-line message: at most `max_length` characters of it, bytes that
/// are not printable ASCII written as \xNN, "..." when cut.
std::string excerpt(const std::string& text, std::size_t max_length = 64);

/// @brief "a FIFO", "a directory", "a character device", ...: what a file of `mode` is.
std::string file_type_name(mode_t mode);

/**
 * @brief Reads a file that must be regular, at most `max_bytes` of it: the type is checked before
 * it is opened (a FIFO would block, a device would read without end) and again on the open
 * descriptor (O_NONBLOCK), and every read error is checked.
 * @param dir directory descriptor `name` is relative to (AT_FDCWD: the working directory)
 * @param name the file
 * @param shown how the file is named in messages
 * @param max_bytes larger files are refused
 * @param follow_links false: a symbolic link `name` is refused, not followed
 * @param what put before the file's name in messages (e.g. "--config"); empty: none
 */
std::string read_regular_at(int dir, const std::string& name, const std::string& shown,
                            std::size_t max_bytes, bool follow_links, const std::string& what = {});

/// @brief Writes all of `contents` to `fd` (retrying short and interrupted writes); throws
/// funnel::system_error naming `path`.
void write_all(int fd, const std::string& contents, const std::string& path);

/**
 * @brief Creates `name` (relative to the directory `dir`, or AT_FDCWD) for writing, exclusively
 * and never through a link (O_EXCL | O_NOFOLLOW): an entry of that name, a leftover of a killed
 * writer or a link someone planted, is removed first, never followed.
 * @param shown how the file is named in messages
 * @param mode permissions of the new file
 * @throw funnel::system_error when it cannot be removed or created
 */
unique_fd create_replacing(int dir, const std::string& name, const std::string& shown, mode_t mode);

/// @brief Throws funnel::error "'<path>' (<what>) is <type>, not a regular file" unless `path` is
/// a regular file (links followed when `follow_links`); funnel::system_error when it is missing.
void require_regular_file(const std::string& path, const std::string& what, bool follow_links);

/// @brief Throws funnel::error unless `path` is a directory that is not a symbolic link;
/// funnel::system_error when it is missing.
void require_directory(const std::string& path, const std::string& what);

/// @brief Disk space held by a placeholder file until release() (or destruction) removes it.
class space_reservation {
 public:
  space_reservation() = default;
  explicit space_reservation(std::string path) noexcept : path_(std::move(path)) {}
  ~space_reservation() { release(); }
  space_reservation(space_reservation&& other) noexcept;
  space_reservation& operator=(space_reservation&& other) noexcept;
  space_reservation(const space_reservation&) = delete;
  space_reservation& operator=(const space_reservation&) = delete;
  /// @brief Removes the placeholder, giving its space back; never throws.
  void release() noexcept;

 private:
  std::string path_;
};

/**
 * @brief Creates `path` (which must not exist) holding `bytes` of allocated space (fallocate; no
 * data is written).
 * @return the reservation; an empty one where the file system cannot allocate without writing
 * @throw funnel::system_error naming the bytes when the space is not there (ENOSPC, EDQUOT, ...)
 */
space_reservation reserve_space(const std::string& path, std::uint64_t bytes);

/// @brief Allocates the first `bytes` of the existing file `path` (fallocate); nothing where the
/// file system cannot; throws funnel::system_error when the space is not there.
void allocate_space(const std::string& path, std::uint64_t bytes);

/// @brief True when users other than the owner may write `path` (write permission for others,
/// or for a group that is not the owner's private group).
bool is_shared_directory(const std::string& path);

/**
 * @brief Checks that a directory is safe to write checkpoints or snapshots into.
 *
 * Refused, with one line naming the directory, its owner and mode: a directory of another user;
 * one other users may write (see is_shared_directory) unless it is sticky (they cannot then
 * rename or remove this user's entries, and what this run creates in it is private); one inside
 * a directory others may write that is not sticky (they could replace it); a symbolic link inside
 * a directory others may write.
 * @param path an existing directory
 * @param what how the line names it, e.g. "checkpoint directory"
 * @throw funnel::error when refused; funnel::system_error when it cannot be examined
 */
void check_output_directory(const std::string& path, const std::string& what);

/**
 * @brief Refuses an entry of another user (not following links) at `path`: in a sticky
 * directory others may write, a file, link or directory they put where this run is about to
 * write is neither written through nor replaced. Nothing there, or this user's own: returns.
 * @param path where the run writes next
 * @param what how the line names it, e.g. "snapshot file"
 * @throw funnel::error naming the owner; funnel::system_error when it cannot be examined
 */
void refuse_foreign_entry(const std::string& path, const std::string& what);

/// @brief True when `path` exists (not following links) and belongs to another user.
bool is_foreign_entry(const std::string& path);

}  // namespace funnel::io::detail
