// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// halo_exchange: plans the links, chooses one transport per kind of link (path_choice.hpp), and
// drives them axis by axis. The transports (local, mpi, ipc_handshake, ipc_ordered) each read
// alone.
#include "funnel/halo/halo_exchange.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../core/collective.hpp"
#include "../core/comm_owner.hpp"
#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/ipc/fd_exchange.hpp"
#include "funnel/ipc/job_directory.hpp"
#include "funnel/runtime/device.hpp"
#include "funnel/trace/nvtx_range.hpp"
#include "halo_link.hpp"
#include "halo_settings.hpp"
#include "ipc_handshake_transport.hpp"
#include "ipc_ordered_transport.hpp"
#include "local_transport.hpp"
#include "message_pieces.hpp"
#include "mpi_transport.hpp"
#include "path_choice.hpp"
#include "stall_watchdog.hpp"
#include "stream_signals.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {
namespace {

using detail::halo_link;

/// The default options with `method`.
halo_options options_with(halo_method method) {
  halo_options options;
  options.method = method;
  return options;
}

int current_cuda_device() {
  int dev = 0;
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaGetDevice(&dev), "halo_exchange: the device of the imported pools");
#endif
  return dev;
}

// Whether the GPU-ordered path signals with its own kernel (kernel_signals.hpp) rather than
// stream memory operations: under MPS (the ranks' kernels run together, and a memory operation
// costs each client's step about 2 µs of the GPU's front end, one client at a time) or where the
// rank has its GPU to itself (its kernels can be captured in graphs and launched again), unless
// the settings say kernel or stream (tests take both paths with or without MPS).
bool kernel_signals_wanted(backend_kind backend, halo_signals choice, bool gpu_alone) {
  if (backend != backend_kind::cuda) return false;
  if (choice != halo_signals::automatic) return choice == halo_signals::kernel;
  // A rank alone on its GPU has no context to time-slice with: its waiting block holds nobody up.
  if (gpu_alone) return true;
  int mps = 0;
#if FUNNEL_HAS_CUDA
  // cudaDevAttrMpsEnabled (133) by number: a driver that does not know it answers with an
  // error, which means no MPS this path can rely on.
  constexpr auto mps_enabled = static_cast<cudaDeviceAttr>(133);
  if (cudaDeviceGetAttribute(&mps, mps_enabled, current_cuda_device()) != cudaSuccess) {
    (void)cudaGetLastError();
    mps = 0;
  }
#endif
  return mps != 0;
}

}  // namespace

class halo_exchange::impl {
 public:
  impl(const cartesian_decomposition& d, backend_kind backend, memory_pool& pool,
       std::size_t element_size, const halo_options& options)
      : backend_(backend),
        element_size_(element_size),
        layout_(d.layout()),
        cycle_(options.field_cycle),
        steps_per_exchange_(options.steps_per_exchange),
        arrive_first_(options.field_cycle.size() == 1 ||
                      (options.steps_per_exchange > 1 && !options.ghosts_read_only)),
        faces_only_(options.faces_only && options.steps_per_exchange == 1),
        settings_(detail::resolve(options, detail::halo_environment::process())) {
    FUNNEL_EXPECTS(
        element_size == 4 || element_size == 8,
        "element size " + std::to_string(element_size) + " is not 4 (float) or 8 (double) bytes");
    FUNNEL_EXPECTS(pool.backend() == backend, "the pool's backend " + to_string(pool.backend()) +
                                                  " differs from the exchange's " +
                                                  to_string(backend));
    FUNNEL_EXPECTS(cycle_.size() <= detail::ipc_ordered_transport::max_cycle,
                   "halo_exchange: a field cycle of " + std::to_string(cycle_.size()) +
                       " fields; at most " +
                       std::to_string(detail::ipc_ordered_transport::max_cycle) + " are allowed");
    for (void* f : cycle_) FUNNEL_EXPECTS(f != nullptr, "halo_exchange: a null field in the cycle");
    FUNNEL_EXPECTS(steps_per_exchange_ >= 1, "halo_exchange: steps_per_exchange " +
                                                 std::to_string(steps_per_exchange_) +
                                                 " is not allowed (1 or more)");
    MPI_Comm dup = MPI_COMM_NULL;
    FUNNEL_MPI_TRY(MPI_Comm_dup(d.comm(), &dup), "halo_exchange: private communicator");
    comm_ = detail::comm_owner(dup);
    rank_ = d.rank();
    check_settings();
    watchdog_ = detail::stall_watchdog(settings_.stall_timeout, {});
    // A pool that can be exported serves IPC, and its memory is safe to hand to CUDA-aware MPI.
    unique_fd pool_fd;
    try {
      pool_fd = pool.export_handle();
    } catch (const invalid_argument&) {  // not ipc_exportable
    }
    std::vector<halo_link> links = make_links(d, pool_fd.valid());
    if (options.method != halo_method::mpi) plan_ipc(options.method, pool_fd, links);
    for (const auto& l : links) paths_.push_back(l.path);
    make_transports(std::move(links), pool);
  }

