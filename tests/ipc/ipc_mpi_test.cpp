// allgather_fds and host-pool IPC between real MPI ranks of one node.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/ipc/fd_exchange.hpp"
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

TEST(DefaultJobDirectory, AllRanksAgree) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const char* saved = std::getenv("FUNNEL_JOB_DIR");
  const std::string saved_value = saved != nullptr ? saved : "";
  ::unsetenv("FUNNEL_JOB_DIR");
  const std::string dir = funnel::default_job_directory(comm);
  EXPECT_NE(dir.find("/funnel-" + std::to_string(::geteuid()) + "-"), std::string::npos) << dir;
  int length = static_cast<int>(dir.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  std::string root_dir(static_cast<std::size_t>(length), '\0');
  if (rank_of(comm) == 0) root_dir = dir;
  MPI_Bcast(root_dir.data(), length, MPI_CHAR, 0, comm);
  EXPECT_EQ(dir, root_dir);
  ::setenv("FUNNEL_JOB_DIR", "/somewhere/else", 1);
  EXPECT_EQ(funnel::default_job_directory(comm), "/somewhere/else");
  if (saved != nullptr) {
    ::setenv("FUNNEL_JOB_DIR", saved_value.c_str(), 1);
  } else {
    ::unsetenv("FUNNEL_JOB_DIR");
  }
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
