// A machine as data: memory levels, compute units and the paths between them.
// Auto Tiling, promotion, vectorization, the benchmark harness (% of peak) and
// later the CUDA and NPU targets all read the same description. It is loaded
// from and printed as JSON (`tessel target --print`), so a user can describe a
// machine Tessel is not running on, or correct what detection got wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::target {

// One level of storage: a cache, a scratchpad, a register file or DRAM.
// Levels are listed from the fastest (closest to compute) to the slowest.
struct MemoryLevel {
  std::string name;               // "L1", "L2", "L3", "DRAM"; "UB", "L0A" on the NPU
  int64_t capacityBytes = 0;      // per instance; 0 = unbounded (DRAM)
  int64_t lineBytes = 64;         // transfer granularity
  int sharedBy = 1;               // compute cores sharing one instance
  double bandwidthBytesPerS = 0;  // sustained, per instance for all its sharers; 0 = unknown
  // Sustained for one core alone (0 = unknown): what a 1-thread run can draw,
  // often far less than the all-core figure. Never above bandwidthBytesPerS.
  double bandwidthPerCoreBytesPerS = 0;
  bool managed = false;  // software-managed (scratchpad) rather than a cache
  std::string source;    // where the numbers came from: "sysfs", "cpuid", "measured", "configured",
                         // "default" (DRAM, unbounded by definition)
  // Where the bandwidths came from ("measured", "configured"; empty while
  // unknown): a cache's size comes from sysfs but its bandwidth only from a run.
  std::string bandwidthSource;

  bool operator==(const MemoryLevel&) const = default;
};

// A kind of functional unit a core has: a vector unit, a matrix unit.
struct ComputeUnit {
  std::string name;                 // "avx512", "avx2", "amx", "scalar"
  int vectorBits = 0;               // register width (0 for scalar)
  int registers = 0;                // architectural vector/tile registers
  int fmaPerCycle = 0;              // vector FMA instructions issued per cycle per core
  std::vector<std::string> dtypes;  // element types it computes on natively
  // A matrix unit (AMX tiles, a cube unit) rather than a vector unit: its
  // vectorBits is the size of one tile register, and vectorization never picks it.
  bool matrix = false;

  bool operator==(const ComputeUnit&) const = default;
};

struct Hardware {
  std::string name;                 // e.g. the CPU model string
  std::string kind = "cpu";         // "cpu" | "cuda" | "npu"
  std::vector<std::string> isa;     // features: "avx2", "fma", "avx512f", "avx512bw", "amx_bf16", ...
  int cores = 1;                    // compute cores available to this process
  double frequencyHz = 0;           // sustained clock used for peaks; 0 = unknown
  std::vector<MemoryLevel> memory;  // fastest first, DRAM last
  std::vector<ComputeUnit> units;   // the best unit first
  // Peaks for the whole machine (all cores), per element type, and for one core.
  double peakF32FlopsPerCore = 0;
  double peakF32Flops = 0;
  std::string peakSource;  // "computed" (units x frequency) | "measured" | "configured"

  bool has(const std::string& feature) const;
  // The level called `name`, if any.
  const MemoryLevel* level(const std::string& name) const;
  // The widest vector unit whose ISA this machine has ("scalar" if none).
  // Units listed are units the machine has; matrix units are never picked.
  // Without a vector unit: the listed "scalar" unit, else a built-in one.
  const ComputeUnit& bestVectorUnit() const;

  bool operator==(const Hardware&) const = default;
};

// The SIMD instruction set generated vector code is written for: "avx512",
// "avx2" (with FMA) or "" (scalar).
std::string vectorIsa(const Hardware& hardware);

// What all the caches hold together: each core's share of the last level
// (the outermost with a capacity, DRAM aside), times the cores.
int64_t totalCacheBytes(const Hardware& hardware);

// `machine` (its ISA and units) with `cores` cores and only a private L1 and
// L2 of these sizes before DRAM: tile decisions that do not depend on the
// machine, for tests, and tiny caches that make the fuzzer's small programs
// tile.
Hardware withCaches(Hardware machine, int64_t l1Bytes, int64_t l2Bytes, int cores);

}  // namespace tessel::target
