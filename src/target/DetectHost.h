// Describes the CPU this process runs on: model, ISA features (cpuid, at run
// time), cores it may use, data caches (sysfs, else cpuid), frequency and the
// peaks they imply. The parsing steps take their input as arguments (cpuinfo
// text, a sysfs root) so tests feed them fake machines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "target/Hardware.h"

namespace tessel::target {

// The first processor block of /proc/cpuinfo.
struct CpuInfo {
  std::string modelName;  // "model name", spaces collapsed; empty when absent
  double mhz = 0;         // "cpu MHz"; 0 when absent
  std::vector<std::string> flags;
};
CpuInfo parseCpuInfo(const std::string& text);

// The data and unified caches of cpu0 under `sysfsRoot` (normally
// /sys/devices/system/cpu), fastest first, named L1, L2, ..., source "sysfs",
// after dropImplausibleCaches. Empty when the tree describes no cache.
std::vector<MemoryLevel> parseCpuCaches(const std::string& sysfsRoot);

// One entry of cpuid leaf 4 (Intel) or 0x8000001D (AMD), which share a
// layout; nullopt for instruction caches and the end of the list.
std::optional<MemoryLevel> decodeCpuidCache(uint32_t eax, uint32_t ebx, uint32_t ecx);

// AMD's older cache leaves, which hypervisors that hide 0x8000001D (it reads
// all zeros) still fill: L1 data from 0x80000005 ECX, L2 from 0x80000006 ECX,
// L3 from 0x80000006 EDX. They say nothing of sharing: L1 and L2 are taken
// as private, L3 as shared by `cores` (the CPUs this process sees). Fastest
// first, absent levels (size 0) left out, before dropImplausibleCaches.
std::vector<MemoryLevel> decodeAmdLegacyCaches(uint32_t l1Ecx, uint32_t l2Ecx, uint32_t l3Edx, int cores);

// Removes caches that cannot be what they claim; see DetectHost.cpp for the
// rule. A note naming each dropped level goes into the `source` of the level
// kept before it. `cpusPresent` <= 0 skips the CPU-count test.
void dropImplausibleCaches(std::vector<MemoryLevel>& caches, int cpusPresent);

// cpuinfo_max_freq of cpu0 under `sysfsRoot` (kHz) if present, else cpuinfo's
// "cpu MHz"; 0 when neither is known.
double detectFrequencyHz(const std::string& sysfsRoot, const CpuInfo& cpu);

// A CPU description from its detected parts: compute units from the ISA, the
// caches, then DRAM (unbounded, bandwidth unknown), and computed peaks.
Hardware describeCpu(const std::string& modelName, const std::vector<std::string>& isa, int cores,
                     std::vector<MemoryLevel> caches, double frequencyHz);

// The ISA features the CPU and the OS provide, in a fixed order: avx2, fma,
// avx512f, avx512bw, avx512vl, avx512dq, avx512_bf16, avx512_fp16, amx_tile,
// amx_bf16, amx_int8 (empty off x86).
std::vector<std::string> detectIsa();

// CPUs this process may use: those it may run on (sched_getaffinity), no
// more than its cgroup's CPU quota allows (target/CpuQuota.h).
int availableCores();

Hardware detectHost();

}  // namespace tessel::target
