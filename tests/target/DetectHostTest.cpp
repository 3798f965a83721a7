// Host detection: the parsing steps on fake sysfs trees and cpuinfo text, the
// fake-L3 rule, the units and peaks built from an ISA list, and the sanity of
// what this machine reports.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/RunTool.h"
#include "target/DetectHost.h"

namespace tessel::target {
namespace {

namespace fs = std::filesystem;

// A temporary /sys/devices/system/cpu holding only what a test writes.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override { root_ = testing::makeTempDir("tessel-sysfs-"); }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& relative, const std::string& text) {
    fs::path path = fs::path(root_) / relative;
    fs::create_directories(path.parent_path());
    testing::writeText(path.string(), text + "\n");
  }
  void cache(int index, int level, const std::string& type, const std::string& size,
             const std::string& sharedCpus) {
    std::string dir = "cpu0/cache/index" + std::to_string(index) + "/";
    write(dir + "level", std::to_string(level));
    write(dir + "type", type);
    write(dir + "size", size);
    write(dir + "coherency_line_size", "64");
    write(dir + "shared_cpu_list", sharedCpus);
  }
  // The layout this project's 2-vCPU VM reports.
  void vmLayout() {
    write("online", "0-1");
    cache(0, 1, "Data", "48K", "0");
    cache(1, 1, "Instruction", "32K", "0");
    cache(2, 2, "Unified", "2048K", "0");
    cache(3, 3, "Unified", "266240K", "0-1");
  }

  std::string root_;
};

TEST_F(FakeSysfs, DataAndUnifiedCachesFastestFirst) {
  write("online", "0-15");
  cache(0, 1, "Data", "32K", "0,8");
  cache(1, 1, "Instruction", "32K", "0,8");
  cache(2, 2, "Unified", "1024K", "0,8");
  cache(3, 3, "Unified", "32M", "0-15");
  std::vector<MemoryLevel> caches = parseCpuCaches(root_);
  ASSERT_EQ(caches.size(), 3u);
  EXPECT_EQ(caches[0].name, "L1");
  EXPECT_EQ(caches[0].capacityBytes, 32 * 1024);
  EXPECT_EQ(caches[0].sharedBy, 2);  // a core's two hyperthreads
  EXPECT_EQ(caches[0].lineBytes, 64);
  EXPECT_EQ(caches[0].source, "sysfs");
  EXPECT_EQ(caches[1].name, "L2");
  EXPECT_EQ(caches[1].capacityBytes, 1024 * 1024);
  EXPECT_EQ(caches[2].name, "L3");  // 2 MiB per CPU: a real L3, kept
  EXPECT_EQ(caches[2].capacityBytes, 32 << 20);
  EXPECT_EQ(caches[2].sharedBy, 16);
  EXPECT_EQ(caches[2].source, "sysfs");
}

TEST_F(FakeSysfs, HostL3SeenFromAVmIsDropped) {
  vmLayout();
  std::vector<MemoryLevel> caches = parseCpuCaches(root_);
  ASSERT_EQ(caches.size(), 2u);
  EXPECT_EQ(caches[0].name, "L1");
  EXPECT_EQ(caches[0].capacityBytes, 48 * 1024);
  EXPECT_EQ(caches[1].name, "L2");
  EXPECT_EQ(caches[1].capacityBytes, 2 << 20);
  EXPECT_EQ(caches[1].source.rfind("sysfs; L3 after it dropped (260 MiB for 2 CPUs: over 16 MiB per CPU", 0),
            0u)
      << caches[1].source;
}

TEST_F(FakeSysfs, CacheSharedByCpusThatDoNotExistIsDropped) {
  write("online", "0-1");
  cache(0, 1, "Data", "48K", "0");
  cache(1, 2, "Unified", "2048K", "0");
  cache(2, 3, "Unified", "8M", "0-63");
  std::vector<MemoryLevel> caches = parseCpuCaches(root_);
  ASSERT_EQ(caches.size(), 2u);
  EXPECT_NE(caches[1].source.find("shared by 64 CPUs, only 2 exist"), std::string::npos) << caches[1].source;
}

TEST_F(FakeSysfs, CpusAreCountedFromTheirDirectoriesWithoutOnline) {
  for (int cpu = 0; cpu < 4; ++cpu) write("cpu" + std::to_string(cpu) + "/uevent", "");
  cache(0, 1, "Data", "48K", "0");
  cache(1, 3, "Unified", "8M", "0-7");
  std::vector<MemoryLevel> caches = parseCpuCaches(root_);
  ASSERT_EQ(caches.size(), 1u);
  EXPECT_NE(caches[0].source.find("only 4 exist"), std::string::npos) << caches[0].source;
}

TEST_F(FakeSysfs, NoCacheDirectoryMeansNoCaches) {
  write("online", "0");
  EXPECT_TRUE(parseCpuCaches(root_).empty());
  EXPECT_TRUE(parseCpuCaches(root_ + "/does-not-exist").empty());
}

