// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// allgather_fds: every rank of a node listens on <job_dir>/fd-<rank>.sock, connects to every
// other node rank's socket and sends its descriptor (SCM_RIGHTS), then accepts one connection
// per peer and receives theirs. Sending never waits for the peer to accept (the connection
// queues in the listen backlog), so no rank can block another. Two small agreements over MPI,
// one after setting up and one at the end, make every rank throw when any rank failed, so a
// failure never leaves the others hanging in a later collective.
#include "funnel/ipc/fd_exchange.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <random>
#include <thread>
#include <vector>

#include "funnel/error.hpp"
#include "private_directory.hpp"

namespace funnel {
namespace {

using clock_type = std::chrono::steady_clock;

// The payload sent along with the descriptor: who sends it.
struct fd_message {
  static constexpr std::uint32_t magic_value = 0x464e4644;  // "FNFD"
  std::uint32_t magic;
  std::int32_t rank;
};

// The directory holds sockets that hand out our pools' memory, so only we may reach it. True when
// this call made it (then it removes it again, see close_and_tidy).
bool ensure_private_directory(const std::string& dir) {
  FUNNEL_EXPECTS(!dir.empty(), "allgather_fds: the job directory must not be empty");
  bool made = true;
  if (::mkdir(dir.c_str(), 0700) != 0) {
    if (errno != EEXIST) {
      FUNNEL_SYSTEM_CHECK(true, "mkdir",
                          "creating job directory '" + dir + "' (its parent directory must exist)");
    }
    made = false;
  }
  detail::check_private_directory(dir, "job directory");
  return made;
}

std::string socket_path(const std::string& dir, int rank) {
  return dir + "/fd-" + std::to_string(rank) + ".sock";
}

sockaddr_un socket_address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  FUNNEL_EXPECTS(path.size() < sizeof address.sun_path,
                 "socket path '" + path + "' is " + std::to_string(path.size()) +
                     " characters; at most " + std::to_string(sizeof address.sun_path - 1) +
                     " fit in a Unix socket address (choose a shorter job directory)");
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

unique_fd make_socket() {
  unique_fd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  FUNNEL_SYSTEM_CHECK(!sock, "socket(AF_UNIX)", "allgather_fds");
  return sock;
}

void set_timeouts(int sock, std::chrono::milliseconds timeout) {
  const auto ms = std::max<std::int64_t>(timeout.count(), 1);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  FUNNEL_SYSTEM_CHECK(::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0,
                      "setsockopt(SO_RCVTIMEO)", "allgather_fds");
  FUNNEL_SYSTEM_CHECK(::setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0,
                      "setsockopt(SO_SNDTIMEO)", "allgather_fds");
}

std::chrono::milliseconds remaining(clock_type::time_point deadline) {
  return std::max(
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()),
      std::chrono::milliseconds(0));
}

// Refuses a peer that runs as another user: it must neither get nor give us descriptors.
void check_peer_user(int sock, const std::string& what) {
  ucred cred{};
  socklen_t length = sizeof cred;
  FUNNEL_SYSTEM_CHECK(::getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0,
                      "getsockopt(SO_PEERCRED)", what);
  if (cred.uid != ::geteuid()) {
    throw error("allgather_fds: " + what + ": peer process " + std::to_string(cred.pid) +
                " runs as uid " + std::to_string(cred.uid) + ", not as this user (uid " +
                std::to_string(::geteuid()) + "); refusing to exchange descriptors");
  }
}

// A listening socket whose file is removed when it closes, on every path out of allgather_fds.
class listening_socket {
 public:
  listening_socket() = default;
  listening_socket(unique_fd sock, std::string path)
      : sock_(std::move(sock)), path_(std::move(path)) {}
  listening_socket(const listening_socket&) = delete;
  listening_socket& operator=(const listening_socket&) = delete;
  listening_socket(listening_socket&& other) noexcept
      : sock_(std::move(other.sock_)), path_(std::move(other.path_)) {
    other.path_.clear();
  }
  listening_socket& operator=(listening_socket&& other) noexcept {
    close();
    sock_ = std::move(other.sock_);
    path_ = std::move(other.path_);
    other.path_.clear();
    return *this;
  }
  ~listening_socket() { close(); }