  // The settings may differ between ranks (each reads its own environment): a value one rank
  // may not use is refused on every rank, so none goes on into the setup's collectives.
  void check_settings() const {
    detail::on_all_or_none(comm_.get(), "halo_exchange: checking the settings", [&] {
      FUNNEL_EXPECTS(settings_.stall_timeout.count() > 0,
                     "halo_exchange: a stall timeout of " +
                         std::to_string(settings_.stall_timeout.count()) +
                         " ms is not allowed (1 ms or more)");
      FUNNEL_EXPECTS(settings_.mpi_chunk <= detail::max_mpi_message,
                     "halo_exchange: an MPI chunk of " + std::to_string(settings_.mpi_chunk) +
                         " bytes is not allowed (0 for whole faces, or 1 to " +
                         std::to_string(detail::max_mpi_message) + ")");
    });
  }

  ~impl() {
    // Not collective (this may run while an error unwinds): unmap locally, and say so when a
    // normal end forgot close().
    if (!closed_ && node_uses_ipc_ && std::uncaught_exceptions() == 0) {
      detail::log_error(
          "halo_exchange destroyed without close(): neighbours may still map this rank's fields");
    }
    for (auto& t : transports_) t->release();
  }

  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  void begin(stream_view stream, void* field) {
    const nvtx_range range("funnel::halo::begin");
    FUNNEL_EXPECTS(!closed_, "halo_exchange used after close()");
    FUNNEL_EXPECTS(!begun_, "halo_exchange::begin called twice without finish");
    FUNNEL_EXPECTS(field != nullptr, "the field pointer is null");
    FUNNEL_EXPECTS(stream.backend() == backend_,
                   "stream of backend " + to_string(stream.backend()) +
                       " given to an exchange of backend " + to_string(backend_));
    step_.stream = stream;
    step_.field = field;
    step_.layout = &layout_;
    step_.element_size = element_size_;
    step_.count = count_ + 1;
    if (!cycle_.empty()) {
      step_.field_index = static_cast<std::size_t>(count_ % cycle_.size());
      FUNNEL_EXPECTS(field == cycle_[step_.field_index],
                     "halo_exchange: exchange " + std::to_string(count_) + " must be given field " +
                         std::to_string(step_.field_index) + " of the bound cycle of " +
                         std::to_string(cycle_.size()) + " (fields are exchanged in cycle order)");
    }
    ++count_;
    for (auto& t : transports_) t->begin(step_);
    // Start axes until one waits on another rank: that one overlaps the caller's work.
    for (phase_ = 0; phase_ < 2 && !has_remote_links(phase_); ++phase_) {
      post(phase_);
      complete(phase_);
    }
    post(phase_);
    begun_ = true;
  }

