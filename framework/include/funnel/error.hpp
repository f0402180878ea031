// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file error.hpp
 * @brief funnel's one error header: typed exceptions and the macros that raise them.
 *
 * Every failing CUDA, MPI or precondition check in funnel goes through the macros here, so
 * every error carries the failing call's text, file:line, the CUDA/MPI error name where there
 * is one, and a context string.
 */
#pragma once

#include <cerrno>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace funnel {

/// @brief Base of every exception funnel throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  /**
   * @param message what went wrong, for the user
   * @param where where funnel's code found it (e.g. " [expected ... at file:line]"); what()
   *        carries it after the message, message() leaves it out
   */
  error(const std::string& message, const std::string& where)
      : std::runtime_error(message + where), message_length_(message.size()) {}
  /// @brief what() without the source location a check may have added: the line an
  /// application prints for its user.
  [[nodiscard]] std::string message() const {
    const std::string text = what();
    return message_length_ == npos ? text : text.substr(0, message_length_);
  }

 private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  std::size_t message_length_ = npos;
};

/// @brief e.message() for funnel's exceptions, e.what() for others.
[[nodiscard]] inline std::string user_message(const std::exception& e) {
  if (const auto* f = dynamic_cast<const error*>(&e)) return f->message();
  return e.what();
}

/// @brief A precondition failed: a bad argument or a call in the wrong state.
class invalid_argument : public error {
 public:
  using error::error;
};

/// @brief The request is valid but this build or machine cannot honour it
/// (e.g. the CUDA backend asked for on a machine without a GPU).
class unsupported : public error {
 public:
  using error::error;
};

/// @brief Work waits on another rank that stopped making progress (it exited, was stopped, or
/// its GPU work never arrives): waiting longer would hang the job. The message names the rank.
class stall_error : public error {
 public:
  using error::error;
};

/// @brief A CUDA runtime call failed.
class cuda_error : public error {
 public:
  /**
   * @param what full message
   * @param code the cudaError_t value
   * @param name the CUDA error name, e.g. "cudaErrorInvalidValue"
   */
  cuda_error(const std::string& what, int code, std::string name)
      : error(what), code_(code), name_(std::move(name)) {}
  /// @brief The cudaError_t value as an int.
  [[nodiscard]] int code() const noexcept { return code_; }
  /// @brief The CUDA error name, e.g. "cudaErrorMemoryAllocation".
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  int code_;
  std::string name_;
};

/// @brief An MPI call failed.
class mpi_error : public error {
 public:
  /**
   * @param what full message
   * @param code the MPI error code
   */
  mpi_error(const std::string& what, int code) : error(what), code_(code) {}
  /// @brief The MPI error code.
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

/// @brief A system call (POSIX) failed; carries errno.
class system_error : public error {
 public:
  /**
   * @param what full message
   * @param errnum the errno value
   */
  system_error(const std::string& what, int errnum) : error(what), errno_(errnum) {}
  /// @brief The errno value.
  [[nodiscard]] int errnum() const noexcept { return errno_; }

 private:
  int errno_;
};

/// @brief An allocation failed: the device (or the pool's byte limit) could not satisfy it.
class out_of_memory : public error {
 public:
  /**
   * @param requested bytes asked for
   * @param pool name of the pool asked
   * @param pool_used bytes the pool had handed out at the time
   * @param pool_reserved bytes the pool held from the device at the time
   * @param detail extra text (e.g. "byte limit 1048576 reached" or the CUDA error name)
   */
  out_of_memory(std::size_t requested, const std::string& pool, std::size_t pool_used,
                std::size_t pool_reserved, const std::string& detail);
  /// @brief Bytes that were asked for.
  [[nodiscard]] std::size_t requested_bytes() const noexcept { return requested_; }
  /// @brief Bytes the pool had handed out when the allocation failed.
  [[nodiscard]] std::size_t pool_used_bytes() const noexcept { return used_; }
  /// @brief Bytes the pool held when the allocation failed.
  [[nodiscard]] std::size_t pool_reserved_bytes() const noexcept { return reserved_; }

