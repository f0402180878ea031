#include "funnel/halo/halo_exchange.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/ipc/fd_exchange.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/runtime/device.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "funnel/trace/nvtx_range.hpp"
#include "strided_copy.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OpenMPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif
#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {
namespace {

// Message tags: base + 2 * axis + the side of the *sender's* face the message crosses, so the
// two faces towards one neighbour (a periodic axis of two ranks) never mix.
constexpr int tag_data = 0;
constexpr int tag_free = 8;
constexpr int tag_written = 16;
constexpr int tag_setup = 24;

int tag(int base, int axis, side sender_face) {
  return base + 2 * axis + static_cast<int>(sender_face);
}

bool mpi_is_cuda_aware() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  // The run-time answer, not the macro: the library loaded may differ from the headers'.
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

int current_cuda_device() {
  int dev = 0;
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaGetDevice(&dev), "halo_exchange: the device of the imported pools");
#endif
  return dev;
}

// The cells a rank sends across its face `s` of `axis` (its boundary layer) or receives there
// (its ghosts), in allocated coordinates. Axes before `axis` span the whole allocated extent
// (their ghosts were filled by the earlier phases and travel on to the diagonal neighbours);
// later axes span the interior only.
box face_region(const field_layout& layout, int axis, side s, bool ghosts) {
  box b;
  for (int a = 0; a < 3; ++a) {
    const std::int64_t h = layout.halo_along(a);
    const std::int64_t n = layout.interior[a];
    if (a < axis) {
      b.lo[a] = 0;
      b.hi[a] = layout.allocated(a);
    } else if (a > axis) {
      b.lo[a] = h;
      b.hi[a] = h + n;
    } else if (s == side::lower) {
      b.lo[a] = ghosts ? 0 : h;
      b.hi[a] = b.lo[a] + h;
    } else {
      b.lo[a] = ghosts ? h + n : n;
      b.hi[a] = b.lo[a] + h;
    }
  }
  return b;
}

// Owns a communicator made by MPI_Comm_dup / MPI_Comm_split_type.
class comm_owner {
 public:
  comm_owner() = default;
  explicit comm_owner(MPI_Comm comm) : comm_(comm) {}
  ~comm_owner() { reset(); }
  comm_owner(const comm_owner&) = delete;
  comm_owner& operator=(const comm_owner&) = delete;
  comm_owner(comm_owner&& o) noexcept : comm_(std::exchange(o.comm_, MPI_COMM_NULL)) {}
  comm_owner& operator=(comm_owner&& o) noexcept {
    if (this != &o) {
      reset();
      comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
    }
    return *this;
  }
  [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }
  void reset() noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && finalized == 0) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

using export_bytes = std::array<unsigned char, sizeof(ipc_pointer::bytes)>;

// The "ghosts free" message of the IPC handshake: the sender's current field, and the layout and
// element size the sender gives it, so that the writer can check that the strides it is about to
// write with are the owner's (ranks that disagree about the decomposition would otherwise write
// out of bounds of the imported allocation).
struct ipc_field_message {
  export_bytes field{};
  std::int64_t interior[3] = {0, 0, 0};
  std::int64_t halo = 0;
  std::int64_t element_size = 0;
};

std::string describe(const index3& v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         ")";
}

std::string describe(const box& b) { return "[" + describe(b.lo) + ", " + describe(b.hi) + ")"; }

bool inside_allocation(const field_layout& layout, const box& region) {
  for (int a = 0; a < 3; ++a) {
    if (region.lo[a] < 0 || region.lo[a] > region.hi[a] || region.hi[a] > layout.allocated(a)) {
      return false;
    }
  }
  return true;
}

// What one rank tells an IPC neighbour at setup: the events it records.
struct ipc_event_handles {
  event_ipc_handle free;
  event_ipc_handle written[3];
};

// A neighbour reached over IPC: its pool mapped here, the fields of it seen so far, and (CUDA)
// its events.
struct ipc_peer {
  std::optional<memory_pool> pool;
  std::map<export_bytes, void*> fields;
  std::optional<event> free;
  std::array<std::optional<event>, 3> written;
};

}  // namespace