  void finish(stream_view stream) {
    const nvtx_range range("funnel::halo::finish");
    FUNNEL_EXPECTS(begun_, "halo_exchange::finish called without begin");
    FUNNEL_EXPECTS(stream == step_.stream, "halo_exchange::finish got another stream than begin");
    begun_ = false;  // an exception below leaves the exchange unusable but not "begun"
    for (int axis = phase_; axis < 3; ++axis) {
      if (axis != phase_) post(axis);
      complete(axis);
    }
    for (auto& t : transports_) t->finish(step_);
  }

  void wait(const event& done) const { watchdog_.wait(done); }
  void wait(stream_view stream) const { watchdog_.wait(stream); }
  void wait(MPI_Request& request) const { watchdog_.wait(request); }

  void close() {
    if (closed_) return;
    if (count_ > 0) watchdog_.wait(step_.stream);
    closed_ = true;
    // Once every rank's own streams are done, nobody writes into another rank's memory.
    if (node_uses_ipc_) FUNNEL_MPI_TRY(MPI_Barrier(node_comm_.get()), "halo_exchange::close");
    for (auto& t : transports_) t->release();
    // No rank frees a field (or its pool) while a neighbour still maps it.
    if (node_uses_ipc_) FUNNEL_MPI_TRY(MPI_Barrier(node_comm_.get()), "halo_exchange::close");
  }

  [[nodiscard]] const std::vector<neighbor_path>& paths() const noexcept { return paths_; }
  [[nodiscard]] const std::string& fallback() const noexcept { return fallback_; }

  [[nodiscard]] bool replayable() const noexcept {
    return backend_ == backend_kind::cuda && !closed_ &&
           std::all_of(transports_.begin(), transports_.end(),
                       [](const auto& t) { return t->replayable(); });
  }

  void replayed(std::size_t exchanges) {
    FUNNEL_EXPECTS(replayable(), "halo_exchange::replayed: this exchange cannot be replayed");
    FUNNEL_EXPECTS(!begun_, "halo_exchange::replayed during an exchange");
    FUNNEL_EXPECTS(cycle_.empty() || exchanges % cycle_.size() == 0,
                   "halo_exchange::replayed: " + std::to_string(exchanges) +
                       " exchanges is not a multiple of the field cycle's " +
                       std::to_string(cycle_.size()));
    count_ += exchanges;
  }

  [[nodiscard]] bool pushable() const noexcept {
    return settings_.push && replayable() && cycle_.size() == 2 && steps_per_exchange_ == 1 &&
           !transports_.empty() &&
           std::all_of(transports_.begin(), transports_.end(),
                       [](const auto& t) { return t->pushable(); });
  }

  pushed_exchange push_next(stream_view stream, void* field) {
    FUNNEL_EXPECTS(pushable(), "halo_exchange::push_next: this exchange cannot be pushed");
    FUNNEL_EXPECTS(!begun_, "halo_exchange::push_next during an exchange");
    FUNNEL_EXPECTS(stream.backend() == backend_,
                   "halo_exchange::push_next: a stream of backend " + to_string(stream.backend()));
    const auto index = static_cast<std::size_t>(count_ % cycle_.size());
    FUNNEL_EXPECTS(field == cycle_[index], "halo_exchange::push_next: exchange " +
                                               std::to_string(count_) + " must be given field " +
                                               std::to_string(index) + " of the bound cycle");
    detail::exchange_step step;
    step.field = field;
    step.layout = &layout_;
    step.element_size = element_size_;
    step.count = count_ + 1;
    step.field_index = index;
    pushed_exchange push;
    for (const auto& t : transports_) t->describe_push(step, push);
    step_.stream = stream;  // close() waits for the kernels that push
    ++count_;
    return push;
  }

 private:
  [[nodiscard]] bool has_remote_links(int axis) const noexcept {
    return std::any_of(transports_.begin(), transports_.end(),
                       [axis](const auto& t) { return t->remote() && t->has_axis(axis); });
  }

  void post(int axis) {
    for (auto& t : transports_) t->post(step_, axis);
  }
  void complete(int axis) {
    for (auto& t : transports_) t->complete(step_, axis);
  }

