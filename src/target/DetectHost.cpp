#include "target/DetectHost.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/TextFile.h"
#include "target/CpuQuota.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tessel::target {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::optional<std::string> readFirstLine(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) return std::nullopt;
  return trim(line);
}

// "48K", "2048K", "1M", "512" (bytes) as sysfs writes cache sizes.
std::optional<int64_t> parseSize(const std::string& text) {
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || v < 0) return std::nullopt;
  std::string suffix = trim(end);
  if (suffix.empty()) return v;
  if (suffix == "K") return v * 1024;
  if (suffix == "M") return v * 1024 * 1024;
  if (suffix == "G") return v * 1024 * 1024 * 1024;
  return std::nullopt;
}

// Number of CPUs in a list such as "0-3,8,10-11"; 0 when it does not parse.
int countCpuList(const std::string& list) {
  int count = 0;
  std::stringstream ss(list);
  for (std::string part; std::getline(ss, part, ',');) {
    part = trim(part);
    if (part.empty()) continue;
    char* end = nullptr;
    long first = std::strtol(part.c_str(), &end, 10);
    if (end == part.c_str()) return 0;
    long last = first;
    if (*end == '-') last = std::strtol(end + 1, nullptr, 10);
    if (last < first) return 0;
    count += static_cast<int>(last - first + 1);
  }
  return count;
}

// CPUs the kernel has online; without that file, the cpuN directories.
int cpusPresent(const std::string& sysfsRoot) {
  if (auto online = readFirstLine(sysfsRoot + "/online")) return countCpuList(*online);
  int count = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(sysfsRoot, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() > 3 && name.rfind("cpu", 0) == 0 &&
        std::all_of(name.begin() + 3, name.end(), [](char c) { return std::isdigit(c); }))
      ++count;
  }
  return count;
}

std::string formatBytes(int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// Keeps one entry per level (the first), fastest first.
std::vector<MemoryLevel> orderByLevel(std::vector<std::pair<int, MemoryLevel>> found) {
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<MemoryLevel> out;
  int lastLevel = 0;
  for (auto& [level, m] : found) {
    if (level == lastLevel) continue;
    lastLevel = level;
    out.push_back(std::move(m));
  }
  return out;
}

#if defined(__x86_64__) || defined(__i386__)

struct CpuidRegisters {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

std::optional<CpuidRegisters> cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegisters r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return std::nullopt;
  return r;
}

// The state components the OS saves on context switches (XCR0); a feature
// whose registers the OS does not save cannot be used.
uint64_t osEnabledState() {
  auto leaf1 = cpuid(1, 0);
  constexpr uint32_t kOsxsave = 1u << 27;
  if (!leaf1 || !(leaf1->ecx & kOsxsave)) return 0;
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

std::vector<MemoryLevel> cpuidCaches(int cores) {
  auto vendor = cpuid(0, 0);
  // "AuthenticAMD" / "HygonGenuine" describe caches in 0x8000001D, Intel in 4.
  bool amdLayout = vendor && (vendor->ebx == 0x68747541 || vendor->ebx == 0x6f677948);
  uint32_t leaf = amdLayout ? 0x8000001D : 4;
  std::vector<std::pair<int, MemoryLevel>> found;
  for (uint32_t sub = 0; sub < 16; ++sub) {
    auto r = cpuid(leaf, sub);
    if (!r || (r->eax & 0x1f) == 0) break;
    if (auto m = decodeCpuidCache(r->eax, r->ebx, r->ecx)) {
      // The field is the most CPU ids that could share it (a power of two),
      // not how many do: never more than this process sees.
      m->sharedBy = std::min(m->sharedBy, std::max(1, cores));
      found.emplace_back(static_cast<int>((r->eax >> 5) & 7), std::move(*m));
    }
  }
  std::vector<MemoryLevel> caches = orderByLevel(std::move(found));
  if (caches.empty() && amdLayout) {
    auto l1 = cpuid(0x80000005, 0), l2 = cpuid(0x80000006, 0);
    if (l1 && l2) caches = decodeAmdLegacyCaches(l1->ecx, l2->ecx, l2->edx, cores);
  }
  dropImplausibleCaches(caches, 0);
  return caches;
}

#endif

}  // namespace

CpuInfo parseCpuInfo(const std::string& text) {
  CpuInfo info;
  std::stringstream ss(text);
  bool inBlock = false;
  for (std::string line; std::getline(ss, line);) {
    if (trim(line).empty()) {
      if (inBlock) break;  // the end of the first processor's block
      continue;
    }
    inBlock = true;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "model name") {
      // Some model strings pad with runs of spaces.
      std::stringstream words(value);
      for (std::string w; words >> w;) info.modelName += (info.modelName.empty() ? "" : " ") + w;
    } else if (key == "cpu MHz") {
      info.mhz = std::strtod(value.c_str(), nullptr);
    } else if (key == "flags") {
      std::stringstream words(value);
      for (std::string w; words >> w;) info.flags.push_back(w);
    }
  }
  return info;
}

