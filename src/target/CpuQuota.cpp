#include "target/CpuQuota.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "support/TextFile.h"

namespace tessel::target {

namespace {

std::optional<long long> parseCount(const std::string& text) {
  std::istringstream in(text);
  long long value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

// CPUs for a quota of `quota` microseconds per `period` (none when either is not positive).
std::optional<int> cpusFor(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return static_cast<int>(std::max(1LL, (quota + period - 1) / period));
}

// "QUOTA PERIOD" or "max PERIOD".
std::optional<int> cpusFromCpuMax(const std::string& text) {
  std::istringstream in(text);
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || quota == "max") return std::nullopt;
  std::optional<long long> q = parseCount(quota);
  return q ? cpusFor(*q, period) : std::nullopt;
}

// The cgroup `path` ("/a/b") and its ancestors, up to "/".
std::vector<std::string> selfAndAncestors(std::string path) {
  std::vector<std::string> out;
  while (!path.empty() && path.back() == '/') path.pop_back();
  while (true) {
    out.push_back(path.empty() ? "/" : path);
    if (path.empty()) break;
    path = path.substr(0, path.rfind('/'));
  }
  return out;
}

void keepLeast(std::optional<int>& least, std::optional<int> cpus) {
  if (cpus && (!least || *cpus < *least)) least = cpus;
}

}  // namespace

std::optional<int> cgroupCpuLimit(const std::string& procSelfCgroup, const std::string& cgroupRoot) {
  std::optional<int> least;
  std::istringstream lines(procSelfCgroup);
  std::string line;
  while (std::getline(lines, line)) {
    // "ID:CONTROLLERS:PATH"; v2's line is "0::PATH".
    size_t first = line.find(':');
    size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (path.empty() || path[0] != '/') continue;
    if (controllers.empty()) {
      for (const std::string& root : {cgroupRoot, cgroupRoot + "/unified"})
        for (const auto& cgroup : selfAndAncestors(path))
          if (auto text = readTextIfPresent(root + (cgroup == "/" ? "" : cgroup) + "/cpu.max"))
            keepLeast(least, cpusFromCpuMax(*text));
      continue;
    }
    std::vector<std::string> names;
    std::istringstream list(controllers);
    for (std::string name; std::getline(list, name, ',');) names.push_back(name);
    if (std::find(names.begin(), names.end(), "cpu") == names.end()) continue;
    for (const std::string& mount : {cgroupRoot + "/" + controllers, cgroupRoot + "/cpu"})
      for (const auto& cgroup : selfAndAncestors(path)) {
        std::string dir = mount + (cgroup == "/" ? "" : cgroup);
        std::optional<std::string> quota = readTextIfPresent(dir + "/cpu.cfs_quota_us");
        std::optional<std::string> period = readTextIfPresent(dir + "/cpu.cfs_period_us");
        if (!quota || !period) continue;
        std::optional<long long> q = parseCount(*quota), p = parseCount(*period);
        if (q && p) keepLeast(least, cpusFor(*q, *p));
      }
  }
  return least;
}

}  // namespace tessel::target