  std::vector<halo_link> make_links(const cartesian_decomposition& d, bool pool_exportable) const {
    const halo_transport mpi_kind = backend_ == backend_kind::host ? halo_transport::mpi_host
                                    : detail::mpi_is_cuda_aware() && pool_exportable
                                        ? halo_transport::mpi_cuda_aware
                                        : halo_transport::mpi_staged;
    std::vector<halo_link> links;
    for (int axis = 0; axis < 3; ++axis) {
      if (layout_.halo_along(axis) == 0) continue;
      for (side s : {side::lower, side::upper}) {
        const int n = d.neighbor(axis, s);
        if (n == MPI_PROC_NULL) continue;
        halo_link l;
        l.path = neighbor_path{axis, s, n, n == rank_ ? halo_transport::local : mpi_kind};
        l.send_region = detail::face_region(layout_, axis, s, false);
        l.recv_region = detail::face_region(layout_, axis, s, true);
        l.remote_layout = d.layout_of(d.box_of(n));
        l.remote_region = detail::face_region(l.remote_layout, axis, opposite(s), true);
        l.bytes = static_cast<std::size_t>(l.send_region.cells()) * element_size_;
        detail::check_link(layout_, l);
        links.push_back(std::move(l));
      }
    }
    return links;
  }

  // Decides which links go over IPC (and which IPC transport) and maps the neighbours' pools.
  // `auto` takes IPC to every neighbour of the node whose pool this rank can map and which can
  // map this rank's: on this GPU, and on another GPU through peer access (re-measured each run:
  // an import that succeeds on both sides, which also fails where a scheduler hides the other
  // GPU's device files). Everything else goes over MPI, and each fallback is reported.
  void plan_ipc(halo_method method, const unique_fd& my_fd, std::vector<halo_link>& links) {
    MPI_Comm node = MPI_COMM_NULL;
    FUNNEL_MPI_TRY(
        MPI_Comm_split_type(comm_.get(), MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "halo_exchange: node communicator");
    node_comm_ = detail::comm_owner(node);
    FUNNEL_MPI_TRY(MPI_Comm_rank(node_comm_.get(), &node_index_), "halo_exchange: node rank");
    int node_size = 0;
    FUNNEL_MPI_TRY(MPI_Comm_size(node_comm_.get(), &node_size), "halo_exchange: node size");
    const std::vector<std::string> node_gpus = gather_node_gpus();
    const auto mine = static_cast<std::size_t>(node_index_);
    const bool gpu_alone =
        node_gpus.empty() || std::count(node_gpus.begin(), node_gpus.end(), node_gpus[mine]) == 1;

    // Every rank of the node must export its pool for any of them to use IPC (allgather_fds
    // is collective over the node); the GPU-ordered path needs a cycle and stream signals on
    // every rank of the node, kernel signals a GPU that no two ranks time-slice.
    int node_can[3] = {
        my_fd.valid() ? 1 : 0,
        !cycle_.empty() && detail::stream_signals_supported(backend_) ? 1 : 0,
        !cycle_.empty() && kernel_signals_wanted(backend_, settings_.signals, gpu_alone) ? 1 : 0};
    FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, node_can, 3, MPI_INT, MPI_MIN, node_comm_.get()),
                   "halo_exchange: can the node's pools be exported");
    const bool ordered = node_can[1] == 1;
    kernel_signals_ = ordered && node_can[2] == 1;

