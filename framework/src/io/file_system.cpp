#include "file_system.hpp"

#include <filesystem>
#include <system_error>

#include "funnel/error.hpp"

namespace funnel::io::detail {
namespace {

namespace fs = std::filesystem;

void check(const std::error_code& ec, const char* call, const std::string& path) {
  if (ec)
    throw system_error(std::string(call) + " '" + path + "' failed: " + ec.message(), ec.value());
}

}  // namespace

std::string join(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parent_path(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void make_directories(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  check(ec, "create_directories", path);
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  check(ec, "remove_all", path);
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

std::vector<std::string> list_directory(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  check(ec, "list", path);
  return names;
}

}  // namespace funnel::io::detail
