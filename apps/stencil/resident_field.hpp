/**
 * @file resident_field.hpp
 * @brief A field kept in device memory: two buffers from the pool, the compute and halo
 * streams, and the overlapped step (halo begin, inner update, halo finish, boundary update).
 */
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/error.hpp"
#include "funnel/halo/halo_exchange.hpp"
#include "funnel/halo/halo_method.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/device.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/event_flags.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "regions.hpp"

namespace funnel::stencil {

/// @brief Which of the two streams an update runs on (a problem may keep one accumulator each).
enum class lane { compute = 0, halo = 1 };

/**
 * @brief The resident-mode field of one rank.
 *
 * Per step (see step()): the halo stream starts the exchange of the current buffer while the
 * compute stream updates the inner cells into the next buffer; once the ghosts are in, the halo
 * stream (high priority, so the critical path goes first) updates the boundary layer; then the
 * buffers swap. Each cell's update is the same whatever the split, so any decomposition gives
 * the field of one rank bitwise.
 * @tparam T float or double
 */
template <class T>
class resident_field {
 public:
  /// @brief The stencil update of `region` from `in` to `out` on `stream`.
  using update_fn =
      std::function<void(stream_view stream, lane which, const T* in, T* out, const box& region)>;

  /**
   * @param backend where the buffers live
   * @param decomposition the split (outlives this object)
   * @param pool the pool both buffers come from (outlives this object)
   * @param halo_method --halo value
   * @throw funnel::unsupported when --halo ipc cannot be used (a neighbour on another node)
   */
  resident_field(backend_kind backend, const cartesian_decomposition& decomposition,
                 memory_pool& pool, const std::string& halo_method)
      : backend_(backend),
        pool_(&pool),
        layout_(decomposition.layout()),
        compute_(backend),
        halo_stream_(backend, stream_priority::high),
        output_(backend),
        current_(pool, compute_, static_cast<std::size_t>(layout_.allocated_cells())),
        next_(pool, compute_, static_cast<std::size_t>(layout_.allocated_cells())),
        staging_(backend, static_cast<std::size_t>(layout_.allocated_cells()) * sizeof(T)),
        halo_(decomposition, backend, pool, sizeof(T), parse_halo_method(halo_method)),
        regions_(split_for_overlap(layout_, 1)),
        compute_done_(backend),
        halo_done_(backend),
        stashed_(backend),
        landed_(backend),
        timers_{halo_timer(backend), halo_timer(backend)} {}

  /// @brief The rank's layout.
  [[nodiscard]] const field_layout& layout() const noexcept { return layout_; }
  /// @brief The field at the current step (device memory).
  [[nodiscard]] T* current() const noexcept { return current_.data(); }
  /// @brief The other buffer (written by the next step).
  [[nodiscard]] T* next() const noexcept { return next_.data(); }
  /// @brief The compute stream (initialisation and downloads run here too).
  [[nodiscard]] stream_view compute_stream() const noexcept { return compute_; }
  /// @brief Per-neighbour halo paths for the plan.
  [[nodiscard]] std::vector<std::string> halo_paths() const {
    std::vector<std::string> lines;
    for (const auto& path : halo_.paths()) lines.push_back(to_string(path));
    return lines;
  }
  /// @brief Bytes of device memory held for the two buffers.
  [[nodiscard]] std::size_t bytes() const noexcept {
    return 2 * static_cast<std::size_t>(layout_.allocated_cells()) * sizeof(T);
  }

  /**
   * @brief Advances one step with overlap, then swaps the buffers.
   *
   * The exchange is timed on the halo stream (events before and after begin() and finish()),
   * so on CUDA the figure is the time the exchange's stream work took, not the host time of
   * enqueueing it. Reading it waits for that work, so the timing of a step is collected two
   * steps later (which also keeps the host at most two steps ahead); halo_seconds_pending()
   * collects the rest.
   * @param update the stencil
   * @return halo exchange seconds of the step two before this one (0 for the first two)
   */
  double step(const update_fn& update) {
    halo_timer& timer = timers_[parity_];
    parity_ ^= 1;
    const double collected = timer.collect();
    // The inner update writes `next`, which the previous boundary update read as `current`.
    wait_event(compute_, halo_done_.view());
    timer.marks[0].record(halo_stream_);
    halo_.begin(halo_stream_, current_.data());
    timer.marks[1].record(halo_stream_);
    update(compute_, lane::compute, current_.data(), next_.data(), regions_.inner);
    timer.marks[2].record(halo_stream_);
    halo_.finish(halo_stream_);
    timer.marks[3].record(halo_stream_);
    timer.pending = true;
    for (const box& slab : regions_.boundary) {
      update(halo_stream_, lane::halo, current_.data(), next_.data(), slab);
    }
    halo_done_.record(halo_stream_);
    compute_done_.record(compute_);
    // The next exchange packs the buffer the inner update is writing now.
    wait_event(halo_stream_, compute_done_.view());
    std::swap(current_, next_);
    return collected;
  }