 private:
  std::size_t requested_;
  std::size_t used_;
  std::size_t reserved_;
};

namespace detail {

/// @brief Throws cuda_error (or out_of_memory for cudaErrorMemoryAllocation) unless code == 0.
void check_cuda(int code, const char* call, const char* file, int line, const std::string& context);
/// @brief Logs a failed CUDA call to stderr without throwing (for destructors).
void log_cuda(int code, const char* call, const char* file, int line) noexcept;
/// @brief Throws mpi_error unless code == MPI_SUCCESS (0).
void check_mpi(int code, const char* call, const char* file, int line, const std::string& context);
/// @brief Throws invalid_argument with the condition text, file:line and the message.
[[noreturn]] void fail_expects(const char* cond, const char* file, int line,
                               const std::string& msg);
/// @brief Throws system_error with strerror(errnum).
[[noreturn]] void fail_system(int errnum, const char* call, const char* file, int line,
                              const std::string& context);
/// @brief Writes "funnel: <msg>" to stderr; never throws.
void log_error(const std::string& msg) noexcept;

}  // namespace detail
}  // namespace funnel

/**
 * @brief Calls a CUDA runtime function and throws funnel::cuda_error when it fails
 * (funnel::out_of_memory for cudaErrorMemoryAllocation).
 * Usage: `FUNNEL_CUDA_TRY(cudaMemcpyAsync(...));` or `FUNNEL_CUDA_TRY(call, "context text")`.
 */
#define FUNNEL_CUDA_TRY(...) FUNNEL_DETAIL_CUDA_TRY(__VA_ARGS__, "", )
/// @cond INTERNAL
#define FUNNEL_DETAIL_CUDA_TRY(call, context, ...)                                \
  ::funnel::detail::check_cuda(static_cast<int>(call), #call, __FILE__, __LINE__, \
                               ::std::string{context})
/// @endcond

/// @brief Calls a CUDA runtime function and logs (never throws) on failure: for destructors.
#define FUNNEL_CUDA_LOG(call) \
  ::funnel::detail::log_cuda(static_cast<int>(call), #call, __FILE__, __LINE__)

/// @brief Calls an MPI function and throws funnel::mpi_error when it does not return MPI_SUCCESS.
/// Usage: `FUNNEL_MPI_TRY(MPI_Barrier(comm));` or `FUNNEL_MPI_TRY(call, "context text")`.
#define FUNNEL_MPI_TRY(...) FUNNEL_DETAIL_MPI_TRY(__VA_ARGS__, "", )
/// @cond INTERNAL
#define FUNNEL_DETAIL_MPI_TRY(call, context, ...) \
  ::funnel::detail::check_mpi((call), #call, __FILE__, __LINE__, ::std::string{context})
/// @endcond

/// @brief Throws funnel::invalid_argument with `msg` unless `cond` holds.
#define FUNNEL_EXPECTS(cond, msg)                                                  \
  do {                                                                             \
    if (!(cond)) ::funnel::detail::fail_expects(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)

/// @brief Throws funnel::system_error built from errno when `cond` holds (e.g. `rc < 0`).
/// Usage: `FUNNEL_SYSTEM_CHECK(fd < 0, "open")` or with a third argument giving context.
#define FUNNEL_SYSTEM_CHECK(...) FUNNEL_DETAIL_SYSTEM_CHECK(__VA_ARGS__, "", )
/// @cond INTERNAL
#define FUNNEL_DETAIL_SYSTEM_CHECK(cond, call, context, ...)                                  \
  do {                                                                                        \
    if (cond)                                                                                 \
      ::funnel::detail::fail_system(errno, call, __FILE__, __LINE__, ::std::string{context}); \
  } while (0)
/// @endcond