std::vector<MemoryLevel> parseCpuCaches(const std::string& sysfsRoot) {
  std::vector<std::pair<int, MemoryLevel>> found;
  std::error_code ec;
  std::vector<fs::path> indexDirs;
  for (const auto& entry : fs::directory_iterator(sysfsRoot + "/cpu0/cache", ec))
    if (entry.path().filename().string().rfind("index", 0) == 0) indexDirs.push_back(entry.path());
  std::sort(indexDirs.begin(), indexDirs.end());
  for (const fs::path& dir : indexDirs) {
    auto type = readFirstLine(dir / "type");
    auto level = readFirstLine(dir / "level");
    auto size = readFirstLine(dir / "size");
    if (!type || !level || !size || (*type != "Data" && *type != "Unified")) continue;
    int levelNumber = std::atoi(level->c_str());
    auto bytes = parseSize(*size);
    if (levelNumber <= 0 || !bytes || *bytes <= 0) continue;
    MemoryLevel m;
    m.name = "L" + std::to_string(levelNumber);
    m.capacityBytes = *bytes;
    if (auto line = readFirstLine(dir / "coherency_line_size"); line && std::atoi(line->c_str()) > 0)
      m.lineBytes = std::atoi(line->c_str());
    if (auto shared = readFirstLine(dir / "shared_cpu_list"); shared && countCpuList(*shared) > 0)
      m.sharedBy = countCpuList(*shared);
    m.source = "sysfs";
    found.emplace_back(levelNumber, std::move(m));
  }
  std::vector<MemoryLevel> caches = orderByLevel(std::move(found));
  dropImplausibleCaches(caches, cpusPresent(sysfsRoot));
  return caches;
}

std::optional<MemoryLevel> decodeCpuidCache(uint32_t eax, uint32_t ebx, uint32_t ecx) {
  uint32_t type = eax & 0x1f;  // 1 data, 2 instruction, 3 unified
  if (type != 1 && type != 3) return std::nullopt;
  int64_t line = (ebx & 0xfff) + 1, partitions = ((ebx >> 12) & 0x3ff) + 1, ways = ((ebx >> 22) & 0x3ff) + 1;
  int64_t sets = static_cast<int64_t>(ecx) + 1;
  MemoryLevel m;
  m.name = "L" + std::to_string((eax >> 5) & 7);
  m.capacityBytes = ways * partitions * line * sets;
  m.lineBytes = line;
  m.sharedBy = static_cast<int>((eax >> 14) & 0xfff) + 1;
  m.source = "cpuid";
  return m;
}

std::vector<MemoryLevel> decodeAmdLegacyCaches(uint32_t l1Ecx, uint32_t l2Ecx, uint32_t l3Edx, int cores) {
  std::vector<MemoryLevel> caches;
  auto add = [&](int level, int64_t bytes, uint32_t lineBytes, int sharedBy) {
    if (bytes <= 0) return;
    MemoryLevel m;
    m.name = "L" + std::to_string(level);
    m.capacityBytes = bytes;
    if (lineBytes > 0) m.lineBytes = static_cast<int>(lineBytes);
    m.sharedBy = sharedBy;
    m.source = "cpuid 0x80000005/6";
    caches.push_back(std::move(m));
  };
  add(1, int64_t{l1Ecx >> 24} << 10, l1Ecx & 0xff, 1);
  add(2, int64_t{l2Ecx >> 16} << 10, l2Ecx & 0xff, 1);
  // Its associativity field is 0 when there is no L3.
  if ((l3Edx >> 12) & 0xf) add(3, int64_t{l3Edx >> 18} << 19, l3Edx & 0xff, std::max(1, cores));
  return caches;
}

