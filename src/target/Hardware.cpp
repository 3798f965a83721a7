#include "target/Hardware.h"

#include <algorithm>
#include <utility>

namespace tessel::target {

bool Hardware::has(const std::string& feature) const {
  return std::find(isa.begin(), isa.end(), feature) != isa.end();
}

const MemoryLevel* Hardware::level(const std::string& levelName) const {
  for (const MemoryLevel& m : memory)
    if (m.name == levelName) return &m;
  return nullptr;
}

const ComputeUnit& Hardware::bestVectorUnit() const {
  const ComputeUnit* best = nullptr;
  for (const ComputeUnit& u : units)
    if (!u.matrix && u.vectorBits > 0 && (!best || u.vectorBits > best->vectorBits)) best = &u;
  if (best) return *best;
  for (const ComputeUnit& u : units)
    if (u.name == "scalar") return u;
  // A description without any unit (a hand-written file) still computes:
  // one f32 operation per cycle is what every CPU does.
  static const ComputeUnit kScalar = [] {
    ComputeUnit u;
    u.name = "scalar";
    u.fmaPerCycle = 1;
    u.dtypes = {"f32", "f64", "i32"};
    return u;
  }();
  return kScalar;
}

Hardware withCaches(Hardware machine, int64_t l1Bytes, int64_t l2Bytes, int cores) {
  machine.cores = cores;
  machine.memory.clear();
  for (auto [name, bytes] : {std::pair<const char*, int64_t>{"L1", l1Bytes}, {"L2", l2Bytes}, {"DRAM", 0}}) {
    MemoryLevel level;
    level.name = name;
    level.capacityBytes = bytes;
    level.source = "configured";
    machine.memory.push_back(level);
  }
  return machine;
}

int64_t totalCacheBytes(const Hardware& hardware) {
  int64_t bytes = 0;
  for (const auto& level : hardware.memory)
    if (!level.managed && level.capacityBytes > 0 && level.name != "DRAM")
      bytes = level.capacityBytes * hardware.cores / std::max(1, level.sharedBy);
  return bytes;
}

std::string vectorIsa(const Hardware& hardware) {
  if (hardware.has("avx512f")) return "avx512";
  if (hardware.has("avx2") && hardware.has("fma")) return "avx2";
  return "";
}

}  // namespace tessel::target
