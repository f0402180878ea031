// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// unique_fd: closes what it owns, moves, releases, duplicates.
#include "funnel/ipc/unique_fd.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "funnel/error.hpp"

namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

std::array<int, 2> make_pipe() {
  std::array<int, 2> fds{};
  EXPECT_EQ(::pipe2(fds.data(), O_CLOEXEC), 0);
  return fds;
}

TEST(UniqueFd, ClosesOnDestruction) {
  auto [r, w] = make_pipe();
  {
    funnel::unique_fd reader(r);
    funnel::unique_fd writer(w);
    EXPECT_TRUE(reader.valid());
    EXPECT_EQ(reader.get(), r);
  }
  EXPECT_FALSE(is_open(r));
  EXPECT_FALSE(is_open(w));
}

TEST(UniqueFd, MoveTransfersOwnership) {
  auto [r, w] = make_pipe();
  funnel::unique_fd a(r);
  funnel::unique_fd b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(a.get(), -1);
  EXPECT_EQ(b.get(), r);
  funnel::unique_fd c(w);
  c = std::move(b);  // closes w
  EXPECT_FALSE(is_open(w));
  EXPECT_EQ(c.get(), r);
  EXPECT_TRUE(is_open(r));
}

TEST(UniqueFd, ReleaseAndReset) {
  auto [r, w] = make_pipe();
  funnel::unique_fd a(r);
  const int raw = a.release();
  EXPECT_EQ(raw, r);
  EXPECT_FALSE(a);
  EXPECT_TRUE(is_open(r)) << "release must not close";
  a.reset(raw);
  EXPECT_TRUE(a);
  a.reset(w);
  EXPECT_FALSE(is_open(r));
  a.reset();
  EXPECT_FALSE(is_open(w));
  EXPECT_EQ(a.get(), -1);
}

TEST(UniqueFd, DuplicateIsAnIndependentDescriptor) {
  auto [r, w] = make_pipe();
  funnel::unique_fd reader(r);
  funnel::unique_fd writer(w);
  funnel::unique_fd copy = writer.duplicate();
  EXPECT_NE(copy.get(), writer.get());
  EXPECT_NE(::fcntl(copy.get(), F_GETFD) & FD_CLOEXEC, 0);
  writer.reset();
  const char byte = 42;
  ASSERT_EQ(::write(copy.get(), &byte, 1), 1) << "the duplicate outlives the original";
  char got = 0;
  ASSERT_EQ(::read(reader.get(), &got, 1), 1);
  EXPECT_EQ(got, byte);
  funnel::unique_fd empty;
  EXPECT_THROW((void)empty.duplicate(), funnel::invalid_argument);
}

}  // namespace