  /// @brief Waits for the steps not yet collected by step() and returns their halo seconds.
  double halo_seconds_pending() {
    double seconds = 0.0;
    for (auto& timer : timers_) seconds += timer.collect();
    return seconds;
  }

  /**
   * @brief Copies the current field (halo included) to the host staging buffer.
   * @return the staging buffer, valid until the next download()
   */
  [[nodiscard]] T* download() {
    synchronize();
    copy_async(compute_, staging_.data(), current_.data(), staging_.size());
    compute_.synchronize();
    return static_cast<T*>(staging_.data());
  }

  /**
   * @brief Starts copying the current field (halo included) into `destination` and returns
   * without waiting for it.
   *
   * On the cuda backend the field is first copied within device memory into a buffer from the
   * pool (the next step's streams wait only for that copy, a fraction of a step), then
   * downloaded on the output stream while the next steps run. When the pool cannot hold that
   * buffer (a --pool-limit), the download goes straight from the field and the next step waits
   * for it. On the host backend the copy is done when this returns.
   * @param destination host memory of layout().allocated_cells() values, pinned for an
   * asynchronous download; nothing else may use it until the copy is done
   * @return waits for the copy; callable from another thread (it makes this thread's device
   * current there); valid until the next download_async()
   */
  [[nodiscard]] std::function<void()> download_async(T* destination) {
    const std::size_t bytes = staging_.size();
    if (backend_ == backend_kind::host) {
      synchronize();
      copy_async(compute_, destination, current_.data(), bytes);
      return {};
    }
    // The last step's boundary update (halo stream) is part of the field.
    wait_event(compute_, halo_done_.view());
    device_buffer<T> stash;
    try {
      stash =
          device_buffer<T>(*pool_, compute_, static_cast<std::size_t>(layout_.allocated_cells()));
    } catch (const out_of_memory& e) {
      if (!told_no_stash_) {
        funnel::detail::log_error(
            std::string("snapshot downloads not overlapped with the next steps: ") + e.what());
        told_no_stash_ = true;
      }
    }
    if (stash.empty()) {
      copy_async(compute_, destination, current_.data(), bytes);
      landed_.record(compute_);
      // The next exchange may write the ghosts the download reads.
      wait_event(halo_stream_, landed_.view());
    } else {
      copy_async(compute_, stash.data(), current_.data(), bytes);
      stashed_.record(compute_);
      wait_event(halo_stream_, stashed_.view());
      wait_event(output_, stashed_.view());
      copy_async(output_, destination, stash.data(), bytes);
      landed_.record(output_);
      stash.set_stream(output_);  // back to the pool once the download is done
    }
    return [landed = &landed_, gpu = device::current()] {
      gpu.make_current();
      landed->synchronize();
    };
  }

  /// @brief The host staging buffer (fill it, then upload()).
  [[nodiscard]] T* staging() const noexcept { return static_cast<T*>(staging_.data()); }

  /// @brief Copies the staging buffer into the current field.
  void upload() {
    synchronize();
    copy_async(compute_, current_.data(), staging_.data(), staging_.size());
    compute_.synchronize();
  }

  /// @brief Waits for all work of both streams.
  void synchronize() {
    compute_.synchronize();
    halo_stream_.synchronize();
  }

 private:
  /// Events around one step's begin() and finish() on the halo stream. On the host backend
  /// the inner update runs between them on the calling thread, so only the two halo intervals
  /// are summed, never marks[0] to marks[3].
  struct halo_timer {
    explicit halo_timer(backend_kind backend)
        : marks{event(backend, event_flags::timing), event(backend, event_flags::timing),
                event(backend, event_flags::timing), event(backend, event_flags::timing)} {}
    std::array<event, 4> marks;
    bool pending = false;
    double collect() {
      if (!pending) return 0.0;
      pending = false;
      marks[3].synchronize();
      return 1e-3 * (static_cast<double>(event::elapsed_ms(marks[0], marks[1])) +
                     static_cast<double>(event::elapsed_ms(marks[2], marks[3])));
    }
  };

  backend_kind backend_;
  memory_pool* pool_;
  field_layout layout_;
  stream compute_;
  stream halo_stream_;
  stream output_;  // snapshot downloads
  device_buffer<T> current_;
  device_buffer<T> next_;
  pinned_buffer staging_;
  halo_exchange halo_;
  overlap_regions regions_;
  event compute_done_;
  event halo_done_;
  event stashed_;
  event landed_;
  bool told_no_stash_ = false;
  std::array<halo_timer, 2> timers_;
  int parity_ = 0;
};

}  // namespace funnel::stencil
