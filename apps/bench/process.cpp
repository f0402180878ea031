// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "funnel/error.hpp"

#ifndef FUNNEL_BENCH_MPIEXEC
#define FUNNEL_BENCH_MPIEXEC "mpirun"
#endif

namespace funnel::bench {

std::string process_result::log_tail(std::size_t max_chars) const {
  std::ifstream in(log_path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  if (all.size() > max_chars) all = "..." + all.substr(all.size() - max_chars);
  return all;
}

process_result run_process(const std::vector<std::string>& argv,
                           const std::vector<std::string>& extra_env, const std::string& log_path,
                           double timeout_s) {
  FUNNEL_EXPECTS(!argv.empty(), "run_process needs a program to run");
  process_result result;
  result.log_path = log_path;
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  FUNNEL_SYSTEM_CHECK(log < 0, "open", log_path);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(log);
    errno = err;
    FUNNEL_SYSTEM_CHECK(true, "fork", argv.front());
  }
  if (pid == 0) {
    // Child: own process group (so a time-out can stop mpirun and everything it started),
    // output into the log, then the program. Only async-signal-safe calls and _exit here.
    ::setpgid(0, 0);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    for (const std::string& entry : extra_env) ::putenv(const_cast<char*>(entry.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    const char msg[] = "funnel-bench: exec failed\n";
    (void)!::write(STDERR_FILENO, msg, sizeof(msg) - 1);
    ::_exit(127);
  }
  ::close(log);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > timeout_s && !result.timed_out) {
      result.timed_out = true;
      ::kill(-pid, SIGTERM);
      std::this_thread::sleep_for(std::chrono::seconds(2));
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

std::string self_executable() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("funnel-bench") : path.string();
}

std::string sibling_program(const std::string& bin_dir, const std::string& name) {
  const std::string path = bin_dir + "/" + name;
  return ::access(path.c_str(), X_OK) == 0 ? path : std::string{};
}

std::vector<std::string> mpirun_prefix(int ranks) {
  const char* from_env = std::getenv("FUNNEL_BENCH_MPIEXEC");
  std::vector<std::string> cmd = {
      from_env != nullptr && *from_env != '\0' ? from_env : FUNNEL_BENCH_MPIEXEC, "-np",
      std::to_string(ranks), "--oversubscribe"};
  if (::geteuid() == 0) cmd.emplace_back("--allow-run-as-root");
  return cmd;
}

std::string make_scratch_dir(const std::string& tag) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/funnel-bench-" + tag + ".XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  FUNNEL_SYSTEM_CHECK(::mkdtemp(buffer.data()) == nullptr, "mkdtemp", pattern);
  return buffer.data();
}

void remove_tree(const std::string& path) noexcept {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace funnel::bench
