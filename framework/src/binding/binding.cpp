// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/binding/binding.hpp"

#include <mpi.h>
#include <sys/stat.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "../core/collective.hpp"
#include "cuda_context.hpp"
#include "funnel/binding/detail/binding_plan.hpp"
#include "funnel/binding/launcher_environment.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/device.hpp"

namespace funnel {
namespace {

bool path_exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

// What the rank knows about its MPS set-up, for the message when its context cannot be created.
detail::context_failure context_facts(const launcher_environment& env) {
  detail::context_failure facts;
  facts.mps_pipe = detail::serving_mps_pipe(env, path_exists);
  facts.mps = env.from_funnel_run ? env.mps : !facts.mps_pipe.empty();
  if (facts.mps_pipe.empty()) facts.mps_pipe = env.mps ? env.mps_pipe : env.cuda_mps_pipe_directory;
  facts.ranks_on_gpu = env.ranks_on_gpu;
  if (const char* connections = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")) {
    facts.max_connections = connections;
  }
  return facts;
}

// The GPU funnel-run chose, among the visible devices; otherwise the in-process choice. Its
// context is created here, the rank's first CUDA work, so that a refusal says what it is.
int choose_device(const launcher_environment& env, int local_rank,
                  std::vector<std::string>& warnings) {
  const detail::context_failure facts = context_facts(env);
  const int count = detail::visible_device_count(facts);
  if (count == 0) {
    throw unsupported(
        "funnel::binding: the CUDA backend was asked for, but no CUDA device is "
        "visible to this rank");
  }
  int chosen = -1;
  if (!env.from_funnel_run || env.gpu_uuid.empty()) {
    chosen = detail::round_robin_device(local_rank, count);
  } else if (count == 1) {
    chosen = 0;  // funnel-run's usual case: the rank sees its GPU alone
  } else {
    for (int id = 0; id < count && chosen < 0; ++id) {
      if (device(id).properties().uuid == env.gpu_uuid) chosen = id;
    }
  }
  if (chosen < 0) chosen = detail::round_robin_device(local_rank, count);
  detail::create_context(chosen, facts);
  if (env.from_funnel_run && !env.gpu_uuid.empty()) {
    const std::string uuid = device(chosen).properties().uuid;
    if (uuid != env.gpu_uuid) {
      warnings.push_back("funnel-run chose GPU " + env.gpu_uuid +
                         " but it is not among the devices this rank sees; using device " +
                         std::to_string(chosen) + " (" + uuid + ")");
    }
  }
  return chosen;
}

void check_launcher_agrees(const launcher_environment& env, const binding_report& report,
                           std::vector<std::string>& warnings) {
  if (!env.from_funnel_run) return;
  if (env.local_rank >= 0 &&
      (env.local_rank != report.local_rank || env.local_size != report.local_size)) {
    warnings.push_back("funnel-run placed this rank as local rank " +
                       std::to_string(env.local_rank) + "/" + std::to_string(env.local_size) +
                       " but MPI says " + std::to_string(report.local_rank) + "/" +
                       std::to_string(report.local_size) +
                       ": the launcher's variables do not describe this job");
  }
  if (report.device >= 0 && env.ranks_on_gpu > 0 && env.ranks_on_gpu != report.ranks_on_gpu) {
    warnings.push_back("funnel-run planned " + std::to_string(env.ranks_on_gpu) + " ranks on GPU " +
                       report.gpu_uuid + " but " + std::to_string(report.ranks_on_gpu) + " use it");
  }
  if (report.device >= 0 && env.mps && !report.mps_serving) {
    warnings.push_back("funnel-run started MPS for this rank (FUNNEL_MPS_PIPE=" + env.mps_pipe +
                       ") but no control pipe is there");
  }
}

// The sharing warning of the worst node, on every rank; rank 0 prints it.
void warn_about_sharing(MPI_Comm comm, const binding_report& report,
                        std::vector<std::string>& warnings) {
  struct {
    int most;
    int rank;
  } mine{report.device >= 0 && !report.mps_serving ? report.max_ranks_on_gpu : 0, report.rank},
      worst{};
  FUNNEL_MPI_TRY(MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, comm),
                 "funnel::binding: finding shared GPUs");
  if (worst.most <= 1) return;
  std::array<char, MPI_MAX_PROCESSOR_NAME + 1> host{};
  std::strncpy(host.data(), report.host.c_str(), host.size() - 1);
  FUNNEL_MPI_TRY(MPI_Bcast(host.data(), static_cast<int>(host.size()), MPI_CHAR, worst.rank, comm),
                 "funnel::binding: naming the node");
  warnings.push_back(detail::sharing_warning(worst.most, false, host.data()));
  if (report.rank == 0) detail::log_error(warnings.back());
}

}  // namespace

