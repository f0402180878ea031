// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// allgather_fds, job_directory and host-pool IPC between real MPI ranks of one node.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/ipc/fd_exchange.hpp"
#include "funnel/ipc/job_directory.hpp"
#include "funnel/memory/memory_pool.hpp"

namespace {

namespace fs = std::filesystem;
using funnel::backend_kind;
using funnel::stream_view;

MPI_Comm node_comm() {
  static MPI_Comm comm = [] {
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c);
    return c;
  }();
  return comm;
}

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

int size_of(MPI_Comm comm) {
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}

std::uint64_t fresh_random() {
  static std::mt19937_64 engine{std::random_device{}()};
  return engine();
}

// A directory name all node ranks agree on, fresh for each call, not yet existing.
std::string fresh_directory(const std::string& tag) {
  std::uint64_t token = fresh_random();
  MPI_Bcast(&token, 1, MPI_UINT64_T, 0, node_comm());
  return (fs::temp_directory_path() / ("funnel-ipc-test-" + tag + "-" + std::to_string(token)))
      .string();
}

// Sets (or unsets, for nullptr) an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~scoped_env() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// The same string on every rank of `comm`: rank 0's.
std::string rank0_value(MPI_Comm comm, std::string value) {
  int length = static_cast<int>(value.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  value.resize(static_cast<std::size_t>(length));
  MPI_Bcast(value.data(), length, MPI_CHAR, 0, comm);
  return value;
}

void remove_directory(const std::string& dir) {
  MPI_Barrier(node_comm());
  if (rank_of(node_comm()) == 0) fs::remove_all(dir);
  MPI_Barrier(node_comm());
}

// A memfd holding `value`, readable by whoever gets a duplicate of the descriptor.
funnel::unique_fd memfd_with(std::uint64_t value) {
  funnel::unique_fd fd(::memfd_create("funnel-test", MFD_CLOEXEC));
  EXPECT_TRUE(fd.valid());
  EXPECT_EQ(::pwrite(fd.get(), &value, sizeof value, 0), static_cast<ssize_t>(sizeof value));
  return fd;
}

TEST(AllgatherFds, EveryRankGetsEveryRanksDescriptor) {
  const MPI_Comm comm = node_comm();
  const int size = size_of(comm);
  const int rank = rank_of(comm);
  ASSERT_GE(size, 2) << "run with several ranks on one node";
  const std::uint64_t mine = fresh_random();
  std::vector<std::uint64_t> expected(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, 1, MPI_UINT64_T, expected.data(), 1, MPI_UINT64_T, comm);
  funnel::unique_fd fd = memfd_with(mine);
  const std::string dir = fresh_directory("gather");

  for (int round = 0; round < 3; ++round) {  // back-to-back calls reuse the directory safely
    std::vector<funnel::unique_fd> fds = funnel::allgather_fds(comm, fd.get(), dir);
    ASSERT_EQ(fds.size(), static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) {
      ASSERT_TRUE(fds[r].valid()) << "rank " << r;
      std::uint64_t got = 0;
      ASSERT_EQ(::pread(fds[r].get(), &got, sizeof got, 0), static_cast<ssize_t>(sizeof got));
      EXPECT_EQ(got, expected[r]) << "descriptor of rank " << r << " on rank " << rank;
    }
    EXPECT_NE(fds[rank].get(), fd.get()) << "own entry is a duplicate";
  }
  EXPECT_NE(::fcntl(fd.get(), F_GETFD), -1) << "the caller's descriptor stays open";
  EXPECT_FALSE(fs::exists(dir)) << "a directory allgather_fds made is removed again: " << dir;
  MPI_Barrier(comm);

  // A directory the caller made stays, private and empty.
  if (rank == 0) {
    ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  }
  MPI_Barrier(comm);
  (void)funnel::allgather_fds(comm, fd.get(), dir);
  struct stat info {};
  ASSERT_EQ(::stat(dir.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700U);
  MPI_Barrier(comm);
  for (const auto& entry : fs::directory_iterator(dir)) {
    ADD_FAILURE() << "left behind: " << entry.path();
  }
  remove_directory(dir);
}

// Every rank must fail with a clear message, none may hang.
template <class Setup>
void expect_refused(const std::string& tag, Setup setup, const std::string& needle) {
  const MPI_Comm comm = node_comm();
  funnel::unique_fd fd = memfd_with(fresh_random());
  const std::string dir = fresh_directory(tag);
  if (rank_of(comm) == 0) setup(dir);
  MPI_Barrier(comm);
  try {
    (void)funnel::allgather_fds(comm, fd.get(), dir, std::chrono::seconds(10));
    ADD_FAILURE() << "expected " << tag << " to be refused";
  } catch (const funnel::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  remove_directory(dir);
}

TEST(AllgatherFds, RefusesDirectoryWithGroupOrOtherPermissions) {
  expect_refused(
      "mode",
      [](const std::string& dir) {
        ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
        ASSERT_EQ(::chmod(dir.c_str(), 0750), 0);
      },
      "mode 0750");
}

TEST(AllgatherFds, RefusesDirectoryOfAnotherOwner) {
  int root = ::geteuid() == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &root, 1, MPI_INT, MPI_MIN, node_comm());
  if (root == 0) GTEST_SKIP() << "needs root to give a directory to another user";
  expect_refused(
      "owner",
      [](const std::string& dir) {
        ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
        ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
      },
      "owned by uid 65534");
}

TEST(AllgatherFds, RefusesAPathThatIsNotADirectory) {
  expect_refused(
      "file",
      [](const std::string& dir) {
        funnel::unique_fd f(::open(dir.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
        ASSERT_TRUE(f.valid());
      },
      "not a directory");
}

TEST(AllgatherFds, RefusesASocketPathTooLongForSunPath) {
  const MPI_Comm comm = node_comm();
  funnel::unique_fd fd = memfd_with(fresh_random());
  const std::string dir = fresh_directory(std::string(120, 'x'));
  try {
    (void)funnel::allgather_fds(comm, fd.get(), dir, std::chrono::seconds(10));
    ADD_FAILURE() << "expected a too-long socket path to be refused";
  } catch (const funnel::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Unix socket address"), std::string::npos) << e.what();
  }
  remove_directory(dir);
}

TEST(AllgatherFds, ABadDescriptorOnOneRankFailsEveryRank) {
  const MPI_Comm comm = node_comm();
  const int rank = rank_of(comm);
  funnel::unique_fd fd = memfd_with(fresh_random());
  const std::string dir = fresh_directory("badfd");
  const int bad_rank = size_of(comm) - 1;
  try {
    (void)funnel::allgather_fds(comm, rank == bad_rank ? 1 << 20 : fd.get(), dir,
                                std::chrono::seconds(10));
    ADD_FAILURE() << "expected every rank to fail";
  } catch (const funnel::invalid_argument& e) {
    EXPECT_EQ(rank, bad_rank) << e.what();
    EXPECT_NE(std::string(e.what()).find("not an open descriptor"), std::string::npos) << e.what();
  } catch (const funnel::error& e) {
    EXPECT_NE(rank, bad_rank) << e.what();
    EXPECT_NE(std::string(e.what()).find("node rank(s) " + std::to_string(bad_rank)),
              std::string::npos)
        << e.what();
  }
  remove_directory(dir);
}

// The deprecated name-only API stays usable: a fresh, unpredictable name every rank agrees on.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(DefaultJobDirectory, AllRanksAgreeOnAFreshName) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const scoped_env no_job_dir("FUNNEL_JOB_DIR", nullptr);
  const scoped_env no_run_dir("FUNNEL_RUN_DIR", nullptr);
  const std::string dir = funnel::default_job_directory(comm);
  EXPECT_NE(dir.find("/funnel-" + std::to_string(::geteuid()) + "-"), std::string::npos) << dir;
  EXPECT_EQ(dir, rank0_value(comm, dir));
  EXPECT_NE(funnel::default_job_directory(comm), dir) << "two calls, two names";
  {
    const scoped_env run_dir("FUNNEL_RUN_DIR", "/run/dir");
    EXPECT_EQ(funnel::default_job_directory(comm).rfind("/run/dir/fd-", 0), 0U)
        << "inside funnel-run's directory of the job";
  }
  const scoped_env job_dir("FUNNEL_JOB_DIR", "/somewhere/else");
  EXPECT_EQ(funnel::default_job_directory(comm), "/somewhere/else");
}

// #20 row 5: another user makes the directory the job would have used before the job does.
// The old name was <tmp>/funnel-<uid>-<launch id>; now nobody can know it beforehand.
TEST(DefaultJobDirectory, ANameTakenByAnotherUserDoesNotStopTheExchange) {
  const MPI_Comm comm = node_comm();
  int root = ::geteuid() == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &root, 1, MPI_INT, MPI_MIN, comm);
  if (root == 0) GTEST_SKIP() << "needs root to make a directory of another user";
  const scoped_env no_job_dir("FUNNEL_JOB_DIR", nullptr);
  const scoped_env no_run_dir("FUNNEL_RUN_DIR", nullptr);
  std::string id;
  for (const char* name : {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"}) {
    if (const char* v = std::getenv(name); v != nullptr && id.empty()) id = v;
  }
  if (id.empty()) GTEST_SKIP() << "no launch id in the environment (run under mpirun)";
  for (char& c : id) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-') c = '_';
  }
  const std::string taken =
      fs::temp_directory_path().string() + "/funnel-" + std::to_string(::geteuid()) + "-" + id;
  if (rank_of(comm) == 0) {
    fs::remove_all(taken);
    ASSERT_EQ(::mkdir(taken.c_str(), 0777), 0);
    ASSERT_EQ(::chown(taken.c_str(), 65534, 65534), 0);
  }
  MPI_Barrier(comm);
  funnel::unique_fd fd = memfd_with(fresh_random());
  const std::string dir = funnel::default_job_directory(MPI_COMM_WORLD);
  EXPECT_NE(dir, taken);
  EXPECT_EQ(funnel::allgather_fds(comm, fd.get(), dir, std::chrono::seconds(10)).size(),
            static_cast<std::size_t>(size_of(comm)));
  remove_directory(taken);
}
#pragma GCC diagnostic pop

TEST(JobDirectory, OnePrivateUnpredictableDirectoryPerNode) {
  const MPI_Comm comm = node_comm();
  const scoped_env no_run_dir("FUNNEL_RUN_DIR", nullptr);
  funnel::job_directory first = funnel::job_directory::create(comm);
  funnel::job_directory second = funnel::job_directory::create(comm);
  EXPECT_EQ(first.path(), rank0_value(comm, first.path())) << "every rank gets rank 0's";
  EXPECT_NE(first.path(), second.path());
  EXPECT_NE(first.path().find("/funnel-job-" + std::to_string(::geteuid()) + "-"),
            std::string::npos)
      << first.path();
  struct stat info {};
  ASSERT_EQ(::lstat(first.path().c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0700U);
  EXPECT_EQ(info.st_uid, ::geteuid());
  // Descriptors go through it; it stays while anyone holds it.
  funnel::unique_fd fd = memfd_with(fresh_random());
  EXPECT_EQ(funnel::allgather_fds(comm, fd.get(), first.path()).size(),
            static_cast<std::size_t>(size_of(comm)));
  MPI_Barrier(comm);
  EXPECT_TRUE(fs::is_directory(first.path()));
}

TEST(JobDirectory, RemovedWhenTheNodesLastRankIsDone) {
  const MPI_Comm comm = node_comm();
  const int rank = rank_of(comm);
  const int last = size_of(comm) - 1;
  const scoped_env no_run_dir("FUNNEL_RUN_DIR", nullptr);
  std::optional<funnel::job_directory> dir(funnel::job_directory::create(comm));
  const std::string path = dir->path();
  if (rank != last) dir.reset();
  MPI_Barrier(comm);
  EXPECT_TRUE(fs::is_directory(path)) << "one rank still holds it";
  MPI_Barrier(comm);
  if (rank == last) dir.reset();
  MPI_Barrier(comm);
  EXPECT_FALSE(fs::exists(path)) << "the last rank removed it";
  funnel::job_directory moved_from = funnel::job_directory::create(comm);
  funnel::job_directory owner = std::move(moved_from);
  EXPECT_TRUE(moved_from.path().empty());  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_FALSE(owner.path().empty());
}

TEST(JobDirectory, InsideFunnelRunsDirectoryOfTheJob) {
  const MPI_Comm comm = node_comm();
  const std::string run_dir = fresh_directory("run");
  if (rank_of(comm) == 0) {
    ASSERT_EQ(::mkdir(run_dir.c_str(), 0700), 0);
  }
  MPI_Barrier(comm);
  {
    const scoped_env run("FUNNEL_RUN_DIR", run_dir.c_str());
    const funnel::job_directory dir = funnel::job_directory::create(comm);
    EXPECT_EQ(dir.path().rfind(run_dir + "/job-", 0), 0U) << dir.path();
  }
  MPI_Barrier(comm);
  EXPECT_TRUE(fs::is_empty(run_dir));
  // A FUNNEL_RUN_DIR others may enter is not funnel-run's: every rank refuses, none hangs.
  if (rank_of(comm) == 0) {
    ASSERT_EQ(::chmod(run_dir.c_str(), 0755), 0);
  }
  MPI_Barrier(comm);
  const scoped_env run("FUNNEL_RUN_DIR", run_dir.c_str());
  try {
    (void)funnel::job_directory::create(comm);
    ADD_FAILURE() << "a loose FUNNEL_RUN_DIR was used";
  } catch (const funnel::invalid_argument& e) {
    EXPECT_EQ(rank_of(comm), 0) << e.what();
    EXPECT_NE(std::string(e.what()).find("FUNNEL_RUN_DIR '" + run_dir + "' has mode 0755"),
              std::string::npos)
        << e.what();
  } catch (const funnel::error& e) {
    EXPECT_NE(rank_of(comm), 0) << e.what();
    EXPECT_NE(std::string(e.what()).find("node rank 0 could not make"), std::string::npos)
        << e.what();
  }
  remove_directory(run_dir);
}

TEST(HostPoolIpc, NeighboursReadEachOthersAllocations) {
  const MPI_Comm comm = node_comm();
  const int size = size_of(comm);
  const int rank = rank_of(comm);
  const stream_view host = stream_view::host();
  constexpr std::size_t count = 4096;

  funnel::memory_pool_options options;
  options.name = "ipc-rank-" + std::to_string(rank);
  options.ipc_exportable = true;
  options.host_ipc_capacity = 1 << 20;
  funnel::memory_pool pool(backend_kind::host, options);
  // A first allocation so the shared one does not sit at offset 0.
  void* padding = pool.allocate(host, 1000 + 256 * static_cast<std::size_t>(rank));
  auto* mine = static_cast<std::uint64_t*>(pool.allocate(host, count * sizeof(std::uint64_t)));
  std::vector<std::uint64_t> pattern(count);
  for (auto& v : pattern) v = fresh_random();
  std::memcpy(mine, pattern.data(), count * sizeof(std::uint64_t));
  std::vector<std::uint64_t> all(count * static_cast<std::size_t>(size));
  MPI_Allgather(pattern.data(), count, MPI_UINT64_T, all.data(), count, MPI_UINT64_T, comm);

  funnel::unique_fd handle = pool.export_handle();
  const std::string dir = fresh_directory("pool");
  std::vector<funnel::unique_fd> handles = funnel::allgather_fds(comm, handle.get(), dir);
  const funnel::ipc_pointer exported = pool.export_pointer(mine);
  std::vector<funnel::ipc_pointer> pointers(static_cast<std::size_t>(size));
  MPI_Allgather(&exported, sizeof exported, MPI_BYTE, pointers.data(), sizeof exported, MPI_BYTE,
                comm);

  for (int neighbour : {(rank + 1) % size, (rank + size - 1) % size}) {
    funnel::memory_pool peer =
        funnel::memory_pool::import_handle(backend_kind::host, handles[neighbour].get());
    auto* theirs = static_cast<std::uint64_t*>(peer.import_pointer(pointers[neighbour]));
    EXPECT_EQ(std::memcmp(theirs, all.data() + count * neighbour, count * sizeof(std::uint64_t)), 0)
        << "rank " << rank << " reading rank " << neighbour;
    peer.close_imported_pointer(theirs);
  }
  MPI_Barrier(comm);  // nobody frees before every neighbour has read
  pool.deallocate(host, mine, count * sizeof(std::uint64_t));
  pool.deallocate(host, padding, 1000 + 256 * static_cast<std::size_t>(rank));
  remove_directory(dir);
}

}  // namespace