  [[nodiscard]] int get() const noexcept { return sock_.get(); }
  void close() noexcept {
    if (!path_.empty()) ::unlink(path_.c_str());
    path_.clear();
    sock_.reset();
  }

 private:
  unique_fd sock_;
  std::string path_;
};

listening_socket listen_on(const std::string& path) {
  const sockaddr_un address = socket_address(path);
  unique_fd sock = make_socket();
  // A socket file left by a crashed run of this job is ours (the directory is private).
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    FUNNEL_SYSTEM_CHECK(true, "unlink", "stale socket '" + path + "'");
  }
  FUNNEL_SYSTEM_CHECK(
      ::bind(sock.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0, "bind",
      "socket '" + path + "'");
  listening_socket listener(std::move(sock), path);
  FUNNEL_SYSTEM_CHECK(::listen(listener.get(), SOMAXCONN) != 0, "listen", "socket '" + path + "'");
  const int flags = ::fcntl(listener.get(), F_GETFL);
  FUNNEL_SYSTEM_CHECK(flags < 0 || ::fcntl(listener.get(), F_SETFL, flags | O_NONBLOCK) != 0,
                      "fcntl(O_NONBLOCK)", "socket '" + path + "'");
  return listener;
}

void send_fd(const std::string& path, int my_rank, int fd, clock_type::time_point deadline) {
  const sockaddr_un address = socket_address(path);
  unique_fd sock = make_socket();
  set_timeouts(sock.get(), remaining(deadline));
  // Every listener exists before anyone connects, so retrying only covers transient refusals.
  while (::connect(sock.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const bool transient = errno == EAGAIN || errno == ECONNREFUSED || errno == EINTR;
    if (!transient || clock_type::now() >= deadline) {
      FUNNEL_SYSTEM_CHECK(true, "connect", "to node rank socket '" + path + "'");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  check_peer_user(sock.get(), "socket '" + path + "'");

  fd_message message{fd_message::magic_value, my_rank};
  iovec payload{&message, sizeof message};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr header{};
  header.msg_iov = &payload;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  cmsghdr* cmsg = CMSG_FIRSTHDR(&header);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
  ssize_t sent = -1;
  do {
    sent = ::sendmsg(sock.get(), &header, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  FUNNEL_SYSTEM_CHECK(sent < 0, "sendmsg(SCM_RIGHTS)", "to socket '" + path + "'");
  if (static_cast<std::size_t>(sent) != sizeof message) {
    throw error("allgather_fds: short write to socket '" + path + "'");
  }
}

// Receives one (rank, descriptor) message from an accepted connection.
std::pair<int, unique_fd> receive_fd(int sock, const std::string& path) {
  fd_message message{};
  iovec payload{&message, sizeof message};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr header{};
  header.msg_iov = &payload;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  ssize_t got = -1;
  do {
    got = ::recvmsg(sock, &header, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (got < 0 && errno == EINTR);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    throw error("allgather_fds: timed out waiting for a peer's descriptor on '" + path + "'");
  }
  FUNNEL_SYSTEM_CHECK(got < 0, "recvmsg(SCM_RIGHTS)", "on socket '" + path + "'");
  // Every descriptor that came is owned (and closed) here, however many a peer sent: a funnel
  // peer sends exactly one, in one SCM_RIGHTS message.
  std::vector<unique_fd> descriptors;
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&header); cmsg != nullptr; cmsg = CMSG_NXTHDR(&header, cmsg)) {
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS &&
        cmsg->cmsg_len >= CMSG_LEN(0)) {
      const std::size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof fd);
        descriptors.emplace_back(fd);
      }
    }
  }
  unique_fd received;
  if (descriptors.size() == 1) received = std::move(descriptors.front());
  if (static_cast<std::size_t>(got) != sizeof message || message.magic != fd_message::magic_value ||
      !received || (header.msg_flags & MSG_CTRUNC) != 0) {
    throw error("allgather_fds: malformed message on socket '" + path +
                "' (not a funnel peer, or the descriptor was lost)");
  }
  return {message.rank, std::move(received)};
}

// Accepts one connection per peer and files each descriptor under its sender's rank.
void receive_all(int listener, const std::string& path, int my_rank, std::vector<unique_fd>& result,
                 clock_type::time_point deadline) {
  const int size = static_cast<int>(result.size());
  for (int received = 0; received < size - 1;) {
    pollfd waiting{listener, POLLIN, 0};
    const int ready = ::poll(&waiting, 1, static_cast<int>(remaining(deadline).count()));
    if (ready < 0 && errno == EINTR) continue;
    FUNNEL_SYSTEM_CHECK(ready < 0, "poll", "socket '" + path + "'");
    if (ready == 0) {
      std::string missing;
      for (int r = 0; r < size; ++r) {
        if (r != my_rank && !result[r]) missing += (missing.empty() ? "" : ",") + std::to_string(r);
      }
      throw error("allgather_fds: timed out on '" + path + "' waiting for node rank(s) " + missing +
                  " to send their descriptor");
    }
    unique_fd connection(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
    if (!connection && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    FUNNEL_SYSTEM_CHECK(!connection, "accept4", "socket '" + path + "'");
    // accept4 does not pass O_NONBLOCK on; the receive is bounded by SO_RCVTIMEO instead.
    set_timeouts(connection.get(), std::max(remaining(deadline), std::chrono::milliseconds(1)));
    check_peer_user(connection.get(), "socket '" + path + "'");
    auto [rank, fd] = receive_fd(connection.get(), path);
    if (rank < 0 || rank >= size || rank == my_rank || result[rank]) {
      throw error("allgather_fds: unexpected sender rank " + std::to_string(rank) + " on '" + path +
                  "' (node communicator has " + std::to_string(size) + " ranks)");
    }
    result[rank] = std::move(fd);
    ++received;
  }
}

// Collective: nullptr on every rank when every rank succeeded; otherwise, on every rank, what to
// throw: this rank's own failure, or which other ranks failed.
std::exception_ptr agree(MPI_Comm comm, const std::exception_ptr& failure, const char* phase) {
  int rank = 0;
  int size = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &rank), "allgather_fds");
  FUNNEL_MPI_TRY(MPI_Comm_size(comm, &size), "allgather_fds");
  int ok = failure ? 0 : 1;
  std::vector<int> all(static_cast<std::size_t>(size));
  FUNNEL_MPI_TRY(MPI_Allgather(&ok, 1, MPI_INT, all.data(), 1, MPI_INT, comm),
                 "allgather_fds agreement");
  if (failure) return failure;
  std::string failed;
  for (int r = 0; r < size; ++r) {
    if (all[static_cast<std::size_t>(r)] == 0) {
      failed += (failed.empty() ? "" : ",") + std::to_string(r);
    }
  }
  if (failed.empty()) return nullptr;
  return std::make_exception_ptr(error(std::string("allgather_fds: node rank(s) ") + failed +
                                       " failed while " + phase + " (see their error); node rank " +
                                       std::to_string(rank) + " gives up too"));
}

// Collective, after every rank's exchange: the listening sockets are closed, then the rank that
// made the job directory removes it (when empty), and nobody starts another exchange in that
// directory before it is gone.
void close_and_tidy(MPI_Comm comm, listening_socket& listener, const std::string& dir, bool made) {
  listener.close();
  FUNNEL_MPI_TRY(MPI_Barrier(comm), "allgather_fds: closing the sockets");
  if (made && ::rmdir(dir.c_str()) != 0 && errno != ENOTEMPTY && errno != EEXIST &&
      errno != ENOENT) {
    detail::log_error("allgather_fds: rmdir '" + dir + "': " + std::strerror(errno));
  }
  FUNNEL_MPI_TRY(MPI_Barrier(comm), "allgather_fds: removing the job directory");
}

std::string sanitized(std::string id) {
  for (char& c : id) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '_';
    if (!keep) c = '_';
  }
  return id;
}

// The launch's id as rank 0 sees it (see default_job_directory).
std::string local_job_id() {
  if (std::string slurm = detail::env_or_empty("SLURM_JOB_ID"); !slurm.empty()) {
    const std::string step = detail::env_or_empty("SLURM_STEP_ID");
    return step.empty() ? slurm : slurm + "." + step;
  }
  for (const char* name : {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"}) {
    if (std::string id = detail::env_or_empty(name); !id.empty()) return id;
  }
  return std::to_string(::getpid()) + "-" + std::to_string(std::time(nullptr));
}

}  // namespace

std::vector<unique_fd> allgather_fds(MPI_Comm node_comm, int my_fd, const std::string& job_dir,
                                     std::chrono::milliseconds timeout) {
  int rank = 0;
  int size = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(node_comm, &rank), "allgather_fds");
  FUNNEL_MPI_TRY(MPI_Comm_size(node_comm, &size), "allgather_fds");
  std::vector<unique_fd> result(static_cast<std::size_t>(size));
  const std::string path = socket_path(job_dir, rank);

