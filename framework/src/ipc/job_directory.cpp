// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// job_directory: node rank 0 makes the directory (mkdtemp) and one reference file per node rank,
// then broadcasts the name; each rank's destructor drops its reference and tries rmdir, which
// only the last one's succeeds.
#include "funnel/ipc/job_directory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <utility>
#include <vector>

#include "funnel/error.hpp"
#include "private_directory.hpp"

namespace funnel {
namespace {

std::string reference_path(const std::string& dir, int rank) {
  return dir + "/ref-" + std::to_string(rank);
}

// Removes what make_directory made; nothing it cannot remove is an error worth more than a log.
void remove_made(const std::string& dir, int size) noexcept {
  for (int r = 0; r < size; ++r) (void)::unlink(reference_path(dir, r).c_str());
  (void)::rmdir(dir.c_str());
}

// funnel-run's private directory of the job when it exported one, else the temporary directory.
std::string directory_template() {
  const std::string run_dir = detail::env_or_empty("FUNNEL_RUN_DIR");
  if (!run_dir.empty()) {
    detail::check_private_directory(run_dir, "FUNNEL_RUN_DIR");
    return run_dir + "/job-XXXXXX";
  }
  std::string base = detail::env_or_empty("TMPDIR");
  if (base.empty()) base = "/tmp";
  return base + "/funnel-job-" + std::to_string(::geteuid()) + "-XXXXXX";
}

// Node rank 0: the directory (0700, from mkdtemp) and one reference per node rank.
std::string make_directory(int size) {
  const std::string pattern = directory_template();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  FUNNEL_SYSTEM_CHECK(::mkdtemp(name.data()) == nullptr, "mkdtemp",
                      "job directory '" + pattern + "' (its parent directory must exist)");
  const std::string dir(name.data());
  for (int r = 0; r < size; ++r) {
    const std::string reference = reference_path(dir, r);
    const int fd =
        ::open(reference.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      const int saved = errno;
      remove_made(dir, r);
      errno = saved;
      FUNNEL_SYSTEM_CHECK(true, "open", "reference '" + reference + "'");
    }
    (void)::close(fd);
  }
  return dir;
}

}  // namespace

job_directory job_directory::create(MPI_Comm node_comm) {
  int rank = 0;
  int size = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(node_comm, &rank), "job_directory");
  FUNNEL_MPI_TRY(MPI_Comm_size(node_comm, &size), "job_directory");

  std::exception_ptr made_failure;
  std::string dir;
  if (rank == 0) {
    try {
      dir = make_directory(size);
    } catch (...) {
      made_failure = std::current_exception();
    }
  }
  // The name, or "" when node rank 0 could not make it.
  int length = static_cast<int>(dir.size());
  FUNNEL_MPI_TRY(MPI_Bcast(&length, 1, MPI_INT, 0, node_comm), "job_directory");
  if (length == 0) {
    if (made_failure) std::rethrow_exception(made_failure);
    throw error("job_directory: node rank 0 could not make the job directory (see its error)");
  }
  dir.resize(static_cast<std::size_t>(length));
  FUNNEL_MPI_TRY(MPI_Bcast(dir.data(), length, MPI_CHAR, 0, node_comm), "job_directory");

  // Every rank sees for itself that the directory is private, or none uses it.
  std::exception_ptr check_failure;
  try {
    detail::check_private_directory(dir, "job directory");
  } catch (...) {
    check_failure = std::current_exception();
  }
  int ok = check_failure ? 0 : 1;
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node_comm), "job_directory");
  if (ok == 0) {
    if (rank == 0) remove_made(dir, size);
    if (check_failure) std::rethrow_exception(check_failure);
    throw error("job_directory: another node rank refused '" + dir + "' (see its error)");
  }
  return job_directory(dir, reference_path(dir, rank));
}

job_directory::~job_directory() { drop(); }

job_directory::job_directory(job_directory&& other) noexcept
    : path_(std::exchange(other.path_, {})), reference_(std::exchange(other.reference_, {})) {}

job_directory& job_directory::operator=(job_directory&& other) noexcept {
  if (this != &other) {
    drop();
    path_ = std::exchange(other.path_, {});
    reference_ = std::exchange(other.reference_, {});
  }
  return *this;
}

void job_directory::drop() noexcept {
  if (path_.empty()) return;
  try {
    if (::unlink(reference_.c_str()) != 0 && errno != ENOENT) {
      detail::log_error("job_directory: unlink '" + reference_ + "': " + std::strerror(errno));
    }
    // Only the last rank's rmdir finds the directory empty.
    if (::rmdir(path_.c_str()) != 0 && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT) {
      detail::log_error("job_directory: rmdir '" + path_ + "': " + std::strerror(errno));
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): a message that cannot be built is dropped
  }
  path_.clear();
  reference_.clear();
}

}  // namespace funnel
