// Cgroup CPU quotas on fake hierarchies: v2, v1, hybrid, nested limits.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "../support/RunTool.h"
#include "target/CpuQuota.h"
#include "target/DetectHost.h"

namespace tessel::target {
namespace {

class CpuQuota : public ::testing::Test {
 protected:
  void SetUp() override { root_ = testing::makeTempDir("tessel-cgroup-"); }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(root_ + path).parent_path());
    testing::writeText(root_ + path, text);
  }
  std::string root_;
};

TEST_F(CpuQuota, CgroupV2CpuMaxRoundsUp) {
  write("/app/cpu.max", "150000 100000\n");
  EXPECT_EQ(cgroupCpuLimit("0::/app\n", root_), 2);
  write("/app/cpu.max", "50000 100000\n");  // half a CPU still runs on one
  EXPECT_EQ(cgroupCpuLimit("0::/app\n", root_), 1);
}

TEST_F(CpuQuota, NoQuotaIsNone) {
  write("/app/cpu.max", "max 100000\n");
  EXPECT_EQ(cgroupCpuLimit("0::/app\n", root_), std::nullopt);
  EXPECT_EQ(cgroupCpuLimit("0::/elsewhere\n", root_), std::nullopt);  // nothing to read
  EXPECT_EQ(cgroupCpuLimit("", root_), std::nullopt);
  EXPECT_EQ(cgroupCpuLimit("garbage\n0:\n", root_), std::nullopt);
}

TEST_F(CpuQuota, TheLeastOverTheCgroupAndItsAncestors) {
  write("/cpu.max", "max 100000\n");
  write("/slice/cpu.max", "300000 100000\n");
  write("/slice/app/cpu.max", "max 100000\n");
  EXPECT_EQ(cgroupCpuLimit("0::/slice/app\n", root_), 3);
  // A container's own cgroup, seen as the root of its namespace.
  write("/cpu.max", "100000 100000\n");
  EXPECT_EQ(cgroupCpuLimit("0::/\n", root_), 1);
}

TEST_F(CpuQuota, CgroupV1CfsQuota) {
  write("/cpu,cpuacct/docker/c1/cpu.cfs_quota_us", "400000\n");
  write("/cpu,cpuacct/docker/c1/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(cgroupCpuLimit("12:memory:/docker/c1\n4:cpu,cpuacct:/docker/c1\n", root_), 4);
  write("/cpu,cpuacct/docker/c1/cpu.cfs_quota_us", "-1\n");
  EXPECT_EQ(cgroupCpuLimit("4:cpu,cpuacct:/docker/c1\n", root_), std::nullopt);
  // The cpuacct hierarchy alone says nothing of quotas.
  write("/cpuacct/x/cpu.cfs_quota_us", "100000\n");
  write("/cpuacct/x/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(cgroupCpuLimit("3:cpuacct:/x\n", root_), std::nullopt);
}

TEST_F(CpuQuota, HybridSystemsMountV2UnderUnified) {
  write("/unified/user.slice/cpu.max", "200000 100000\n");
  EXPECT_EQ(cgroupCpuLimit("1:cpu:/\n0::/user.slice\n", root_), 2);
}

TEST(AvailableCores, AtLeastOneAndNoMoreThanTheAffinityMask) {
  int cores = availableCores();
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores,
            static_cast<int>(std::thread::hardware_concurrency() > 0 ? std::thread::hardware_concurrency()
                                                                     : cores));
}

}  // namespace
}  // namespace tessel::target
