// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file process.hpp
 * @brief Child processes for the benchmarks that need a process tree: mpirun, funnel-run,
 * funnel-stencil and funnel-bench's own worker modes.
 */
#pragma once

#include <string>
#include <vector>

namespace funnel::bench {

/// @brief How a child process ended.
struct process_result {
  int exit_code = -1;      ///< exit status, 128 + signal when killed, -1 when it never ran
  bool timed_out = false;  ///< killed after the time limit
  double seconds = 0.0;    ///< wall time
  std::string log_path;    ///< where its stdout and stderr went
  /// @brief The last lines of the log, for error messages.
  [[nodiscard]] std::string log_tail(std::size_t max_chars = 1500) const;
  /// @brief True for exit status 0 within the time limit.
  [[nodiscard]] bool ok() const noexcept { return exit_code == 0 && !timed_out; }
};

/**
 * @brief Runs a program to completion, stdout and stderr into `log_path`.
 * @param argv program and arguments (argv[0] is looked up on PATH when it has no '/')
 * @param extra_env "NAME=value" entries added to (or replacing in) this process's environment
 * @param log_path file that receives the output (replaced)
 * @param timeout_s wall-time limit; the child's whole process group is killed after it
 * @return how it ended
 * @throw funnel::system_error when fork or the log file fail
 */
[[nodiscard]] process_result run_process(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& extra_env,
                                         const std::string& log_path, double timeout_s);

/// @brief Absolute path of the running executable (/proc/self/exe).
[[nodiscard]] std::string self_executable();

/**
 * @brief A program installed beside funnel-bench (funnel-run, funnel-stencil).
 * @param bin_dir funnel-bench's folder
 * @param name program name
 * @return its path, or "" when it is not there or not executable
 */
[[nodiscard]] std::string sibling_program(const std::string& bin_dir, const std::string& name);

/**
 * @brief The mpirun command start for `ranks` ranks on this node: FUNNEL_BENCH_MPIEXEC or the
 * mpiexec CMake found, `-np N`, `--oversubscribe`, and `--allow-run-as-root` when run as root.
 * @param ranks number of ranks
 */
[[nodiscard]] std::vector<std::string> mpirun_prefix(int ranks);

/**
 * @brief Creates a private scratch folder (mkdtemp under $TMPDIR or /tmp).
 * @param tag part of its name
 * @return its path
 * @throw funnel::system_error when it cannot be made
 */
[[nodiscard]] std::string make_scratch_dir(const std::string& tag);

/**
 * @brief Removes a folder and what is in it (best effort; errors are ignored).
 * @param path the folder
 */
void remove_tree(const std::string& path) noexcept;

}  // namespace funnel::bench
