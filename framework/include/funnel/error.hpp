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
   * @brief An error whose source location message() can leave out.
   * @param message what went wrong, for the user
   * @param where where funnel's code found it (e.g. " [expected ... at file:line]"); what()
   *        carries it after the message, message() leaves it out
   */
  error(const std::string& message, const std::string& where)
      : std::runtime_error(message + where), message_length_(message.size()) {}
  /**
   * @brief The line an application prints for its user.
   * @return what() without the source location a check may have added (the `where` of the
   * two-argument constructor); all of what() otherwise
   */
  [[nodiscard]] std::string message() const {
    const std::string text = what();
    return message_length_ == npos ? text : text.substr(0, message_length_);
  }

 private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  std::size_t message_length_ = npos;
};

/**
 * @brief The text an application's `main` prints for any exception it catches.
 * @param e the exception
 * @return e.message() for funnel's exceptions, e.what() for others
 */
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
   * @brief A failed CUDA call (FUNNEL_CUDA_TRY builds the message).
   * @param what full message
   * @param code the cudaError_t value
   * @param name the CUDA error name, e.g. "cudaErrorInvalidValue"
   */
  cuda_error(const std::string& what, int code, std::string name)
      : error(what), code_(code), name_(std::move(name)) {}
  /**
   * @brief The CUDA runtime's error code, for code that reacts to particular errors.
   * @return the cudaError_t value as an int
   */
  [[nodiscard]] int code() const noexcept { return code_; }
  /**
   * @brief The CUDA error's name.
   * @return e.g. "cudaErrorInvalidValue"
   */
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  int code_;
  std::string name_;
};

/// @brief An MPI call failed.
class mpi_error : public error {
 public:
  /**
   * @brief A failed MPI call (FUNNEL_MPI_TRY builds the message).
   * @param what full message
   * @param code the MPI error code
   */
  mpi_error(const std::string& what, int code) : error(what), code_(code) {}
  /**
   * @brief The MPI error code, for code that reacts to particular errors.
   * @return what the MPI call returned
   */
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

/// @brief A system call (POSIX) failed; carries errno.
class system_error : public error {
 public:
  /**
   * @brief A failed system call (FUNNEL_SYSTEM_CHECK builds the message).
   * @param what full message
   * @param errnum the errno value
   */
  system_error(const std::string& what, int errnum) : error(what), errno_(errnum) {}
  /**
   * @brief The system's error code, for code that reacts to particular errors.
   * @return the errno value the call left
   */
  [[nodiscard]] int errnum() const noexcept { return errno_; }

 private:
  int errno_;
};

/// @brief An allocation failed: the device (or the pool's byte limit) could not satisfy it.
class out_of_memory : public error {
 public:
  /**
   * @brief A failed allocation; the message gives all the numbers.
   * @param requested bytes asked for
   * @param pool name of the pool asked
   * @param pool_used bytes the pool had handed out at the time
   * @param pool_reserved bytes the pool held from the device at the time
   * @param detail extra text (e.g. "byte limit 1048576 reached" or the CUDA error name)
   */
  out_of_memory(std::size_t requested, const std::string& pool, std::size_t pool_used,
                std::size_t pool_reserved, const std::string& detail);
  /**
   * @brief Size of the failed request.
   * @return bytes asked for; 0 when the error came from FUNNEL_CUDA_TRY, which does not know
   */
  [[nodiscard]] std::size_t requested_bytes() const noexcept { return requested_; }
  /**
   * @brief What the pool had handed out when the allocation failed.
   * @return bytes in use (0 from FUNNEL_CUDA_TRY)
   */
  [[nodiscard]] std::size_t pool_used_bytes() const noexcept { return used_; }
  /**
   * @brief What the pool held when the allocation failed.
   * @return bytes reserved from the device or host (0 from FUNNEL_CUDA_TRY)
   */
  [[nodiscard]] std::size_t pool_reserved_bytes() const noexcept { return reserved_; }

