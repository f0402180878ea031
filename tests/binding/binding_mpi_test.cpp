// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel::binding on the host backend under 4 ranks, and the pure decisions behind it.
#include <gtest/gtest.h>
#include <mpi.h>
#include <stdlib.h>  // mkdtemp, setenv, unsetenv
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "funnel/binding/binding.hpp"
#include "funnel/binding/detail/binding_plan.hpp"
#include "funnel/binding/launcher_environment.hpp"
#include "funnel/error.hpp"

namespace {

std::mt19937 make_rng() { return std::mt19937{std::random_device{}()}; }

// A getenv over a map, for parse().
auto lookup_in(const std::map<std::string, std::string>& vars) {
  return [&vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// Sets variables for one scope and puts the old values back.
class scoped_env {
 public:
  void set(const std::string& name, const std::string& value) {
    remember(name);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string& name) {
    remember(name);
    ::unsetenv(name.c_str());
  }
  ~scoped_env() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  void remember(const std::string& name) {
    if (saved_.count(name) != 0) return;
    const char* old = std::getenv(name.c_str());
    saved_[name] = old ? std::optional<std::string>{old} : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Every rank's processor name, to find node-local ranks without MPI_Comm_split_type.
std::vector<std::string> all_hosts() {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> all(static_cast<std::size_t>(world_size()) * sizeof(name));
  MPI_Allgather(name, sizeof(name), MPI_CHAR, all.data(), sizeof(name), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> hosts;
  for (int r = 0; r < world_size(); ++r) hosts.emplace_back(all.data() + r * sizeof(name));
  return hosts;
}

TEST(LauncherEnvironment, ParsesWhatFunnelRunSets) {
  auto rng = make_rng();
  const int size = std::uniform_int_distribution<int>{1, 64}(rng);
  const int rank = std::uniform_int_distribution<int>{0, size - 1}(rng);
  const int index = std::uniform_int_distribution<int>{0, 7}(rng);
  const int sharing = std::uniform_int_distribution<int>{1, 48}(rng);
  const std::string uuid = "GPU-" + std::to_string(rng()) + "-fa4e";
  const std::map<std::string, std::string> vars{
      {"FUNNEL_LAUNCHER", "funnel-run"},
      {"FUNNEL_LOCAL_RANK", std::to_string(rank)},
      {"FUNNEL_LOCAL_SIZE", std::to_string(size)},
      {"FUNNEL_GPU_UUID", uuid},
      {"FUNNEL_GPU_INDEX", std::to_string(index)},
      {"FUNNEL_RANKS_ON_GPU", std::to_string(sharing)},
      {"FUNNEL_MPS", "on"},
      {"FUNNEL_MPS_PIPE", "/tmp/p" + std::to_string(rank)},
      {"CUDA_MPS_PIPE_DIRECTORY", "/tmp/c" + std::to_string(size)}};
  const auto env = funnel::launcher_environment::parse(lookup_in(vars));
  EXPECT_TRUE(env.from_funnel_run);
  EXPECT_EQ(env.local_rank, rank);
  EXPECT_EQ(env.local_size, size);
  EXPECT_EQ(env.gpu_uuid, uuid);
  EXPECT_EQ(env.gpu_index, index);
  EXPECT_EQ(env.ranks_on_gpu, sharing);
  EXPECT_TRUE(env.mps);
  EXPECT_EQ(env.mps_pipe, vars.at("FUNNEL_MPS_PIPE"));
  EXPECT_EQ(env.cuda_mps_pipe_directory, vars.at("CUDA_MPS_PIPE_DIRECTORY"));
}

TEST(LauncherEnvironment, UnsetVariablesKeepDefaults) {
  const std::map<std::string, std::string> vars{{"FUNNEL_LAUNCHER", "srun"}, {"FUNNEL_MPS", "off"}};
  const auto env = funnel::launcher_environment::parse(lookup_in(vars));
  EXPECT_FALSE(env.from_funnel_run);
  EXPECT_EQ(env.local_rank, -1);
  EXPECT_EQ(env.local_size, -1);
  EXPECT_EQ(env.gpu_index, -1);
  EXPECT_EQ(env.ranks_on_gpu, 0);
  EXPECT_FALSE(env.mps);
  EXPECT_TRUE(env.gpu_uuid.empty());
  EXPECT_TRUE(env.cuda_mps_pipe_directory.empty());
}

TEST(LauncherEnvironment, RejectsMalformedValuesNamingThem) {
  const std::vector<std::pair<std::string, std::string>> bad{{"FUNNEL_LOCAL_RANK", "x1"},
                                                             {"FUNNEL_LOCAL_RANK", "-1"},
                                                             {"FUNNEL_LOCAL_SIZE", "3.5"},
                                                             {"FUNNEL_GPU_INDEX", ""},
                                                             {"FUNNEL_RANKS_ON_GPU", "99999999999"},
                                                             {"FUNNEL_MPS", "maybe"}};
  for (const auto& [name, value] : bad) {
    const std::map<std::string, std::string> vars{{name, value}};
    try {
      (void)funnel::launcher_environment::parse(lookup_in(vars));
      ADD_FAILURE() << name << "=" << value << " was accepted";
    } catch (const funnel::invalid_argument& e) {
      EXPECT_NE(std::string{e.what()}.find(name + "='" + value + "'"), std::string::npos)
          << e.what();
    }
  }
  const std::map<std::string, std::string> rank_too_big{{"FUNNEL_LOCAL_RANK", "4"},
                                                        {"FUNNEL_LOCAL_SIZE", "4"}};
  EXPECT_THROW((void)funnel::launcher_environment::parse(lookup_in(rank_too_big)),
               funnel::invalid_argument);
}

TEST(BindingPlan, RoundRobinOverVisibleDevices) {
  auto rng = make_rng();
  for (int trial = 0; trial < 100; ++trial) {
    const int devices = std::uniform_int_distribution<int>{1, 8}(rng);
    const int rank = std::uniform_int_distribution<int>{0, 127}(rng);
    const int device = funnel::detail::round_robin_device(rank, devices);
    EXPECT_GE(device, 0);
    EXPECT_LT(device, devices);
    EXPECT_EQ((rank - device) % devices, 0);
  }
  EXPECT_THROW((void)funnel::detail::round_robin_device(0, 0), funnel::invalid_argument);
  EXPECT_THROW((void)funnel::detail::round_robin_device(-1, 2), funnel::invalid_argument);
}

TEST(BindingPlan, CountsRanksByUuid) {
  auto rng = make_rng();
  for (int trial = 0; trial < 50; ++trial) {
    const int gpus = std::uniform_int_distribution<int>{1, 4}(rng);
    const int ranks = std::uniform_int_distribution<int>{1, 32}(rng);
    std::vector<std::string> uuids;
    for (int r = 0; r < ranks; ++r) {
      const int g = std::uniform_int_distribution<int>{-1, gpus - 1}(rng);  // -1: no GPU
      uuids.push_back(g < 0 ? std::string{} : "GPU-" + std::to_string(g));
    }
    const std::string& mine = uuids[std::uniform_int_distribution<int>{0, ranks - 1}(rng)];
    int expect_mine = 0;
    int expect_most = 0;
    for (const auto& a : uuids) {
      if (a.empty()) continue;
      int same = 0;
      for (const auto& b : uuids) same += a == b ? 1 : 0;
      expect_most = std::max(expect_most, same);
      if (a == mine) expect_mine = same;
    }
    const auto sharing = funnel::detail::count_sharing(uuids, mine);
    EXPECT_EQ(sharing.mine, expect_mine);
    EXPECT_EQ(sharing.most, expect_most);
  }
}

TEST(BindingPlan, MpsServesOnlyWhereItsControlPipeExists) {
  char dir_template[] = "/tmp/funnel-binding-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir{dir_template};
  funnel::launcher_environment env;
  env.from_funnel_run = true;
  env.mps = true;
  env.cuda_mps_pipe_directory = dir;
  const auto exists = [](const std::string& path) { return ::access(path.c_str(), F_OK) == 0; };
  EXPECT_EQ(funnel::detail::serving_mps_pipe(env, exists), "") << "no control pipe yet";
  std::ofstream{dir + "/control"} << "";
  EXPECT_EQ(funnel::detail::serving_mps_pipe(env, exists), dir);
  env.mps = false;
  EXPECT_EQ(funnel::detail::serving_mps_pipe(env, exists), "") << "funnel-run said off";
  env.from_funnel_run = false;  // a site daemon serves apps started without funnel-run
  EXPECT_EQ(funnel::detail::serving_mps_pipe(env, exists), dir);
  std::remove((dir + "/control").c_str());
  ::rmdir(dir.c_str());
}

TEST(BindingPlan, WarnsOnlyAboutTimeSlicedSharing) {
  EXPECT_EQ(funnel::detail::sharing_warning(1, false, "n1"), "");
  EXPECT_EQ(funnel::detail::sharing_warning(8, true, "n1"), "");
  const std::string warning = funnel::detail::sharing_warning(8, false, "node17");
  EXPECT_NE(warning.find("8 ranks share one GPU on node17 without MPS"), std::string::npos)
      << warning;
}

// A context that cannot be created says so, with the likely cause for its error, and never
// reads as an allocation of a memory pool (as "out of memory: 0 bytes requested from pool
// 'cuda'" did). No GPU needed: the classification is a pure function.
TEST(BindingPlan, ClassifiesARefusedContext) {
  funnel::detail::context_failure f;
  f.device = 0;
  f.mps = true;
  f.mps_pipe = "/tmp/funnel-run-1-x/g0-abc/pipe";
  f.ranks_on_gpu = 16;
  f.max_connections = "8";
  const auto message = [&](int code, const char* name) {
    f.code = code;
    f.name = name;
    return funnel::detail::context_failure_message(f);
  };
  const struct {
    int code;
    const char* name;
    const char* cause;
  } cases[] = {
      {805, "cudaErrorMpsConnectionFailed",
       "could not reach the MPS control daemon or server at "
       "/tmp/funnel-run-1-x/g0-abc/pipe"},
      {806, "cudaErrorMpsRpcFailure", "a call to the MPS server failed"},
      {807, "cudaErrorMpsServerNotReady", "another user holds the GPU"},
      {808, "cudaErrorMpsMaxClientsReached",
       "client limit is reached (funnel-run's "
       "--mps-max-clients)"},
      {809, "cudaErrorMpsMaxConnectionsReached",
       "pool of connections is used up (16 ranks on this GPU x CUDA_DEVICE_MAX_CONNECTIONS=8"},
      {810, "cudaErrorMpsClientTerminated", "terminated this client"},
      {46, "cudaErrorDevicesUnavailable", "client limit is reached"},
      {2, "cudaErrorMemoryAllocation", "not an allocation of the application"},
  };
  for (const auto& c : cases) {
    const std::string m = message(c.code, c.name);
    EXPECT_EQ(m.rfind("funnel::binding: cannot create a CUDA context on device 0 under MPS (pipe "
                      "/tmp/funnel-run-1-x/g0-abc/pipe): " +
                          std::string(c.name) + " (error " + std::to_string(c.code) + ")",
                      0),
              0U)
        << m;
    EXPECT_NE(m.find(c.cause), std::string::npos) << m;
    EXPECT_EQ(m.find("out of memory"), std::string::npos) << m;
    EXPECT_EQ(m.find("pool 'cuda'"), std::string::npos) << m;
  }
  EXPECT_NE(message(46, "cudaErrorDevicesUnavailable").find("pool of connections is used up"),
            std::string::npos)
      << "under MPS a refused client may be the connection pool too";
  f.max_connections.clear();
  EXPECT_NE(message(809, "cudaErrorMpsMaxConnectionsReached")
                .find("CUDA_DEVICE_MAX_CONNECTIONS unset (2 under MPS)"),
            std::string::npos);

  f.mps = false;
  f.mps_pipe.clear();
  EXPECT_NE(message(46, "cudaErrorDevicesUnavailable").find("exclusive-process mode"),
            std::string::npos);
  const std::string plain = message(2, "cudaErrorMemoryAllocation");
  EXPECT_NE(plain.find("on device 0: cudaErrorMemoryAllocation (error 2). Likely cause: the GPU "
                       "has no memory left for another context"),
            std::string::npos)
      << plain;
  EXPECT_EQ(plain.find("MPS"), std::string::npos) << plain;
}

TEST(Binding, FindsNodeLocalRanksOnTheHostBackend) {
  const auto b = funnel::binding::detect(MPI_COMM_WORLD, funnel::backend_kind::host);
  const auto& report = b.report();
  const auto hosts = all_hosts();
  const int rank = world_rank();
  int local_rank = 0;
  int local_size = 0;
  for (int r = 0; r < world_size(); ++r) {
    if (hosts[r] != hosts[rank]) continue;
    ++local_size;
    if (r < rank) ++local_rank;
  }
  EXPECT_EQ(report.rank, rank);
  EXPECT_EQ(report.size, world_size());
  EXPECT_EQ(report.host, hosts[rank]);
  EXPECT_EQ(report.local_rank, local_rank);
  EXPECT_EQ(report.local_size, local_size);
  EXPECT_EQ(report.node_count,
            static_cast<int>(std::set<std::string>(hosts.begin(), hosts.end()).size()));
  EXPECT_EQ(report.device, -1);
  EXPECT_TRUE(report.gpu_uuid.empty());
  EXPECT_EQ(report.ranks_on_gpu, 0);
  EXPECT_FALSE(report.mps_serving);
  const std::string line = report.to_string();
  EXPECT_NE(
      line.find("local_rank=" + std::to_string(local_rank) + "/" + std::to_string(local_size)),
      std::string::npos)
      << line;
  EXPECT_NE(line.find("device=none"), std::string::npos) << line;

  // Started through funnel-run, its variables agree with MPI and nothing is wrong.
  const char* expect_launcher = std::getenv("BINDING_EXPECT_FUNNEL_RUN");
  if (expect_launcher != nullptr && std::string{expect_launcher} == "1") {
    EXPECT_TRUE(report.from_funnel_run);
    EXPECT_NE(line.find("launcher=funnel-run"), std::string::npos) << line;
    const auto env = funnel::launcher_environment::from_process();
    EXPECT_EQ(env.local_rank, report.local_rank);
    EXPECT_EQ(env.local_size, report.local_size);
    EXPECT_TRUE(report.warnings.empty()) << report.warnings.front();
  }
}

TEST(Binding, PlanHasOneLinePerRankOnRankZero) {
  const auto b = funnel::binding::detect(MPI_COMM_WORLD, funnel::backend_kind::host);
  const std::string plan = b.plan();
  if (world_rank() != 0) {
    EXPECT_EQ(plan, "");
    return;
  }
  std::istringstream lines(plan);
  std::string line;
  int r = 0;
  while (std::getline(lines, line)) {
    EXPECT_NE(line.find(" rank=" + std::to_string(r) + "/" + std::to_string(world_size())),
              std::string::npos)
        << line;
    ++r;
  }
  EXPECT_EQ(r, world_size());
}

TEST(Binding, WarnsWhenFunnelRunsVariablesDisagreeWithMpi) {
  const auto truth = funnel::binding::detect(MPI_COMM_WORLD, funnel::backend_kind::host).report();
  scoped_env env;
  env.set("FUNNEL_LAUNCHER", "funnel-run");
  // A local size one larger than MPI's, with a rank inside it: a wrong but well-formed plan.
  env.set("FUNNEL_LOCAL_SIZE", std::to_string(truth.local_size + 1));
  env.set("FUNNEL_LOCAL_RANK", std::to_string(truth.local_rank));
  const auto b = funnel::binding::detect(MPI_COMM_WORLD, funnel::backend_kind::host);
  ASSERT_FALSE(b.report().warnings.empty());
  EXPECT_NE(b.report().warnings.front().find("but MPI says"), std::string::npos)
      << b.report().warnings.front();
}

TEST(Binding, MalformedVariablesOnOneRankFailOnEveryRank) {
  scoped_env env;
  if (world_rank() == world_size() - 1) env.set("FUNNEL_LOCAL_RANK", "bogus");
  EXPECT_THROW((void)funnel::binding::detect(MPI_COMM_WORLD, funnel::backend_kind::host),
               funnel::invalid_argument);
}

TEST(Binding, RejectsANullCommunicator) {
  EXPECT_THROW((void)funnel::binding::detect(MPI_COMM_NULL, funnel::backend_kind::host),
               funnel::invalid_argument);
}

TEST(Binding, MovesTheNodeCommunicator) {
  auto first = funnel::binding::detect(MPI_COMM_WORLD, funnel::backend_kind::host);
  const MPI_Comm node = first.node_comm();
  ASSERT_NE(node, MPI_COMM_NULL);
  funnel::binding second(std::move(first));
  EXPECT_EQ(second.node_comm(), node);
  EXPECT_EQ(first.node_comm(),
            MPI_COMM_NULL);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  int size = 0;
  EXPECT_EQ(MPI_Comm_size(second.node_comm(), &size), MPI_SUCCESS);
  EXPECT_EQ(size, second.report().local_size);
}

}  // namespace
