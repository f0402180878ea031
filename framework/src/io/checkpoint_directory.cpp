// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "checkpoint_directory.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "file_system.hpp"
#include "funnel/error.hpp"
#include "funnel/io/atomic_file.hpp"
#include "funnel/io/checkpoint_writer.hpp"

namespace funnel::io::detail {
namespace {

constexpr const char* prefix = "ckpt-";
constexpr const char* latest_name = "latest";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// This user's entry of `dir` (not following links), of any type; false for other users' and
// missing entries.
bool owned(const std::string& dir, const std::string& name, struct stat& st) {
  return ::fstatat(AT_FDCWD, join(dir, name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         st.st_uid == ::geteuid();
}

// Removes by renaming to a new "<name>.<n>.old" first (never over an entry that is there: in a
// sticky shared directory it may be another user's), so a kill during the (non-atomic) recursive
// removal leaves a name no reader ever follows and remove_leftovers takes later.
void retire(const std::string& dir, const std::string& name) {
  const std::string from = join(dir, name);
  for (int n = 0;; ++n) {
    const std::string to = join(dir, name + "." + std::to_string(n) + ".old");
    int rc = ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && errno == EINVAL) {  // a file system without RENAME_NOREPLACE
      struct stat st {};
      if (::lstat(to.c_str(), &st) == 0) {
        errno = EEXIST;
      } else {
        rc = std::rename(from.c_str(), to.c_str());
      }
    }
    if (rc == 0) {
      sync_directory(dir);
      remove_tree(to);
      return;
    }
    FUNNEL_SYSTEM_CHECK(errno != EEXIST || n >= 63, "rename", from + " -> " + to);
  }
}

}  // namespace

std::string checkpoint_name(std::int64_t step) {
  FUNNEL_EXPECTS(step >= 0 && step <= checkpoint_writer::max_step,
                 "checkpoint step " + std::to_string(step) + " is outside [0, " +
                     std::to_string(checkpoint_writer::max_step) + "]");
  char digits[32];
  std::snprintf(digits, sizeof digits, "%08lld", static_cast<long long>(step));
  return prefix + std::string(digits);
}

std::optional<std::int64_t> parse_checkpoint_name(const std::string& name) {
  const std::string p = prefix;
  if (name.size() <= p.size() || name.compare(0, p.size(), p) != 0 || name.size() > p.size() + 18) {
    return std::nullopt;
  }
  const std::string digits = name.substr(p.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(std::stoll(digits));
}

std::vector<std::pair<std::int64_t, std::string>> list_checkpoints(const std::string& dir) {
  const bool shared = is_shared_directory(dir);
  std::vector<std::pair<std::int64_t, std::string>> found;
  for (const auto& name : list_directory(dir)) {
    struct stat st {};
    if (auto step = parse_checkpoint_name(name);
        step && is_directory(join(dir, name)) &&
        (!shared || (owned(dir, name, st) && S_ISDIR(st.st_mode)))) {
      found.emplace_back(*step, name);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

void remove_leftovers(const std::string& dir) {
  const bool shared = is_shared_directory(dir);
  for (const auto& name : list_directory(dir)) {
    struct stat st {};
    if ((ends_with(name, ".tmp") || ends_with(name, ".old")) && (!shared || owned(dir, name, st))) {
      remove_tree(join(dir, name));
    }
  }
}

void make_checkpoint_directory(const std::string& dir, const std::string& name) {
  const std::string path = join(dir, name);
  FUNNEL_SYSTEM_CHECK(::mkdir(path.c_str(), is_shared_directory(dir) ? 0700 : 0777) != 0, "mkdir",
                      path);
}

void install_checkpoint(const std::string& dir, const std::string& name) {
  const std::string tmp = join(dir, name + ".tmp");
  const std::string final_path = join(dir, name);
  sync_directory(tmp);
  if (exists(final_path)) {
    // Rewriting a step that exists (e.g. a restarted run checkpointing the same step): swap
    // atomically so `latest` never names a missing directory; where the file system cannot
    // exchange, there is a short window between the two renames.
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final_path.c_str(), RENAME_EXCHANGE) == 0) {
      sync_directory(dir);
      remove_tree(tmp);
      return;
    }
    retire(dir, name);
  }
  rename_durably(tmp, final_path);
}

void publish_latest(const std::string& dir, const std::string& name) {
  write_file_atomically(join(dir, latest_name), name + "\n");
}

std::optional<std::string> read_latest(const std::string& dir) {
  const std::string path = join(dir, latest_name);
  if (!exists(path)) return std::nullopt;
  const std::string name =
      trim(read_regular_at(AT_FDCWD, path, path, max_latest_bytes, /*follow_links=*/false));
  if (!parse_checkpoint_name(name)) {
    throw error("'" + path + "' should name a checkpoint (ckpt-<step>) but holds '" +
                excerpt(name) + "'");
  }
  struct stat st {};
  if (is_shared_directory(dir) &&
      (!owned(dir, latest_name, st) || (exists(join(dir, name)) && !owned(dir, name, st)))) {
    throw error("'" + path + "' or the checkpoint it names belongs to another user, in a " +
                "directory other users may write: it is not used");
  }
  return name;
}

void prune_checkpoints(const std::string& dir, int keep_last, const std::string& keep) {
  const auto all = list_checkpoints(dir);
  const std::size_t keep_count = static_cast<std::size_t>(std::max(keep_last, 1));
  if (all.size() <= keep_count) return;
  for (std::size_t i = 0; i + keep_count < all.size(); ++i) {
    if (all[i].second != keep) retire(dir, all[i].second);
  }
}

void remove_checkpoints(const std::string& dir) {
  const std::string latest = join(dir, latest_name);
  FUNNEL_SYSTEM_CHECK(::unlink(latest.c_str()) != 0 && errno != ENOENT, "unlink", latest);
  for (const auto& [step, name] : list_checkpoints(dir)) retire(dir, name);
  sync_directory(dir);
}

}  // namespace funnel::io::detail