 private:
  std::size_t requested_;
  std::size_t used_;
  std::size_t reserved_;
};

// Internal: what the macros below call, not part of funnel's API (call the macros instead).
namespace detail {

/**
 * @brief FUNNEL_CUDA_TRY's check: throws unless `code` is cudaSuccess (0), after clearing the
 * thread's last CUDA error so that a later check does not report it again.
 * @param code the cudaError_t value as an int
 * @param call the call's text
 * @param file source file of the check
 * @param line its line
 * @param context extra text for the message; "" for none
 * @throw funnel::out_of_memory for cudaErrorMemoryAllocation (pool "cuda", sizes 0: not known here)
 * @throw funnel::cuda_error for any other error
 */
void check_cuda(int code, const char* call, const char* file, int line, const std::string& context);
/**
 * @brief FUNNEL_CUDA_LOG's check: logs a failed CUDA call to stderr, for destructors.
 * @param code the cudaError_t value as an int; 0 logs nothing
 * @param call the call's text
 * @param file source file of the check
 * @param line its line
 */
void log_cuda(int code, const char* call, const char* file, int line) noexcept;
/**
 * @brief FUNNEL_MPI_TRY's check: throws unless `code` is MPI_SUCCESS (0).
 * @param code what the MPI call returned
 * @param call the call's text
 * @param file source file of the check
 * @param line its line
 * @param context extra text for the message; "" for none
 * @throw funnel::mpi_error with MPI_Error_string's text for the code
 */
void check_mpi(int code, const char* call, const char* file, int line, const std::string& context);
/**
 * @brief FUNNEL_EXPECTS's failure.
 * @param cond the condition's text
 * @param file source file of the check
 * @param line its line
 * @param msg the message for the user (message() returns it alone)
 * @throw funnel::invalid_argument always, with the condition and file:line after `msg`
 */
[[noreturn]] void fail_expects(const char* cond, const char* file, int line,
                               const std::string& msg);
/**
 * @brief FUNNEL_SYSTEM_CHECK's failure.
 * @param errnum the errno value
 * @param call the failed call's name
 * @param file source file of the check
 * @param line its line
 * @param context extra text for the message; "" for none
 * @throw funnel::system_error always, with strerror(errnum)
 */
[[noreturn]] void fail_system(int errnum, const char* call, const char* file, int line,
                              const std::string& context);
/**
 * @brief Reports a problem that cannot be thrown (destructors, noexcept calls).
 * @param msg written to stderr as "funnel: <msg>"; never throws
 */
void log_error(const std::string& msg) noexcept;

}  // namespace detail
}  // namespace funnel

/**
 * @brief Calls a CUDA runtime function and throws funnel::cuda_error when it fails
 * (funnel::out_of_memory for cudaErrorMemoryAllocation).
 *
 * Usage: `FUNNEL_CUDA_TRY(cudaMemcpyAsync(...));` or `FUNNEL_CUDA_TRY(call, "context text")`.
 * @param ... the call, then optionally a context string for the message
 * @throw funnel::cuda_error, funnel::out_of_memory as detail::check_cuda()
 */
#define FUNNEL_CUDA_TRY(...) FUNNEL_DETAIL_CUDA_TRY(__VA_ARGS__, "", )
/// @cond INTERNAL
#define FUNNEL_DETAIL_CUDA_TRY(call, context, ...)                                \
  ::funnel::detail::check_cuda(static_cast<int>(call), #call, __FILE__, __LINE__, \
                               ::std::string{context})
/// @endcond

/**
 * @brief Calls a CUDA runtime function and logs (never throws) on failure: for destructors.
 * @param call the call, e.g. `cudaStreamDestroy(s)`
 */
#define FUNNEL_CUDA_LOG(call) \
  ::funnel::detail::log_cuda(static_cast<int>(call), #call, __FILE__, __LINE__)

/**
 * @brief Calls an MPI function and throws funnel::mpi_error when it does not return MPI_SUCCESS.
 *
 * Usage: `FUNNEL_MPI_TRY(MPI_Barrier(comm));` or `FUNNEL_MPI_TRY(call, "context text")`. Under
 * MPI's default handler (MPI_ERRORS_ARE_FATAL) a failing call aborts the job before returning;
 * only with MPI_ERRORS_RETURN does the failure reach this check.
 * @param ... the call, then optionally a context string for the message
 * @throw funnel::mpi_error as detail::check_mpi()
 */
#define FUNNEL_MPI_TRY(...) FUNNEL_DETAIL_MPI_TRY(__VA_ARGS__, "", )
/// @cond INTERNAL
#define FUNNEL_DETAIL_MPI_TRY(call, context, ...) \
  ::funnel::detail::check_mpi((call), #call, __FILE__, __LINE__, ::std::string{context})
/// @endcond

/**
 * @brief Checks a precondition.
 * @param cond the condition that must hold
 * @param msg what the user gets as message() when it does not (a std::string or C string)
 * @throw funnel::invalid_argument unless `cond` holds; what() adds the condition and file:line
 */
#define FUNNEL_EXPECTS(cond, msg)                                                  \
  do {                                                                             \
    if (!(cond)) ::funnel::detail::fail_expects(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)

/**
 * @brief Throws funnel::system_error built from errno when a system call's failure condition
 * holds.
 *
 * Usage: `FUNNEL_SYSTEM_CHECK(fd < 0, "open")` or with a third argument giving context.
 * @param ... the failure condition (e.g. `rc < 0`), the call's name, then optionally a context
 * string for the message
 * @throw funnel::system_error when the condition holds, with strerror(errno)
 */
#define FUNNEL_SYSTEM_CHECK(...) FUNNEL_DETAIL_SYSTEM_CHECK(__VA_ARGS__, "", )
/// @cond INTERNAL
#define FUNNEL_DETAIL_SYSTEM_CHECK(cond, call, context, ...)                                  \
  do {                                                                                        \
    if (cond)                                                                                 \
      ::funnel::detail::fail_system(errno, call, __FILE__, __LINE__, ::std::string{context}); \
  } while (0)
/// @endcond