class halo_exchange::impl {
 public:
  struct link {
    neighbor_path path;
    box send_region;             // my boundary layer across this face
    box recv_region;             // my ghosts across this face
    field_layout remote_layout;  // the neighbour's (local/ipc: where my send region goes)
    box remote_region;           // the neighbour's ghosts facing me
    std::size_t bytes = 0;
    device_buffer<unsigned char> send_buffer;  // mpi: packed faces (pool memory)
    device_buffer<unsigned char> recv_buffer;
    std::optional<pinned_buffer> send_staging;  // mpi_staged
    std::optional<pinned_buffer> recv_staging;
    std::optional<event> staged;  // mpi_staged: the face's device-to-host copy is done
    MPI_Request recv_request = MPI_REQUEST_NULL;
    ipc_field_message peer_field{};  // ipc: the neighbour's current field, as it exported it
    void* remote_field = nullptr;
    unsigned char flag = 0;  // payload of the zero-information "written" messages
  };

  impl(const cartesian_decomposition& d, backend_kind backend, memory_pool& pool,
       std::size_t element_size, halo_method method)
      : backend_(backend), pool_(&pool), element_size_(element_size), layout_(d.layout()) {
    FUNNEL_EXPECTS(
        element_size == 4 || element_size == 8,
        "element size " + std::to_string(element_size) + " is not 4 (float) or 8 (double) bytes");
    FUNNEL_EXPECTS(pool.backend() == backend, "the pool's backend " + to_string(pool.backend()) +
                                                  " differs from the exchange's " +
                                                  to_string(backend));
    MPI_Comm dup = MPI_COMM_NULL;
    FUNNEL_MPI_TRY(MPI_Comm_dup(d.comm(), &dup), "halo_exchange: private communicator");
    comm_ = comm_owner(dup);
    rank_ = d.rank();
    // A pool that can be exported serves IPC, and its memory is safe to hand to CUDA-aware MPI.
    unique_fd pool_fd;
    try {
      pool_fd = pool.export_handle();
    } catch (const invalid_argument&) {  // not ipc_exportable
    }
    make_links(d, pool_fd.valid());
    if (method != halo_method::mpi) setup_ipc(method, pool_fd);
    allocate_buffers();
    for (const auto& l : links_) paths_.push_back(l.path);
  }

  ~impl() { release_ipc(); }

  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  void begin(stream_view stream, void* field) {
    const nvtx_range range("funnel::halo::begin");
    FUNNEL_EXPECTS(!begun_, "halo_exchange::begin called twice without finish");
    FUNNEL_EXPECTS(field != nullptr, "the field pointer is null");
    FUNNEL_EXPECTS(stream.backend() == backend_,
                   "stream of backend " + to_string(stream.backend()) +
                       " given to an exchange of backend " + to_string(backend_));
    stream_ = stream;
    field_ = field;
    // MPI writes the receive buffers outside the stream: the last step's unpacks must be done.
    if (buffers_idle_) buffers_idle_->synchronize();
    if (uses_ipc_) ipc_handshake();
    // Start axes until one waits on another rank: that one overlaps the caller's work.
    for (phase_ = 0; phase_ < 2 && !has_remote_links(phase_); ++phase_) {
      post_phase(phase_);
      complete_phase(phase_);
    }
    post_phase(phase_);
    begun_ = true;
  }

  void finish(stream_view stream) {
    const nvtx_range range("funnel::halo::finish");
    FUNNEL_EXPECTS(begun_, "halo_exchange::finish called without begin");
    FUNNEL_EXPECTS(stream == stream_, "halo_exchange::finish got another stream than begin");
    begun_ = false;  // an exception below leaves the exchange unusable but not "begun"
    for (int axis = phase_; axis < 3; ++axis) {
      if (axis != phase_) post_phase(axis);
      complete_phase(axis);
    }
    if (!pending_sends_.empty()) {
      FUNNEL_MPI_TRY(MPI_Waitall(static_cast<int>(pending_sends_.size()), pending_sends_.data(),
                                 MPI_STATUSES_IGNORE),
                     "halo_exchange: completing the sends");
      pending_sends_.clear();
    }
    if (buffers_idle_) buffers_idle_->record(stream_);
  }

  [[nodiscard]] const std::vector<neighbor_path>& paths() const noexcept { return paths_; }

 private:
  [[nodiscard]] bool has_remote_links(int axis) const noexcept {
    return std::any_of(links_.begin(), links_.end(), [axis](const link& l) {
      return l.path.axis == axis && l.path.transport != halo_transport::local;
    });
  }

