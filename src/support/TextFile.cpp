#include "support/TextFile.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessel/error.h"

namespace tessel {

std::string readTextFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) userError("'" + path + "' is a directory, not a file");
  std::ifstream f(path, std::ios::binary);
  if (!f) userError("cannot open '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) userError("cannot read '" + path + "'");
  return ss.str();
}

std::optional<std::string> readTextIfPresent(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace tessel
