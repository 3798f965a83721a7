// The CPUs a cgroup CPU quota leaves this process (containers, systemd
// slices): the affinity mask says where it may run, the quota how much of
// that time it gets. Read from files under a root given as an argument so
// tests feed fake hierarchies.
#pragma once

#include <optional>
#include <string>

namespace tessel::target {

// The least ceil(quota / period), at least 1, over the process's cgroup and
// its ancestors: cgroup v2's cpu.max ("200000 100000"; "max 100000" is no
// quota), or v1's cpu.cfs_quota_us and cpu.cfs_period_us (-1 is none) under
// the cpu controller's hierarchy. `procSelfCgroup` is the text of
// /proc/self/cgroup; `cgroupRoot` is where the hierarchies are mounted
// (normally /sys/fs/cgroup; v2 also under its "unified" folder on hybrid
// systems). nullopt when no quota applies or none can be read.
std::optional<int> cgroupCpuLimit(const std::string& procSelfCgroup, const std::string& cgroupRoot);

}  // namespace tessel::target
