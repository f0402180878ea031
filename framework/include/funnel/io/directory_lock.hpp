// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file directory_lock.hpp
 * @brief One writer per directory: a lock file naming its owner's host and pid.
 */
#pragma once

#include <string>

#include "funnel/ipc/unique_fd.hpp"

namespace funnel::io {

/**
 * @brief Exclusive ownership of a directory (e.g. a checkpoint directory), held by one process.
 *
 * The lock is the file `<directory>/funnel.lock`, created atomically (a private temporary file
 * hard-linked to the lock name, which fails when the name exists; this also works on NFS) and
 * holding "host=<hostname>\npid=<pid>\n". Every file of the lock is opened relative to the
 * directory (opened once, held while the lock is) and never through a symbolic link: temporary
 * files are created exclusively, and a lock file that is a link, a FIFO or larger than a lock
 * file is refused. A second process asking for the lock gets a
 * funnel::error naming the owner. A lock left by a process that died (same host, pid no longer
 * running or a zombie) is taken over; a lock from another host cannot be checked and is refused
 * with a message telling how to remove it. Move-only; released (file removed) on destruction.
 */
class directory_lock {
 public:
  /// @brief The lock file's name inside the locked directory.
  static constexpr const char* file_name = "funnel.lock";

  /**
   * @brief Takes the lock of `directory` (which must exist).
   * @param directory the directory to own
   * @throw funnel::error when another live process holds it (message names host and pid)
   * @throw funnel::system_error when the lock file cannot be created
   */
  explicit directory_lock(const std::string& directory);
  /// @brief Releases the lock (removes the file if it is still ours); logs, never throws.
  ~directory_lock();
  /**
   * @brief Takes over another lock object's ownership.
   * @param other the lock to take; holds nothing afterwards
   */
  directory_lock(directory_lock&& other) noexcept;
  /**
   * @brief Releases this lock, then takes over `other`'s.
   * @param other the lock to take; holds nothing afterwards
   * @return this lock
   */
  directory_lock& operator=(directory_lock&& other) noexcept;
  directory_lock(const directory_lock&) = delete;
  directory_lock& operator=(const directory_lock&) = delete;

  /**
   * @brief The lock file, e.g. for messages.
   * @return `<directory>/funnel.lock`; empty after a move
   */
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /**
   * @brief Whether the lock was left by a process that died and taken over.
   * @return true when this process took over a stale lock (a caller may say so in its log)
   */
  [[nodiscard]] bool took_over_stale_lock() const noexcept { return took_over_; }

  /// @brief Releases the lock now; no-op when not held. Logs, never throws.
  void release() noexcept;

 private:
  void acquire(const std::string& directory);

  std::string path_;
  std::string contents_;
  unique_fd directory_fd_;  // the locked directory, while the lock is held
  bool took_over_ = false;
};

}  // namespace funnel::io