binding binding::detect(MPI_Comm comm, backend_kind backend) {
  FUNNEL_EXPECTS(comm != MPI_COMM_NULL, "funnel::binding::detect: MPI_COMM_NULL is not allowed");
  binding_report report;
  report.backend = backend;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &report.rank), "funnel::binding");
  FUNNEL_MPI_TRY(MPI_Comm_size(comm, &report.size), "funnel::binding");
  std::array<char, MPI_MAX_PROCESSOR_NAME + 1> host{};
  int host_length = 0;
  FUNNEL_MPI_TRY(MPI_Get_processor_name(host.data(), &host_length), "funnel::binding");
  report.host.assign(host.data(), static_cast<std::size_t>(host_length));

  MPI_Comm node_comm = MPI_COMM_NULL;
  FUNNEL_MPI_TRY(
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, report.rank, MPI_INFO_NULL, &node_comm),
      "funnel::binding: the node's ranks");
  binding result(comm, node_comm, binding_report{});
  FUNNEL_MPI_TRY(MPI_Comm_rank(node_comm, &report.local_rank), "funnel::binding");
  FUNNEL_MPI_TRY(MPI_Comm_size(node_comm, &report.local_size), "funnel::binding");
  int first_of_node = report.local_rank == 0 ? 1 : 0;
  FUNNEL_MPI_TRY(MPI_Allreduce(&first_of_node, &report.node_count, 1, MPI_INT, MPI_SUM, comm),
                 "funnel::binding: counting nodes");

  launcher_environment env;
  std::vector<std::string> warnings;
  detail::on_all_or_none(comm, "funnel::binding: reading funnel-run's variables",
                         [&] { env = launcher_environment::from_process(); });
  report.from_funnel_run = env.from_funnel_run;

  if (backend == backend_kind::cuda) {
    detail::on_all_or_none(comm, "funnel::binding: choosing the GPU", [&] {
      report.device = choose_device(env, report.local_rank, warnings);
      const device chosen(report.device);
      chosen.make_current();
      report.gpu_uuid = chosen.properties().uuid;
    });
    const auto sharing =
        detail::count_sharing(detail::allgather_strings(node_comm, report.gpu_uuid,
                                                        "funnel::binding: gathering GPU UUIDs"),
                              report.gpu_uuid);
    report.ranks_on_gpu = sharing.mine;
    report.max_ranks_on_gpu = sharing.most;
    report.mps_pipe = detail::serving_mps_pipe(env, path_exists);
    report.mps_serving = !report.mps_pipe.empty();
  }
  check_launcher_agrees(env, report, warnings);
  for (const auto& warning : warnings) detail::log_error(report.host + ": " + warning);
  warn_about_sharing(comm, report, warnings);
  report.warnings = std::move(warnings);
  result.report_ = std::move(report);
  return result;
}

binding::~binding() { free_node_comm(); }

binding::binding(binding&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      node_comm_(std::exchange(other.node_comm_, MPI_COMM_NULL)),
      report_(std::move(other.report_)) {}

binding& binding::operator=(binding&& other) noexcept {
  if (this != &other) {
    free_node_comm();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    node_comm_ = std::exchange(other.node_comm_, MPI_COMM_NULL);
    report_ = std::move(other.report_);
  }
  return *this;
}

void binding::free_node_comm() noexcept {
  if (node_comm_ == MPI_COMM_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) {
    const int rc = MPI_Comm_free(&node_comm_);
    if (rc != MPI_SUCCESS) detail::log_error("funnel::binding: MPI_Comm_free failed");
  }
  node_comm_ = MPI_COMM_NULL;
}

std::string binding::plan() const {
  const std::string line = report_.to_string() + "\n";
  const int length = static_cast<int>(line.size());
  std::vector<int> lengths(report_.rank == 0 ? static_cast<std::size_t>(report_.size) : 0);
  FUNNEL_MPI_TRY(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm_),
                 "funnel::binding::plan");
  std::vector<int> offsets(lengths.size());
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  FUNNEL_MPI_TRY(MPI_Gatherv(line.data(), length, MPI_CHAR, all.data(), lengths.data(),
                             offsets.data(), MPI_CHAR, 0, comm_),
                 "funnel::binding::plan");
  return all;
}

void binding::print_plan(std::ostream& out) const {
  const std::string all = plan();
  if (report_.rank == 0) out << all << std::flush;
}

}  // namespace funnel