    // What each link's ranks know before mapping anything.
    MPI_Group world_group = MPI_GROUP_NULL;
    MPI_Group node_group = MPI_GROUP_NULL;
    FUNNEL_MPI_TRY(MPI_Comm_group(comm_.get(), &world_group), "halo_exchange");
    FUNNEL_MPI_TRY(MPI_Comm_group(node_comm_.get(), &node_group), "halo_exchange");
    std::vector<detail::link_facts> facts(links.size());
    std::vector<int> node_rank_of_link(links.size(), MPI_UNDEFINED);
    int candidates = 0;
    for (std::size_t i = 0; i < links.size(); ++i) {
      const halo_link& l = links[i];
      if (l.path.transport == halo_transport::local) continue;
      FUNNEL_MPI_TRY(MPI_Group_translate_ranks(world_group, 1, &l.path.rank, node_group,
                                               &node_rank_of_link[i]),
                     "halo_exchange: is the neighbour on this node");
      const int nr = node_rank_of_link[i];
      facts[i].rank = l.path.rank;
      facts[i].on_node = nr != MPI_UNDEFINED;
      facts[i].same_gpu =
          facts[i].on_node &&
          (node_gpus.empty() || node_gpus[static_cast<std::size_t>(nr)] == node_gpus[mine]);
      facts[i].exportable = node_can[0] == 1;
      if (detail::ipc_candidate(method, facts[i])) ++candidates;
    }
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);

    int node_tries = candidates > 0 ? 1 : 0;
    FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &node_tries, 1, MPI_INT, MPI_MAX, node_comm_.get()),
                   "halo_exchange: does the node use IPC");
    std::map<int, int> node_rank_of;  // neighbour rank -> node rank, the links that use IPC
    if (node_tries != 0) map_pools(method, my_fd, links, facts, node_rank_of_link, node_size);

    std::string refusal;
    for (std::size_t i = 0; i < links.size(); ++i) {
      halo_link& l = links[i];
      if (l.path.transport == halo_transport::local) continue;
      const detail::path_choice c =
          detail::choose_path(method, facts[i], ordered, l.path.transport);
      l.path.transport = c.transport;
      if (fallback_.empty()) fallback_ = c.fallback;
      if (refusal.empty()) refusal = c.refusal;
      if (detail::is_ipc(c.transport)) node_rank_of[l.path.rank] = node_rank_of_link[i];
    }
    for (auto it = peers_.begin(); it != peers_.end();) {
      it = node_rank_of.count(it->first) != 0 ? std::next(it) : peers_.erase(it);
    }
    int any_refused = refusal.empty() ? 0 : 1;
    FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &any_refused, 1, MPI_INT, MPI_MAX, comm_.get()),
                   "halo_exchange: can every rank use IPC");
    if (any_refused != 0) {
      throw unsupported("halo method 'ipc' cannot be used: " +
                        (refusal.empty() ? std::string("another rank cannot") : refusal) +
                        "; use 'auto' or 'mpi'");
    }

    int node_uses = node_rank_of.empty() ? 0 : 1;
    FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &node_uses, 1, MPI_INT, MPI_MAX, node_comm_.get()),
                   "halo_exchange: does the node use IPC");
    node_uses_ipc_ = node_uses != 0;
    if (!node_uses_ipc_) return;

    // The watchdog names the neighbours by process: every rank of the node tells its pid.
    const int pid = static_cast<int>(::getpid());
    std::vector<int> pids(static_cast<std::size_t>(node_size));
    FUNNEL_MPI_TRY(MPI_Allgather(&pid, 1, MPI_INT, pids.data(), 1, MPI_INT, node_comm_.get()),
                   "halo_exchange: the node's processes");
    std::vector<detail::peer_process> peers;
    for (const auto& [rank, node_rank] : node_rank_of) {
      peers.push_back({rank, pids[static_cast<std::size_t>(node_rank)]});
    }
    watchdog_ = detail::stall_watchdog(watchdog_.timeout(), std::move(peers));
    ordered_ = ordered;
  }

  // Collective over the node: every rank passes its pool to the others, maps the pools of its
  // IPC candidates, and the node learns which pairs mapped each other (facts[i].mapped).
  void map_pools(halo_method method, const unique_fd& my_fd, const std::vector<halo_link>& links,
                 std::vector<detail::link_facts>& facts, const std::vector<int>& node_rank_of_link,
                 int node_size) {
    // The sockets' directory lives only as long as the exchange of descriptors: the node's last
    // rank removes it, so a job leaves nothing in $TMPDIR.
    std::vector<unique_fd> fds;
    {
      const job_directory dir = job_directory::create(node_comm_.get());
      fds = allgather_fds(node_comm_.get(), my_fd.get(), dir.path());
    }
    memory_pool_options options;
    options.device = backend_ == backend_kind::cuda ? current_cuda_device() : 0;
    // row[j]: 1 this rank mapped node rank j's pool, 0 it failed, -1 it did not try.
    std::vector<int> row(static_cast<std::size_t>(node_size), -1);
    std::map<int, std::string> errors;  // node rank -> why this rank could not map its pool
    for (std::size_t i = 0; i < links.size(); ++i) {
      if (!detail::ipc_candidate(method, facts[i])) continue;
      const int nr = node_rank_of_link[i];
      const int rank = links[i].path.rank;
      if (row[static_cast<std::size_t>(nr)] != -1) continue;  // two faces, one neighbour
      options.name = "halo import of rank " + std::to_string(rank);
      try {
        peers_.emplace(rank, detail::imported_fields(memory_pool::import_handle(
                                 backend_, fds[static_cast<std::size_t>(nr)].get(), options)));
        row[static_cast<std::size_t>(nr)] = 1;
      } catch (const error& e) {
        row[static_cast<std::size_t>(nr)] = 0;
        errors[nr] = e.message();  // for the plan line: no source location
      }
    }
    std::vector<int> all(static_cast<std::size_t>(node_size) * row.size());
    FUNNEL_MPI_TRY(MPI_Allgather(row.data(), node_size, MPI_INT, all.data(), node_size, MPI_INT,
                                 node_comm_.get()),
                   "halo_exchange: which pools the node mapped");
    for (std::size_t i = 0; i < links.size(); ++i) {
      if (!detail::ipc_candidate(method, facts[i])) continue;
      const auto nr = static_cast<std::size_t>(node_rank_of_link[i]);
      const auto me = static_cast<std::size_t>(node_index_);
      const bool here = row[nr] == 1;
      const bool there = all[nr * static_cast<std::size_t>(node_size) + me] == 1;
      facts[i].mapped = here && there;
      if (!here) {
        facts[i].map_error = errors[static_cast<int>(nr)];
      } else if (!there) {
        facts[i].map_error = "rank " + std::to_string(links[i].path.rank) +
                             " could not map this rank's pool (see its plan)";
      }
    }
  }

  // The GPU UUID of every rank of the node (collective over node_comm_), indexed by node rank;
  // empty on the host backend.
  std::vector<std::string> gather_node_gpus() const {
    if (backend_ != backend_kind::cuda) return {};
    return detail::allgather_strings(node_comm_.get(),
                                     device(current_cuda_device()).properties().uuid,
                                     "halo_exchange: the node's GPUs");
  }

  // One transport per kind of link, in the order their work is enqueued each axis: copies
  // within the field, IPC copies, then MPI (whose host waits come last).
  void make_transports(std::vector<halo_link> links, memory_pool& pool) {
    std::vector<halo_link> local;
    std::vector<halo_link> mpi;
    std::vector<halo_link> ipc;
    for (auto& l : links) {
      if (l.path.transport == halo_transport::local) {
        local.push_back(std::move(l));
      } else if (detail::is_ipc(l.path.transport)) {
        ipc.push_back(std::move(l));
      } else {
        mpi.push_back(std::move(l));
      }
    }
    if (!local.empty()) transports_.push_back(std::make_unique<detail::local_transport>(local));
    if (ordered_) {
      // Constructed on every rank of the node (links or not): its setup agrees over the node.
      transports_.push_back(std::make_unique<detail::ipc_ordered_transport>(
          std::move(ipc), comm_.get(), node_comm_.get(), backend_, pool, std::move(peers_), cycle_,
          layout_, element_size_, watchdog_, kernel_signals_, arrive_first_, faces_only_));
    } else if (!ipc.empty()) {
      transports_.push_back(std::make_unique<detail::ipc_handshake_transport>(
          std::move(ipc), comm_.get(), backend_, pool, std::move(peers_)));
    }
    if (!mpi.empty()) {
      transports_.push_back(std::make_unique<detail::mpi_transport>(
          std::move(mpi), comm_.get(), backend_, pool, settings_.mpi_chunk));
    }
  }

  backend_kind backend_;
  std::size_t element_size_;
  field_layout layout_;
  std::vector<void*> cycle_;
  int steps_per_exchange_;
  bool arrive_first_;  // every exchange starts with the arrival handshake (ipc_ordered_transport)
  bool faces_only_;    // the caller reads face ghosts only (halo_options::faces_only)
  detail::halo_settings settings_;  // the options, then the environment, then the defaults
  detail::comm_owner comm_;
  detail::comm_owner node_comm_;
  int rank_ = 0;
  int node_index_ = 0;
  std::vector<neighbor_path> paths_;
  std::string fallback_;  // why a neighbour on this node goes over MPI ("" when none does)
  std::map<int, detail::imported_fields> peers_;  // until a transport takes them
  detail::stall_watchdog watchdog_;
  std::vector<std::unique_ptr<detail::link_transport>> transports_;
  bool node_uses_ipc_ = false;
  bool ordered_ = false;
  bool kernel_signals_ = false;
  bool closed_ = false;

  bool begun_ = false;
  int phase_ = 0;
  std::uint64_t count_ = 0;
  detail::exchange_step step_;
};

