// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Unit tests of the io pieces that need no HDF5 and no MPI: atomic file updates, the directory
// lock and the termination flag.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "funnel/error.hpp"
#include "funnel/io/atomic_file.hpp"
#include "funnel/io/directory_lock.hpp"
#include "funnel/io/regular_file.hpp"
#include "funnel/io/termination_request.hpp"

namespace fs = std::filesystem;
using funnel::io::directory_lock;
using funnel::io::termination_request;

namespace {

std::string fresh_directory(const std::string& tag) {
  const fs::path dir =
      fs::temp_directory_path() / ("funnel-io-" + tag + "-" + std::to_string(::getpid()) + "-" +
                                   std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  return dir.string();
}

std::string hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// The pid of a child that has exited and been reaped: a pid that is certainly not running.
long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

void write_lock(const std::string& dir, const std::string& host, long pid) {
  std::ofstream(dir + "/" + directory_lock::file_name)
      << "host=" << host << "\npid=" << pid << "\n";
}

}  // namespace

TEST(AtomicFile, ReplacesContentsAndLeavesNoTemporary) {
  const std::string dir = fresh_directory("atomic");
  const std::string path = dir + "/marker";
  const std::string first = "first " + std::to_string(std::random_device{}());
  funnel::io::write_file_atomically(path, first);
  EXPECT_EQ(funnel::io::read_regular_file(path, 4096), first);
  funnel::io::write_file_atomically(path, "second");
  EXPECT_EQ(funnel::io::read_regular_file(path, 4096), "second");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_THROW(funnel::io::read_regular_file(dir + "/missing", 4096), funnel::system_error);
  EXPECT_THROW(funnel::io::sync_directory(dir + "/missing"), funnel::system_error);
  fs::remove_all(dir);
}

TEST(DirectoryLock, WritesOwnerAndReleases) {
  const std::string dir = fresh_directory("lock");
  {
    directory_lock lock(dir);
    const std::string contents = funnel::io::read_regular_file(lock.path(), 4096);
    EXPECT_NE(contents.find("host=" + hostname()), std::string::npos) << contents;
    EXPECT_NE(contents.find("pid=" + std::to_string(::getpid())), std::string::npos) << contents;
    EXPECT_FALSE(lock.took_over_stale_lock());
  }
  EXPECT_FALSE(fs::exists(dir + "/" + directory_lock::file_name));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 0)
      << "no temporary file may be left behind";
  fs::remove_all(dir);
}

TEST(DirectoryLock, SecondWriterIsRefusedWithOwner) {
  const std::string dir = fresh_directory("lock2");
  directory_lock first(dir);
  try {
    directory_lock second(dir);
    FAIL() << "a second lock of the same directory must be refused";
  } catch (const funnel::error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("in use by another run"), std::string::npos) << what;
    EXPECT_NE(what.find("pid " + std::to_string(::getpid())), std::string::npos) << what;
    EXPECT_NE(what.find(dir), std::string::npos) << what;
  }
  EXPECT_TRUE(fs::exists(first.path())) << "a refused writer must not remove the owner's lock";
  fs::remove_all(dir);
}

TEST(DirectoryLock, StaleLockOfDeadProcessIsTakenOver) {
  const std::string dir = fresh_directory("stale");
  const long dead = dead_pid();
  write_lock(dir, hostname(), dead);
  directory_lock lock(dir);
  EXPECT_TRUE(lock.took_over_stale_lock());
  EXPECT_NE(
      funnel::io::read_regular_file(lock.path(), 4096).find("pid=" + std::to_string(::getpid())),
      std::string::npos);
  fs::remove_all(dir);
}

TEST(DirectoryLock, ZombieOwnerCountsAsDead) {
  const std::string dir = fresh_directory("zombie");
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  // Not reaped yet: the child is a zombie, which kill(pid, 0) still reports as existing.
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string text;
    std::getline(stat, text);
    if (text.find(") Z") != std::string::npos) break;
    ::usleep(5000);
  }
  write_lock(dir, hostname(), child);
  directory_lock lock(dir);
  EXPECT_TRUE(lock.took_over_stale_lock());
  int status = 0;
  ::waitpid(child, &status, 0);
  fs::remove_all(dir);
}

TEST(DirectoryLock, LockFromAnotherHostIsRefused) {
  const std::string dir = fresh_directory("remote");
  write_lock(dir, "some-other-node-" + std::to_string(std::random_device{}()), dead_pid());
  try {
    directory_lock lock(dir);
    FAIL() << "a lock of another host cannot be checked and must be refused";
  } catch (const funnel::error& e) {
    EXPECT_NE(std::string(e.what()).find("another host"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(DirectoryLock, GarbageLockIsRefused) {
  const std::string dir = fresh_directory("garbage");
  std::ofstream(dir + "/" + directory_lock::file_name) << "not a lock\n";
  EXPECT_THROW(directory_lock lock(dir), funnel::error);
  fs::remove_all(dir);
}

TEST(DirectoryLock, ReleaseKeepsALockThatIsNoLongerOurs) {
  const std::string dir = fresh_directory("foreign");
  directory_lock lock(dir);
  write_lock(dir, hostname(), 1);  // someone replaced it (e.g. after judging us dead)
  lock.release();
  EXPECT_TRUE(fs::exists(dir + "/" + directory_lock::file_name));
  fs::remove_all(dir);
}

class TerminationRequest : public ::testing::TestWithParam<int> {};

TEST_P(TerminationRequest, SignalSetsTheFlag) {
  termination_request request;
  request.reset();
  EXPECT_FALSE(request.requested());
  ASSERT_EQ(std::raise(GetParam()), 0);
  EXPECT_TRUE(request.requested());
  EXPECT_EQ(request.signal_number(), GetParam());
  request.reset();
  EXPECT_FALSE(request.requested());
}

INSTANTIATE_TEST_SUITE_P(Signals, TerminationRequest, ::testing::Values(SIGTERM, SIGUSR1),
                         [](const auto& param_info) {
                           return std::string(param_info.param == SIGTERM ? "SIGTERM" : "SIGUSR1");
                         });

TEST(TerminationRequestObject, OnlyOneAtATimeAndHandlersRestored) {
  {
    termination_request request;
    EXPECT_THROW(termination_request second, funnel::invalid_argument);
  }
  struct sigaction current {};
  ::sigaction(SIGUSR1, nullptr, &current);
  EXPECT_EQ(current.sa_handler, SIG_DFL) << "the previous (default) handler must be restored";
  termination_request again;  // allowed once the first is gone
  EXPECT_EQ(termination_request::requeue_exit_code, 75);
}
