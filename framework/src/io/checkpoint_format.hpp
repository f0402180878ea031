// Internal: names in a checkpoint file that writer and reader must agree on.
#pragma once

#include <cstdint>

namespace funnel::io::detail {

inline constexpr const char* checkpoint_format = "funnel-checkpoint";
inline constexpr std::int64_t checkpoint_format_version = 1;

}  // namespace funnel::io::detail