// A cache is dropped when
//  (a) it is shared by more CPUs than exist (the hypervisor copied the host's
//      topology), or
//  (b) it holds more than 16 MiB per CPU sharing it: no x86 part comes close
//      (AMD's 3D V-Cache parts, the largest, have 12 MiB per core), but a VM
//      that shows its few vCPUs the L3 of the host's whole socket does (this
//      project's CI: 260 MiB for 2 vCPUs, of which it gets no measurable use), or
//  (c) it is smaller than the level before it, which the description format
//      rejects (capacities never decrease from the fastest level outwards).
// A dropped level is left out, not corrected: planning for L2 then DRAM is
// safe; planning for a cache that is not there is not.
void dropImplausibleCaches(std::vector<MemoryLevel>& caches, int cpusPresent) {
  constexpr int64_t kMaxBytesPerCpu = int64_t{16} << 20;
  std::vector<MemoryLevel> kept;
  for (MemoryLevel& m : caches) {
    std::string why;
    if (cpusPresent > 0 && m.sharedBy > cpusPresent)
      why =
          "shared by " + std::to_string(m.sharedBy) + " CPUs, only " + std::to_string(cpusPresent) + " exist";
    else if (m.capacityBytes / std::max(1, m.sharedBy) > kMaxBytesPerCpu)
      why = "over 16 MiB per CPU, a host's cache seen from a VM";
    else if (!kept.empty() && m.capacityBytes < kept.back().capacityBytes)
      why = "smaller than " + kept.back().name;
    if (why.empty()) {
      kept.push_back(std::move(m));
      continue;
    }
    if (!kept.empty())
      kept.back().source += "; " + m.name + " after it dropped (" + formatBytes(m.capacityBytes) + " for " +
                            std::to_string(m.sharedBy) + " CPUs: " + why + ")";
  }
  caches = std::move(kept);
}

double detectFrequencyHz(const std::string& sysfsRoot, const CpuInfo& cpu) {
  if (auto khz = readFirstLine(sysfsRoot + "/cpu0/cpufreq/cpuinfo_max_freq")) {
    double v = std::strtod(khz->c_str(), nullptr);
    if (v > 0) return v * 1e3;
  }
  // In a VM this is usually the base clock: turbo runs faster, so peaks
  // computed from it are low (measure them with `tessel target --measure`).
  return cpu.mhz > 0 ? cpu.mhz * 1e6 : 0;
}

Hardware describeCpu(const std::string& modelName, const std::vector<std::string>& isa, int cores,
                     std::vector<MemoryLevel> caches, double frequencyHz) {
  Hardware hw;
  hw.name = modelName.empty() ? "unknown CPU" : modelName;
  hw.kind = "cpu";
  hw.isa = isa;
  hw.cores = std::max(1, cores);
  hw.frequencyHz = frequencyHz;

  hw.memory = std::move(caches);
  MemoryLevel dram;
  dram.name = "DRAM";
  dram.capacityBytes = 0;  // unbounded
  dram.lineBytes = hw.memory.empty() ? 64 : hw.memory.back().lineBytes;
  dram.sharedBy = hw.cores;
  dram.source = "default";
  hw.memory.push_back(std::move(dram));

  // Vector units widest first, then matrix units, then scalar.
  auto unit = [](std::string name, int bits, int registers, int fmaPerCycle,
                 std::vector<std::string> dtypes) {
    ComputeUnit u;
    u.name = std::move(name);
    u.vectorBits = bits;
    u.registers = registers;
    u.fmaPerCycle = fmaPerCycle;
    u.dtypes = std::move(dtypes);
    return u;
  };
  bool fma = hw.has("fma");
  if (hw.has("avx512f")) {
    std::vector<std::string> dtypes = {"f32", "f64", "i32"};
    if (hw.has("avx512bw")) dtypes.push_back("i8");
    if (hw.has("avx512_bf16")) dtypes.push_back("bf16");
    if (hw.has("avx512_fp16")) dtypes.push_back("f16");
    // Sapphire-Rapids-class (and Skylake-SP Gold/Platinum) parts have two
    // 512-bit FMA ports. A VM hides which part it runs on, so two is assumed;
    // measured peaks (--measure) settle it.
    hw.units.push_back(unit("avx512", 512, 32, 2, std::move(dtypes)));
  }
  if (hw.has("avx2")) hw.units.push_back(unit("avx2", 256, 16, fma ? 2 : 0, {"f32", "f64", "i32", "i8"}));
  if (hw.has("amx_tile")) {
    std::vector<std::string> dtypes;
    if (hw.has("amx_bf16")) dtypes.push_back("bf16");
    if (hw.has("amx_int8")) dtypes.push_back("i8");
    // Eight tile registers of 16 rows x 64 bytes. A tile multiply is not an
    // FMA instruction count, so fmaPerCycle stays 0; the matrix unit's
    // throughput belongs to the instruction mapper's description.
    ComputeUnit amx = unit("amx", 16 * 64 * 8, 8, 0, std::move(dtypes));
    amx.matrix = true;
    hw.units.push_back(std::move(amx));
  }
  // Scalar float code uses the vector registers one lane at a time.
  hw.units.push_back(unit("scalar", 0, hw.has("avx512f") ? 32 : 16, fma ? 2 : 1, {"f32", "f64", "i32"}));

  const ComputeUnit& best = hw.bestVectorUnit();
  double lanes = std::max(1, best.vectorBits / 32);
  hw.peakF32FlopsPerCore = best.fmaPerCycle * lanes * 2 * frequencyHz;  // an FMA is two flops
  hw.peakF32Flops = hw.peakF32FlopsPerCore * hw.cores;
  hw.peakSource = "computed";
  return hw;
}