  std::exception_ptr failure;
  listening_socket listener;
  bool made = false;
  try {
    FUNNEL_EXPECTS(::fcntl(my_fd, F_GETFD) != -1,
                   "allgather_fds: my_fd " + std::to_string(my_fd) + " is not an open descriptor");
    made = ensure_private_directory(job_dir);
    const int copy = ::fcntl(my_fd, F_DUPFD_CLOEXEC, 0);
    FUNNEL_SYSTEM_CHECK(copy < 0, "fcntl(F_DUPFD_CLOEXEC)", "fd " + std::to_string(my_fd));
    result[static_cast<std::size_t>(rank)].reset(copy);
  } catch (...) {
    failure = std::current_exception();
  }
  if (!failure && size > 1) {
    try {
      listener = listen_on(path);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  if (std::exception_ptr verdict = agree(node_comm, failure, "setting up their socket")) {
    close_and_tidy(node_comm, listener, job_dir, made);
    std::rethrow_exception(verdict);
  }

  try {
    const auto deadline = clock_type::now() + timeout;
    // Start with the next rank so not every rank knocks on rank 0 first.
    for (int step = 1; step < size; ++step) {
      const int peer = (rank + step) % size;
      send_fd(socket_path(job_dir, peer), rank, my_fd, deadline);
    }
    receive_all(listener.get(), path, rank, result, deadline);
  } catch (...) {
    failure = std::current_exception();
  }
  const std::exception_ptr verdict = agree(node_comm, failure, "exchanging descriptors");
  close_and_tidy(node_comm, listener, job_dir, made);
  if (verdict) std::rethrow_exception(verdict);
  return result;
}

std::string default_job_directory(MPI_Comm comm) {
  int rank = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &rank), "default_job_directory");
  // Always broadcast, so every rank takes part even when some have FUNNEL_JOB_DIR set. The random
  // part keeps another user from taking the name before the job makes the directory.
  std::string id;
  if (rank == 0) {
    std::random_device entropy;
    char random_part[17];
    std::snprintf(random_part, sizeof random_part, "%08x%08x", entropy(), entropy());
    id = sanitized(local_job_id()) + "-" + random_part;
  }
  int length = static_cast<int>(id.size());
  FUNNEL_MPI_TRY(MPI_Bcast(&length, 1, MPI_INT, 0, comm), "default_job_directory");
  id.resize(static_cast<std::size_t>(length));
  FUNNEL_MPI_TRY(MPI_Bcast(id.data(), length, MPI_CHAR, 0, comm), "default_job_directory");
  if (std::string dir = detail::env_or_empty("FUNNEL_JOB_DIR"); !dir.empty()) return dir;
  if (std::string run_dir = detail::env_or_empty("FUNNEL_RUN_DIR"); !run_dir.empty()) {
    return run_dir + "/fd-" + id;
  }
  std::string base = detail::env_or_empty("TMPDIR");
  if (base.empty()) base = "/tmp";
  return base + "/funnel-" + std::to_string(::geteuid()) + "-" + id;
}

}  // namespace funnel
