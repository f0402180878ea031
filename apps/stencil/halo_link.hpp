/**
 * @file halo_link.hpp
 * @brief The app's one connection to the framework's halo exchange.
 */
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::stencil {

/**
 * @brief Fills a field's ghost cells with the neighbours' boundary values, split into begin
 * and finish so the interior update can run in between.
 *
 * Ghosts along every axis (edges and corners included) hold the neighbours' values once the
 * stream reaches the end of finish(); ghosts on a non-periodic global boundary are never
 * written (they hold the Dirichlet values).
 */
class halo_link {
 public:
  /**
   * @param decomposition the split of the grid (outlives this object)
   * @param backend backend of the field's memory
   * @param pool pool of the field (IPC exports it; message buffers come from it)
   * @param element_size bytes per cell value (4 or 8)
   * @param method "auto", "ipc" or "mpi" (--halo)
   * @throw funnel::invalid_argument / funnel::unsupported when the method cannot be used
   */
  halo_link(const cartesian_decomposition& decomposition, backend_kind backend, memory_pool& pool,
            std::size_t element_size, const std::string& method);
  ~halo_link();
  halo_link(const halo_link&) = delete;
  halo_link& operator=(const halo_link&) = delete;
  halo_link(halo_link&&) noexcept;
  halo_link& operator=(halo_link&&) noexcept;

  /**
   * @brief Starts the exchange of `field`'s boundary values (stream-ordered).
   * @param stream the (high-priority) halo stream
   * @param field the rank's field, in the pool's memory
   */
  void begin(stream_view stream, void* field);
  /**
   * @brief Completes the exchange: ghosts are written when `stream` gets here.
   * @param stream the stream given to begin()
   * @param field the field given to begin()
   */
  void finish(stream_view stream, void* field);

  /// @brief One line per neighbour: "x- rank 3 mpi", for the plan printout.
  [[nodiscard]] std::vector<std::string> paths() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace funnel::stencil