std::vector<std::string> detectIsa() {
  std::vector<std::string> isa;
#if defined(__x86_64__) || defined(__i386__)
  auto add = [&](bool present, const char* name) {
    if (present) isa.push_back(name);
  };
  __builtin_cpu_init();
  // __builtin_cpu_supports also checks that the OS saves the registers.
  add(__builtin_cpu_supports("avx2"), "avx2");
  add(__builtin_cpu_supports("fma"), "fma");
  bool avx512 = __builtin_cpu_supports("avx512f");
  add(avx512, "avx512f");
  add(__builtin_cpu_supports("avx512bw"), "avx512bw");
  add(__builtin_cpu_supports("avx512vl"), "avx512vl");
  add(__builtin_cpu_supports("avx512dq"), "avx512dq");
  // Newer features straight from cpuid (older compilers do not know their
  // names); they use AVX-512 or AMX state, which the OS must save.
  CpuidRegisters leaf7 = cpuid(7, 0).value_or(CpuidRegisters{});
  CpuidRegisters leaf7sub1 = leaf7.eax >= 1 ? cpuid(7, 1).value_or(CpuidRegisters{}) : CpuidRegisters{};
  add(avx512 && ((leaf7sub1.eax >> 5) & 1), "avx512_bf16");
  add(avx512 && ((leaf7.edx >> 23) & 1), "avx512_fp16");
  constexpr uint64_t kTileState = (uint64_t{1} << 17) | (uint64_t{1} << 18);  // XTILECFG, XTILEDATA
  bool tileState = (osEnabledState() & kTileState) == kTileState;
  add(tileState && ((leaf7.edx >> 24) & 1), "amx_tile");
  add(tileState && ((leaf7.edx >> 22) & 1), "amx_bf16");
  add(tileState && ((leaf7.edx >> 25) & 1), "amx_int8");
#endif
  return isa;
}

int availableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cores = sched_getaffinity(0, sizeof(set), &set) == 0
                  ? std::max(1, CPU_COUNT(&set))
                  : static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::optional<int> quota =
      cgroupCpuLimit(readTextIfPresent("/proc/self/cgroup").value_or(""), "/sys/fs/cgroup");
  return quota ? std::min(cores, *quota) : cores;
}

Hardware detectHost() {
  const std::string sysfsRoot = "/sys/devices/system/cpu";
  CpuInfo cpu = parseCpuInfo(readTextIfPresent("/proc/cpuinfo").value_or(""));
  int cores = availableCores();
  std::vector<MemoryLevel> caches = parseCpuCaches(sysfsRoot);
#if defined(__x86_64__) || defined(__i386__)
  if (caches.empty()) caches = cpuidCaches(cores);
#endif
  return describeCpu(cpu.modelName, detectIsa(), cores, std::move(caches), detectFrequencyHz(sysfsRoot, cpu));
}

}  // namespace tessel::target
