// Stand-in until funnel::halo_exchange (framework/include/funnel/halo) lands: MPI on host
// memory, axis by axis over the full allocated extents of the other axes so that edge and
// corner ghosts are right. Only this file changes when the framework's exchange replaces it.
#include "halo_link.hpp"

#include <mpi.h>

#include <cstring>

#include "funnel/error.hpp"

namespace funnel::stencil {
namespace {

/// Copies `region` of a field to/from a dense buffer, x fastest.
void copy_region(const field_layout& layout, std::size_t element_size, const box& region,
                 unsigned char* field, unsigned char* buffer, bool to_buffer) {
  const std::size_t row = static_cast<std::size_t>(region.extent(0)) * element_size;
  for (std::int64_t k = region.lo[2]; k < region.hi[2]; ++k) {
    for (std::int64_t j = region.lo[1]; j < region.hi[1]; ++j) {
      unsigned char* cell =
          field + static_cast<std::size_t>(layout.index(region.lo[0], j, k)) * element_size;
      if (to_buffer) {
        std::memcpy(buffer, cell, row);
      } else {
        std::memcpy(cell, buffer, row);
      }
      buffer += row;
    }
  }
}

}  // namespace

struct halo_link::impl {
  const cartesian_decomposition* decomposition;
  std::size_t element_size;
  std::vector<unsigned char> send, receive;
};

halo_link::halo_link(const cartesian_decomposition& decomposition, backend_kind backend,
                     memory_pool& /*pool*/, std::size_t element_size, const std::string& method)
    : impl_(std::make_unique<impl>(impl{&decomposition, element_size, {}, {}})) {
  if (backend != backend_kind::host) {
    throw unsupported(
        "the halo exchange of this build runs on the host backend only; use "
        "--backend host");
  }
  if (method == "ipc") {
    throw unsupported("--halo 'ipc' is not available in this build: expected auto|mpi");
  }
}

halo_link::~halo_link() = default;
halo_link::halo_link(halo_link&&) noexcept = default;
halo_link& halo_link::operator=(halo_link&&) noexcept = default;

void halo_link::begin(stream_view /*stream*/, void* /*field*/) {}

void halo_link::finish(stream_view stream, void* field) {
  stream.synchronize();
  const auto& d = *impl_->decomposition;
  const field_layout layout = d.layout();
  const box interior = layout.interior_box();
  auto* bytes = static_cast<unsigned char*>(field);
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t h = layout.halo_along(axis);
    if (h == 0) continue;
    box all{{0, 0, 0}, {layout.allocated(0), layout.allocated(1), layout.allocated(2)}};
    for (const side s : {side::lower, side::upper}) {
      // Send my boundary slab on side s; receive into my ghost slab on the opposite side.
      box send_box = all;
      box ghost_box = all;
      if (s == side::lower) {
        send_box.lo[axis] = interior.lo[axis];
        send_box.hi[axis] = interior.lo[axis] + h;
        ghost_box.lo[axis] = interior.hi[axis];
        ghost_box.hi[axis] = interior.hi[axis] + h;
      } else {
        send_box.lo[axis] = interior.hi[axis] - h;
        send_box.hi[axis] = interior.hi[axis];
        ghost_box.lo[axis] = interior.lo[axis] - h;
        ghost_box.hi[axis] = interior.lo[axis];
      }
      const int to = d.neighbor(axis, s);
      const int from = d.neighbor(axis, opposite(s));
      const std::size_t count = static_cast<std::size_t>(send_box.cells()) * impl_->element_size;
      impl_->send.resize(count);
      impl_->receive.resize(count);
      if (to != MPI_PROC_NULL) {
        copy_region(layout, impl_->element_size, send_box, bytes, impl_->send.data(), true);
      }
      FUNNEL_MPI_TRY(MPI_Sendrecv(impl_->send.data(), static_cast<int>(count), MPI_BYTE, to,
                                  axis * 2 + static_cast<int>(s), impl_->receive.data(),
                                  static_cast<int>(count), MPI_BYTE, from,
                                  axis * 2 + static_cast<int>(s), d.comm(), MPI_STATUS_IGNORE),
                     "halo_link");
      if (from != MPI_PROC_NULL) {
        copy_region(layout, impl_->element_size, ghost_box, bytes, impl_->receive.data(), false);
      }
    }
  }
}

std::vector<std::string> halo_link::paths() const {
  const auto& d = *impl_->decomposition;
  std::vector<std::string> lines;
  const char* axes = "xyz";
  for (int axis = 0; axis < 3; ++axis) {
    for (const side s : {side::lower, side::upper}) {
      const int n = d.neighbor(axis, s);
      if (n == MPI_PROC_NULL) continue;
      lines.push_back(std::string(1, axes[axis]) + (s == side::lower ? "-" : "+") + " rank " +
                      std::to_string(n) + " mpi");
    }
  }
  return lines;
}

}  // namespace funnel::stencil