TEST_F(FakeSysfs, UnreadableEntriesAreSkipped) {
  write("online", "0");
  cache(0, 1, "Data", "lots", "0");
  cache(1, 2, "Unified", "1M", "0");
  std::vector<MemoryLevel> caches = parseCpuCaches(root_);
  ASSERT_EQ(caches.size(), 1u);
  EXPECT_EQ(caches[0].name, "L2");
  EXPECT_EQ(caches[0].capacityBytes, 1 << 20);
}

TEST_F(FakeSysfs, FrequencyPrefersCpufreq) {
  CpuInfo cpu;
  cpu.mhz = 2299.998;
  EXPECT_DOUBLE_EQ(detectFrequencyHz(root_, cpu), 2299.998e6);
  write("cpu0/cpufreq/cpuinfo_max_freq", "3500000");
  EXPECT_DOUBLE_EQ(detectFrequencyHz(root_, cpu), 3.5e9);
  EXPECT_DOUBLE_EQ(detectFrequencyHz(root_ + "/none", CpuInfo{}), 0.0);
}

TEST(DropImplausibleCaches, SmallerThanThePreviousLevel) {
  MemoryLevel l1, l2;
  l1.name = "L1";
  l1.capacityBytes = 1 << 20;
  l1.source = "cpuid";
  l2.name = "L2";
  l2.capacityBytes = 1 << 19;
  std::vector<MemoryLevel> caches = {l1, l2};
  dropImplausibleCaches(caches, 0);
  ASSERT_EQ(caches.size(), 1u);
  EXPECT_EQ(caches[0].source, "cpuid; L2 after it dropped (512 KiB for 1 CPUs: smaller than L1)");
}

TEST(CpuidCaches, DecodesLeaf4) {
  // This VM's L1d: 12 ways x 1 partition x 64-byte lines x 64 sets.
  auto l1 = decodeCpuidCache(0x04000121, (11u << 22) | 63u, 63);
  ASSERT_TRUE(l1);
  EXPECT_EQ(l1->name, "L1");
  EXPECT_EQ(l1->capacityBytes, 48 * 1024);
  EXPECT_EQ(l1->lineBytes, 64);
  EXPECT_EQ(l1->sharedBy, 1);
  EXPECT_EQ(l1->source, "cpuid");
  // Its L3: 20 ways x 64-byte lines x 212992 sets, shared by 2.
  auto l3 = decodeCpuidCache(0x04004163, (19u << 22) | 63u, 212991);
  ASSERT_TRUE(l3);
  EXPECT_EQ(l3->name, "L3");
  EXPECT_EQ(l3->capacityBytes, int64_t{266240} * 1024);
  EXPECT_EQ(l3->sharedBy, 2);
  EXPECT_FALSE(decodeCpuidCache(0x04000122, (7u << 22) | 63u, 63));  // instruction cache
  EXPECT_FALSE(decodeCpuidCache(0, 0, 0));                           // end of the list
}

TEST(CpuidCaches, DecodesAmdLegacyLeaves) {
  // An AMD EPYC VM whose 0x8000001D reads all zeros: 48K 12-way L1d, 1M L2,
  // and the host socket's 508 MiB L3, shown to 2 vCPUs.
  std::vector<MemoryLevel> caches = decodeAmdLegacyCaches(0x300c0140, 0x04006140, 0x0fe09140, 2);
  ASSERT_EQ(caches.size(), 3u);
  EXPECT_EQ(caches[0].name, "L1");
  EXPECT_EQ(caches[0].capacityBytes, 48 * 1024);
  EXPECT_EQ(caches[0].lineBytes, 64);
  EXPECT_EQ(caches[0].sharedBy, 1);
  EXPECT_EQ(caches[0].source, "cpuid 0x80000005/6");
  EXPECT_EQ(caches[1].name, "L2");
  EXPECT_EQ(caches[1].capacityBytes, 1 << 20);
  EXPECT_EQ(caches[2].name, "L3");
  EXPECT_EQ(caches[2].capacityBytes, int64_t{1016} * 512 * 1024);
  EXPECT_EQ(caches[2].sharedBy, 2);
  dropImplausibleCaches(caches, 0);  // as detection does: the host's L3 goes
  ASSERT_EQ(caches.size(), 2u);
  EXPECT_NE(caches[1].source.find("L3 after it dropped"), std::string::npos) << caches[1].source;
  // No L3 (associativity 0), no L2.
  EXPECT_EQ(decodeAmdLegacyCaches(0x300c0140, 0x04006140, 0, 2).size(), 2u);
  EXPECT_EQ(decodeAmdLegacyCaches(0x300c0140, 0, 0, 2).size(), 1u);
}