  void make_links(const cartesian_decomposition& d, bool pool_exportable) {
    const halo_transport mpi_kind = backend_ == backend_kind::host ? halo_transport::mpi_host
                                    : mpi_is_cuda_aware() && pool_exportable
                                        ? halo_transport::mpi_cuda_aware
                                        : halo_transport::mpi_staged;
    for (int axis = 0; axis < 3; ++axis) {
      if (layout_.halo_along(axis) == 0) continue;
      for (side s : {side::lower, side::upper}) {
        const int n = d.neighbor(axis, s);
        if (n == MPI_PROC_NULL) continue;
        link l;
        l.path = neighbor_path{axis, s, n, n == rank_ ? halo_transport::local : mpi_kind};
        l.send_region = face_region(layout_, axis, s, false);
        l.recv_region = face_region(layout_, axis, s, true);
        l.remote_layout = d.layout_of(d.box_of(n));
        l.remote_region = face_region(l.remote_layout, axis, opposite(s), true);
        l.bytes = static_cast<std::size_t>(l.send_region.cells()) * element_size_;
        check_link(l);
        links_.push_back(std::move(l));
      }
    }
  }

  // The invariants every copy of a link relies on: the kernel walks the send region's extents
  // in both arrays, so the neighbour's region must have the same extents and lie inside the
  // neighbour's allocated array (for ipc: inside the imported allocation).
  void check_link(const link& l) const {
    const std::string which = "halo_exchange: link to rank " + std::to_string(l.path.rank) +
                              " along axis " + std::to_string(l.path.axis) + ": ";
    FUNNEL_EXPECTS(
        inside_allocation(layout_, l.send_region) && inside_allocation(layout_, l.recv_region),
        which + "send " + describe(l.send_region) + " or receive region " +
            describe(l.recv_region) + " outside the local array");
    FUNNEL_EXPECTS(inside_allocation(l.remote_layout, l.remote_region),
                   which + "remote region " + describe(l.remote_region) +
                       " outside the neighbour's array " +
                       describe(index3{l.remote_layout.allocated(0), l.remote_layout.allocated(1),
                                       l.remote_layout.allocated(2)}));
    FUNNEL_EXPECTS(l.send_region.extents() == l.remote_region.extents() &&
                       l.send_region.extents() == l.recv_region.extents(),
                   which + "send region " + describe(l.send_region) + ", receive region " +
                       describe(l.recv_region) + " and remote region " + describe(l.remote_region) +
                       " differ in size");
  }

  // Decides which links go over IPC and maps the neighbours' pools and events.
  void setup_ipc(halo_method method, const unique_fd& my_fd) {
    const std::string job_dir = default_job_directory(comm_.get());  // collective over comm
    MPI_Comm node = MPI_COMM_NULL;
    FUNNEL_MPI_TRY(
        MPI_Comm_split_type(comm_.get(), MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "halo_exchange: node communicator");
    node_comm_ = comm_owner(node);

    // Every rank of the node must export its pool for any of them to use IPC (allgather_fds
    // is collective over the node).
    int node_can = my_fd.valid() ? 1 : 0;
    FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &node_can, 1, MPI_INT, MPI_MIN, node_comm_.get()),
                   "halo_exchange: can the node's pools be exported");

    const std::vector<std::string> node_gpus = gather_node_gpus();

