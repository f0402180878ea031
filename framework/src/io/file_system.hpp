// Internal: directory helpers (std::filesystem errors turned into funnel::system_error).
#pragma once

#include <string>
#include <vector>

namespace funnel::io::detail {

/// @brief a + "/" + b.
std::string join(const std::string& a, const std::string& b);
/// @brief The part after the last '/'.
std::string base_name(const std::string& path);
/// @brief The part before the last '/' ("." when there is none).
std::string parent_path(const std::string& path);
/// @brief mkdir -p; throws funnel::system_error.
void make_directories(const std::string& path);
/// @brief rm -r; a missing path is fine; throws funnel::system_error.
void remove_tree(const std::string& path);
/// @brief True when `path` exists (any type).
bool exists(const std::string& path);
/// @brief True when `path` is a directory.
bool is_directory(const std::string& path);
/// @brief Names of the entries of a directory (not sorted); throws funnel::system_error.
std::vector<std::string> list_directory(const std::string& path);

}  // namespace funnel::io::detail
