// The unit tests link the compiler alone: the benchmark peers (oneDNN,
// OpenBLAS, XNNPACK, Halide) are tessel_bench_tests' (tests/bench/).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace tessel {
namespace {

TEST(Layering, TheUnitTestsLoadNoPeerLibrary) {
  std::ifstream maps("/proc/self/maps");
  ASSERT_TRUE(maps) << "no /proc/self/maps";
  std::string line;
  while (std::getline(maps, line))
    for (const char* peer : {"libdnnl", "libopenblas", "libXNNPACK", "libHalide"})
      EXPECT_EQ(line.find(peer), std::string::npos) << line;
}

}  // namespace
}  // namespace tessel