    MPI_Group world_group = MPI_GROUP_NULL;
    MPI_Group node_group = MPI_GROUP_NULL;
    FUNNEL_MPI_TRY(MPI_Comm_group(comm_.get(), &world_group), "halo_exchange");
    FUNNEL_MPI_TRY(MPI_Comm_group(node_comm_.get(), &node_group), "halo_exchange");
    int impossible = 0;  // a link that `ipc` cannot serve
    std::string why;
    for (auto& l : links_) {
      if (l.path.transport == halo_transport::local) continue;
      int node_rank = MPI_UNDEFINED;
      FUNNEL_MPI_TRY(
          MPI_Group_translate_ranks(world_group, 1, &l.path.rank, node_group, &node_rank),
          "halo_exchange: is the neighbour on this node");
      // auto: IPC only to a neighbour on this rank's own GPU. Between two GPUs of a node the
      // staged MPI path measured faster on nvidia-h200-x2 (heat3d 2 x 1024^3 float, one rank
      // per GPU: 0.44-0.59 s with IPC peer copies and interprocess events, 0.37 s staged, 0.36 s
      // for one GPU alone), so `ipc` must be asked for explicitly there.
      const bool other_gpu =
          method == halo_method::automatic && node_rank != MPI_UNDEFINED && !node_gpus.empty() &&
          node_gpus[static_cast<std::size_t>(node_rank)] != node_gpus[node_index_];
      if (node_rank != MPI_UNDEFINED && node_can == 1 && !other_gpu) {
        l.path.transport = halo_transport::ipc;
        node_rank_of_[l.path.rank] = node_rank;
      } else if (method == halo_method::ipc) {
        impossible = 1;
        why = node_rank == MPI_UNDEFINED
                  ? "neighbour rank " + std::to_string(l.path.rank) + " is on another node"
                  : "a pool of this node is not ipc_exportable";
      }
    }
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);
    int any_impossible = impossible;
    FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &any_impossible, 1, MPI_INT, MPI_MAX, comm_.get()),
                   "halo_exchange: can every rank use IPC");
    if (any_impossible != 0) {
      throw unsupported("halo method 'ipc' cannot be used: " +
                        (impossible != 0 ? why : std::string("another rank cannot")) +
                        "; use 'auto' or 'mpi'");
    }

    int node_uses = node_rank_of_.empty() ? 0 : 1;
    FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &node_uses, 1, MPI_INT, MPI_MAX, node_comm_.get()),
                   "halo_exchange: does the node use IPC");
    uses_ipc_ = !node_rank_of_.empty();
    node_uses_ipc_ = node_uses != 0;
    if (!node_uses_ipc_) return;

    const std::vector<unique_fd> fds = allgather_fds(node_comm_.get(), my_fd.get(), job_dir);
    memory_pool_options options;
    options.device = backend_ == backend_kind::cuda ? current_cuda_device() : 0;
    for (const auto& [rank, node_rank] : node_rank_of_) {
      options.name = "halo import of rank " + std::to_string(rank);
      peers_[rank].pool.emplace(memory_pool::import_handle(
          backend_, fds[static_cast<std::size_t>(node_rank)].get(), options));
    }
    if (backend_ == backend_kind::cuda) exchange_events();
  }

  // The GPU UUID of every rank of the node (collective over node_comm_), indexed by node rank;
  // empty on the host backend. Sets node_index_.
  std::vector<std::string> gather_node_gpus() {
    FUNNEL_MPI_TRY(MPI_Comm_rank(node_comm_.get(), &node_index_), "halo_exchange: node rank");
    if (backend_ != backend_kind::cuda) return {};
    int node_size = 0;
    FUNNEL_MPI_TRY(MPI_Comm_size(node_comm_.get(), &node_size), "halo_exchange: node size");
    constexpr std::size_t width = 64;
    std::array<char, width> mine{};
    const std::string uuid = device(current_cuda_device()).properties().uuid;
    std::memcpy(mine.data(), uuid.data(), std::min(uuid.size(), width - 1));
    std::vector<char> all(width * static_cast<std::size_t>(node_size));
    FUNNEL_MPI_TRY(MPI_Allgather(mine.data(), static_cast<int>(width), MPI_CHAR, all.data(),
                                 static_cast<int>(width), MPI_CHAR, node_comm_.get()),
                   "halo_exchange: the node's GPUs");
    std::vector<std::string> gpus;
    gpus.reserve(static_cast<std::size_t>(node_size));
    for (int r = 0; r < node_size; ++r) {
      gpus.emplace_back(&all[width * static_cast<std::size_t>(r)]);
    }
    return gpus;
  }

  // CUDA: each rank records "my ghosts are free" and, per axis, "I wrote your ghosts" in
  // interprocess events; its IPC neighbours import them once, here.
  void exchange_events() {
    free_event_.emplace(backend_, event_flags::interprocess);
    ipc_event_handles mine{};
    mine.free = free_event_->export_ipc();
    for (int axis = 0; axis < 3; ++axis) {
      written_events_[static_cast<std::size_t>(axis)].emplace(backend_, event_flags::interprocess);
      mine.written[axis] = written_events_[static_cast<std::size_t>(axis)]->export_ipc();
    }
    // Receives first, then sends, then one wait: with both faces of an axis towards one rank
    // (a periodic axis of two ranks), blocking Sendrecv calls in link order would deadlock.
    std::vector<const link*> ipc_links;
    for (const auto& l : links_) {
      if (l.path.transport == halo_transport::ipc) ipc_links.push_back(&l);
    }
    std::vector<ipc_event_handles> theirs(ipc_links.size());
    std::vector<MPI_Request> requests(2 * ipc_links.size(), MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < ipc_links.size(); ++i) {
      const link& l = *ipc_links[i];
      FUNNEL_MPI_TRY(
          MPI_Irecv(&theirs[i], sizeof(ipc_event_handles), MPI_BYTE, l.path.rank,
                    tag(tag_setup, l.path.axis, opposite(l.path.where)), comm_.get(), &requests[i]),
          "halo_exchange: receiving IPC event handles");
    }
    for (std::size_t i = 0; i < ipc_links.size(); ++i) {
      const link& l = *ipc_links[i];
      FUNNEL_MPI_TRY(MPI_Isend(&mine, sizeof mine, MPI_BYTE, l.path.rank,
                               tag(tag_setup, l.path.axis, l.path.where), comm_.get(),
                               &requests[ipc_links.size() + i]),
                     "halo_exchange: sending IPC event handles");
    }
    FUNNEL_MPI_TRY(
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "halo_exchange: exchanging IPC event handles");
    for (std::size_t i = 0; i < ipc_links.size(); ++i) {
      const link& l = *ipc_links[i];
      ipc_peer& peer = peers_[l.path.rank];
      if (!peer.free) peer.free.emplace(event::import_ipc(theirs[i].free));
      auto& written = peer.written[static_cast<std::size_t>(l.path.axis)];
      if (!written) written.emplace(event::import_ipc(theirs[i].written[l.path.axis]));
    }
  }

  void allocate_buffers() {
    const stream_view setup = backend_ == backend_kind::host
                                  ? stream_view::host()
                                  : stream_view::from_native_handle(nullptr);
    bool staged_or_aware = false;
    for (auto& l : links_) {
      const halo_transport t = l.path.transport;
      if (t == halo_transport::local || t == halo_transport::ipc) continue;
      l.send_buffer = device_buffer<unsigned char>(*pool_, setup, l.bytes);
      l.recv_buffer = device_buffer<unsigned char>(*pool_, setup, l.bytes);
      if (t == halo_transport::mpi_staged) {
        l.send_staging.emplace(backend_, l.bytes);
        l.recv_staging.emplace(backend_, l.bytes);
        l.staged.emplace(backend_);
      }
      staged_or_aware = staged_or_aware || t != halo_transport::mpi_host;
    }
    if (staged_or_aware) buffers_idle_.emplace(backend_);
    setup.synchronize();
  }

  // The neighbours' "free" messages carry the fields they want written this step.
  void ipc_handshake() {
    if (backend_ == backend_kind::cuda) free_event_->record(stream_);
    if (exported_field_ != field_) {
      const ipc_pointer p = pool_->export_pointer(field_);
      std::memcpy(my_export_.field.data(), p.bytes, my_export_.field.size());
      for (int a = 0; a < 3; ++a) my_export_.interior[a] = layout_.interior[a];
      my_export_.halo = layout_.halo;
      my_export_.element_size = static_cast<std::int64_t>(element_size_);
      exported_field_ = field_;
    }
    std::vector<MPI_Request> recvs;
    for (auto& l : links_) {
      if (l.path.transport != halo_transport::ipc) continue;
      recvs.emplace_back();
      FUNNEL_MPI_TRY(
          MPI_Irecv(&l.peer_field, static_cast<int>(sizeof l.peer_field), MPI_BYTE, l.path.rank,
                    tag(tag_free, l.path.axis, opposite(l.path.where)), comm_.get(), &recvs.back()),
          "halo_exchange: receiving a neighbour's 'ghosts free'");
      send(&my_export_, sizeof my_export_, l.path.rank, tag(tag_free, l.path.axis, l.path.where));
    }
    FUNNEL_MPI_TRY(MPI_Waitall(static_cast<int>(recvs.size()), recvs.data(), MPI_STATUSES_IGNORE),
                   "halo_exchange: waiting for the neighbours' 'ghosts free'");
    check_peer_fields();
    for (auto& l : links_) {
      if (l.path.transport != halo_transport::ipc) continue;
      l.remote_field = remote_field(l.path.rank, l.peer_field.field);
      if (backend_ == backend_kind::cuda) wait_event(stream_, peers_[l.path.rank].free->view());
    }
  }

  // Every IPC neighbour must lay its field out as this rank computed (remote_layout: the strides
  // of the writes into it) and hold elements of our size. On a mismatch the sends already posted
  // are completed first (their receives are posted), so the exchange can be destroyed cleanly.
  void check_peer_fields() {
    std::string error;
    for (const auto& l : links_) {
      if (l.path.transport != halo_transport::ipc) continue;
      const ipc_field_message& m = l.peer_field;
      const index3 theirs{m.interior[0], m.interior[1], m.interior[2]};
      if (theirs == l.remote_layout.interior && m.halo == l.remote_layout.halo &&
          m.element_size == static_cast<std::int64_t>(element_size_)) {
        continue;
      }
      error = "halo_exchange: rank " + std::to_string(l.path.rank) + " gives its field interior " +
              describe(theirs) + ", halo " + std::to_string(m.halo) + " and elements of " +
              std::to_string(m.element_size) + " B; this rank expects interior " +
              describe(l.remote_layout.interior) + ", halo " +
              std::to_string(l.remote_layout.halo) + " and " + std::to_string(element_size_) +
              " B (do all ranks build the same decomposition and element size?)";
      break;
    }
    if (error.empty()) return;
    if (!pending_sends_.empty()) {
      MPI_Waitall(static_cast<int>(pending_sends_.size()), pending_sends_.data(),
                  MPI_STATUSES_IGNORE);
      pending_sends_.clear();
    }
    throw invalid_argument(error);
  }

  void* remote_field(int rank, const export_bytes& bytes) {
    ipc_peer& peer = peers_[rank];
    auto it = peer.fields.find(bytes);
    if (it != peer.fields.end()) return it->second;
    ipc_pointer p;
    std::memcpy(p.bytes, bytes.data(), bytes.size());
    void* ptr = peer.pool->import_pointer(p);
    peer.fields.emplace(bytes, ptr);
    return ptr;
  }

  void send(const void* data, std::size_t bytes, int to, int message_tag) {
    pending_sends_.emplace_back();
    FUNNEL_MPI_TRY(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, to, message_tag, comm_.get(),
                             &pending_sends_.back()),
                   "halo_exchange: sending to rank " + std::to_string(to));
  }

  void copy(const detail::strided_block& dst, const detail::strided_block& src, const box& region) {
    detail::copy_strided(stream_, element_size_, dst, src, region.extents());
  }

  detail::strided_block my_block(const box& region) const {
    return detail::field_block(field_, layout_, region, element_size_);
  }

  // Starts the transfers of one axis: receives posted, faces packed and sent, IPC and local
  // faces written.
  void post_phase(int axis) {
    bool wrote_ipc = false;
    bool staged = false;
    bool aware = false;
    for (auto& l : links_) {
      if (l.path.axis != axis) continue;
      switch (l.path.transport) {
        case halo_transport::local:
          copy(detail::field_block(field_, l.remote_layout, l.remote_region, element_size_),
               my_block(l.send_region), l.send_region);
          break;
        case halo_transport::ipc:
          copy(detail::field_block(l.remote_field, l.remote_layout, l.remote_region, element_size_),
               my_block(l.send_region), l.send_region);
          wrote_ipc = true;
          FUNNEL_MPI_TRY(MPI_Irecv(&l.flag, 1, MPI_BYTE, l.path.rank,
                                   tag(tag_written, axis, opposite(l.path.where)), comm_.get(),
                                   &l.recv_request),
                         "halo_exchange: receiving a neighbour's 'written'");
          break;
        default: {
          void* landing = l.path.transport == halo_transport::mpi_staged ? l.recv_staging->data()
                                                                         : l.recv_buffer.data();
          FUNNEL_MPI_TRY(
              MPI_Irecv(landing, static_cast<int>(l.bytes), MPI_BYTE, l.path.rank,
                        tag(tag_data, axis, opposite(l.path.where)), comm_.get(), &l.recv_request),
              "halo_exchange: receiving a face from rank " + std::to_string(l.path.rank));
          copy(detail::dense_block(l.send_buffer.data(), l.send_region.extents()),
               my_block(l.send_region), l.send_region);
          if (l.path.transport == halo_transport::mpi_host) {
            send(l.send_buffer.data(), l.bytes, l.path.rank, tag(tag_data, axis, l.path.where));
          } else if (l.path.transport == halo_transport::mpi_staged) {
            copy_async(stream_, l.send_staging->data(), l.send_buffer.data(), l.bytes);
            l.staged->record(stream_);
            staged = true;
          } else {
            aware = true;
          }
        }
      }
    }
    // MPI does not follow the stream: wait until the packed faces are really there. Staged
    // faces go one by one, so the first face's message overlaps the second face's copy.
    if (aware) stream_.synchronize();
    for (auto& l : links_) {
      if (l.path.axis != axis) continue;
      if (aware && l.path.transport == halo_transport::mpi_cuda_aware) {
        send(l.send_buffer.data(), l.bytes, l.path.rank, tag(tag_data, axis, l.path.where));
      } else if (staged && l.path.transport == halo_transport::mpi_staged) {
        l.staged->synchronize();
        send(l.send_staging->data(), l.bytes, l.path.rank, tag(tag_data, axis, l.path.where));
      }
    }
    if (wrote_ipc) {
      if (backend_ == backend_kind::cuda) {
        written_events_[static_cast<std::size_t>(axis)]->record(stream_);
      }
      static const unsigned char written = 1;
      for (auto& l : links_) {
        if (l.path.axis == axis && l.path.transport == halo_transport::ipc) {
          send(&written, 1, l.path.rank, tag(tag_written, axis, l.path.where));
        }
      }
    }
  }

  // Waits for one axis's incoming faces (in arrival order) and puts them into the ghosts.
  void complete_phase(int axis) {
    std::vector<link*> waiting;
    std::vector<MPI_Request> requests;
    for (auto& l : links_) {
      if (l.path.axis != axis || l.recv_request == MPI_REQUEST_NULL) continue;
      waiting.push_back(&l);
      requests.push_back(l.recv_request);
    }
    for (std::size_t done = 0; done < requests.size(); ++done) {
      int index = MPI_UNDEFINED;
      FUNNEL_MPI_TRY(MPI_Waitany(static_cast<int>(requests.size()), requests.data(), &index,
                                 MPI_STATUS_IGNORE),
                     "halo_exchange: waiting for a face");
      link& l = *waiting[static_cast<std::size_t>(index)];
      l.recv_request = MPI_REQUEST_NULL;
      switch (l.path.transport) {
        case halo_transport::ipc:
          if (backend_ == backend_kind::cuda) {
            wait_event(stream_,
                       peers_[l.path.rank].written[static_cast<std::size_t>(axis)]->view());
          }
          break;
        case halo_transport::mpi_staged:
          copy_async(stream_, l.recv_buffer.data(), l.recv_staging->data(), l.bytes);
          [[fallthrough]];
        default:
          copy(my_block(l.recv_region),
               detail::dense_block(l.recv_buffer.data(), l.recv_region.extents()), l.recv_region);
      }
    }
  }

  void release_ipc() noexcept {
    for (auto& [rank, peer] : peers_) {
      for (auto& [bytes, ptr] : peer.fields) peer.pool->close_imported_pointer(ptr);
      peer.fields.clear();
    }
    peers_.clear();
    int finalized = 0;
    MPI_Finalized(&finalized);
    // No rank may free a field while a neighbour still has it mapped.
    if (node_uses_ipc_ && finalized == 0) MPI_Barrier(node_comm_.get());
  }

  backend_kind backend_;
  memory_pool* pool_;
  std::size_t element_size_;
  field_layout layout_;
  comm_owner comm_;
  comm_owner node_comm_;
  int rank_ = 0;
  std::vector<link> links_;
  std::vector<neighbor_path> paths_;
  std::vector<MPI_Request> pending_sends_;
  std::optional<event> buffers_idle_;

  bool uses_ipc_ = false;
  bool node_uses_ipc_ = false;
  int node_index_ = 0;  // this rank in node_comm_
  std::map<int, int> node_rank_of_;
  std::map<int, ipc_peer> peers_;
  std::optional<event> free_event_;
  std::array<std::optional<event>, 3> written_events_;
  void* exported_field_ = nullptr;
  ipc_field_message my_export_{};

  bool begun_ = false;
  int phase_ = 0;
  stream_view stream_ = stream_view::host();
  void* field_ = nullptr;
};

halo_exchange::halo_exchange(const cartesian_decomposition& decomposition, backend_kind backend,
                             memory_pool& pool, std::size_t element_size, halo_method method)
    : impl_(std::make_unique<impl>(decomposition, backend, pool, element_size, method)) {}

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

const std::vector<neighbor_path>& halo_exchange::paths() const noexcept {
  static const std::vector<neighbor_path> none;
  return impl_ ? impl_->paths() : none;
}

}  // namespace funnel