halo_exchange::halo_exchange(const cartesian_decomposition& decomposition, backend_kind backend,
                             memory_pool& pool, std::size_t element_size,
                             const halo_options& options)
    : impl_(std::make_unique<impl>(decomposition, backend, pool, element_size, options)) {}

halo_exchange::halo_exchange(const cartesian_decomposition& decomposition, backend_kind backend,
                             memory_pool& pool, std::size_t element_size, halo_method method)
    : halo_exchange(decomposition, backend, pool, element_size, options_with(method)) {}

halo_exchange::~halo_exchange() = default;
halo_exchange::halo_exchange(halo_exchange&&) noexcept = default;
halo_exchange& halo_exchange::operator=(halo_exchange&&) noexcept = default;

void halo_exchange::exchange(stream_view stream, void* field) {
  begin(stream, field);
  finish(stream);
}

void halo_exchange::begin(stream_view stream, void* field) {
  FUNNEL_EXPECTS(impl_ != nullptr, "halo_exchange used after being moved from");
  impl_->begin(stream, field);
}

void halo_exchange::finish(stream_view stream) {
  FUNNEL_EXPECTS(impl_ != nullptr, "halo_exchange used after being moved from");
  impl_->finish(stream);
}

void halo_exchange::wait(const event& done) const {
  FUNNEL_EXPECTS(impl_ != nullptr, "halo_exchange used after being moved from");
  impl_->wait(done);
}

