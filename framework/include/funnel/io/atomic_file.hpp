// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file atomic_file.hpp
 * @brief Durable, atomic file-system updates: fsync of files and directories, atomic replace.
 *
 * A rename is atomic, but it is durable only once the directory holding it is fsynced, and the
 * renamed file's contents only once the file itself was fsynced before the rename. These helpers
 * do the steps in that order so that a process killed (or a node crashing) at any instant leaves
 * either the old or the new version, never a mix.
 */
#pragma once

#include <string>

namespace funnel::io {

/**
 * @brief Flushes a file's data and metadata to stable storage (open + fsync + close).
 * @param path an existing regular file (a symbolic link is refused, not followed)
 * @throw funnel::system_error when it cannot be opened or fsync fails
 */
void sync_file(const std::string& path);

/**
 * @brief Makes entries created, renamed or removed in a directory durable (fsync on it).
 * @param path an existing directory (a symbolic link is refused, not followed)
 * @throw funnel::system_error when it cannot be opened or fsync fails
 */
void sync_directory(const std::string& path);

/**
 * @brief Renames `from` to `to` (replacing a file `to`) and fsyncs the parent directory.
 * @param from existing path
 * @param to target path in the same file system
 * @throw funnel::system_error when rename or fsync fails
 */
void rename_durably(const std::string& from, const std::string& to);

/**
 * @brief Atomically replaces (or creates) a small file: writes `<path>.tmp`, fsyncs it,
 * renames it over `path` and fsyncs the directory.
 *
 * The temporary is created exclusively and without following links (O_EXCL | O_NOFOLLOW,
 * relative to the directory opened once), so a link planted under its name by another user of
 * the directory is removed, never written through; a leftover of a killed writer is replaced.
 * @param path target file
 * @param contents bytes to write
 * @throw funnel::system_error on any failing step (the old file is then left unchanged)
 */
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace funnel::io