TEST(CpuInfo, FirstProcessorBlock) {
  CpuInfo cpu = parseCpuInfo(
      "processor\t: 0\n"
      "vendor_id\t: GenuineIntel\n"
      "model name\t: Intel(R) Xeon(R)   Platinum 8480+\n"
      "cpu MHz\t\t: 2000.000\n"
      "flags\t\t: fpu sse avx2 fma avx512f\n"
      "\n"
      "processor\t: 1\n"
      "model name\t: Another CPU\n"
      "cpu MHz\t\t: 800.000\n");
  EXPECT_EQ(cpu.modelName, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_DOUBLE_EQ(cpu.mhz, 2000.0);
  EXPECT_EQ(cpu.flags, (std::vector<std::string>{"fpu", "sse", "avx2", "fma", "avx512f"}));
  CpuInfo none = parseCpuInfo("");
  EXPECT_TRUE(none.modelName.empty());
  EXPECT_EQ(none.mhz, 0.0);
}

TEST(DescribeCpu, UnitsFollowTheIsa) {
  MemoryLevel l1;
  l1.name = "L1";
  l1.capacityBytes = 48 * 1024;
  Hardware hw =
      describeCpu("Sapphire", {"avx2", "fma", "avx512f", "avx512bw", "avx512_bf16", "amx_tile", "amx_bf16"},
                  4, {l1}, 2.0e9);
  ASSERT_EQ(hw.units.size(), 4u);
  EXPECT_EQ(hw.units[0].name, "avx512");
  EXPECT_EQ(hw.units[0].vectorBits, 512);
  EXPECT_EQ(hw.units[0].registers, 32);
  EXPECT_EQ(hw.units[0].dtypes, (std::vector<std::string>{"f32", "f64", "i32", "i8", "bf16"}));
  EXPECT_EQ(hw.units[1].name, "avx2");
  EXPECT_EQ(hw.units[2].name, "amx");
  EXPECT_TRUE(hw.units[2].matrix);
  EXPECT_EQ(hw.units[2].registers, 8);
  EXPECT_EQ(hw.units[2].dtypes, (std::vector<std::string>{"bf16"}));
  EXPECT_EQ(hw.units[3].name, "scalar");
  EXPECT_EQ(hw.bestVectorUnit().name, "avx512");  // the AMX tile is wider, but not a vector unit
  // 2 FMA/cycle x 16 lanes x 2 flops x 2 GHz.
  EXPECT_DOUBLE_EQ(hw.peakF32FlopsPerCore, 128e9);
  EXPECT_DOUBLE_EQ(hw.peakF32Flops, 4 * 128e9);
  EXPECT_EQ(hw.peakSource, "computed");
  ASSERT_EQ(hw.memory.size(), 2u);
  EXPECT_EQ(hw.memory[1].name, "DRAM");
  EXPECT_EQ(hw.memory[1].capacityBytes, 0);
  EXPECT_EQ(hw.memory[1].sharedBy, 4);
  EXPECT_TRUE(hw.has("amx_bf16"));
  EXPECT_FALSE(hw.has("amx_int8"));
}

TEST(DescribeCpu, WithoutVectorIsaTheScalarUnitIsBest) {
  Hardware hw = describeCpu("", {}, 1, {}, 1e9);
  EXPECT_EQ(hw.name, "unknown CPU");
  ASSERT_EQ(hw.units.size(), 1u);
  EXPECT_EQ(hw.bestVectorUnit().name, "scalar");
  EXPECT_EQ(&hw.bestVectorUnit(), &hw.units[0]);
  EXPECT_DOUBLE_EQ(hw.peakF32FlopsPerCore, 2e9);  // one scalar multiply-add per cycle
  Hardware empty;
  EXPECT_EQ(empty.bestVectorUnit().name, "scalar");
}

TEST(DetectHost, ThisMachineIsDescribedSanely) {
  Hardware hw = detectHost();
  EXPECT_FALSE(hw.name.empty());
  EXPECT_EQ(hw.kind, "cpu");
  EXPECT_GE(hw.cores, 1);
  ASSERT_FALSE(hw.units.empty());
  EXPECT_EQ(hw.units.back().name, "scalar");
  ASSERT_FALSE(hw.memory.empty());
  EXPECT_EQ(hw.memory.back().name, "DRAM");
  EXPECT_EQ(hw.memory.back().capacityBytes, 0);
  for (size_t i = 0; i + 1 < hw.memory.size(); ++i) {
    const MemoryLevel& m = hw.memory[i];
    EXPECT_EQ(m.name, "L" + std::to_string(i + 1));
    EXPECT_GT(m.capacityBytes, 0) << m.name;
    EXPECT_GT(m.lineBytes, 0) << m.name;
    EXPECT_GE(m.sharedBy, 1) << m.name;
    if (i > 0) {
      EXPECT_GE(m.capacityBytes, hw.memory[i - 1].capacityBytes) << m.name;
    }
  }
#if defined(__x86_64__)
  EXPECT_NE(hw.level("L1"), nullptr);  // every x86 CPU has one, from sysfs or cpuid
#endif
  if (hw.has("avx512f")) {
    EXPECT_EQ(hw.bestVectorUnit().name, "avx512");
  }
  EXPECT_GE(hw.peakF32Flops, hw.peakF32FlopsPerCore);
}

}  // namespace
}  // namespace tessel::target
