// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: the neighbour is this rank itself (a periodic axis split once): ghosts are a copy
// within the field, in stream order.
#pragma once

#include <utility>
#include <vector>

#include "halo_link.hpp"

namespace funnel::detail {

class local_transport final : public link_transport {
 public:
  explicit local_transport(std::vector<halo_link> links) : links_(std::move(links)) {}

  [[nodiscard]] const std::vector<halo_link>& links() const noexcept override { return links_; }
  [[nodiscard]] bool remote() const noexcept override { return false; }
  [[nodiscard]] bool replayable() const noexcept override { return true; }
  void post(const exchange_step& step, int axis) override {
    for (const auto& l : links_) {
      if (l.path.axis != axis) continue;
      step.copy(field_block(step.field, l.remote_layout, l.remote_region, step.element_size),
                step.block(l.send_region), l.send_region);
    }
  }
  void complete(const exchange_step& /*step*/, int /*axis*/) override {}

 private:
  std::vector<halo_link> links_;
};

}  // namespace funnel::detail