void halo_exchange::wait(stream_view stream) const {
  FUNNEL_EXPECTS(impl_ != nullptr, "halo_exchange used after being moved from");
  impl_->wait(stream);
}

void halo_exchange::wait(MPI_Request& request) const {
  FUNNEL_EXPECTS(impl_ != nullptr, "halo_exchange used after being moved from");
  impl_->wait(request);
}

void halo_exchange::close() {
  if (impl_) impl_->close();
}

bool halo_exchange::replayable() const noexcept { return impl_ && impl_->replayable(); }

bool halo_exchange::pushable() const noexcept { return impl_ && impl_->pushable(); }

pushed_exchange halo_exchange::push_next(stream_view stream, void* field) {
  FUNNEL_EXPECTS(impl_ != nullptr, "halo_exchange used after being moved from");
  return impl_->push_next(stream, field);
}

void halo_exchange::replayed(std::size_t exchanges) {
  FUNNEL_EXPECTS(impl_ != nullptr, "halo_exchange used after being moved from");
  impl_->replayed(exchanges);
}

const std::string& halo_exchange::fallback() const noexcept {
  static const std::string none;
  return impl_ ? impl_->fallback() : none;
}

const std::vector<neighbor_path>& halo_exchange::paths() const noexcept {
  static const std::vector<neighbor_path> none;
  return impl_ ? impl_->paths() : none;
}

}  // namespace funnel
