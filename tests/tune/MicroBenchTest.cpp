// `tessel microbench`: each micro-kernel of a family measured on this machine.
#include <gtest/gtest.h>

#include "target/DetectHost.h"
#include "tune/MicroBench.h"

namespace tessel::tune {
namespace {

TEST(MicroBench, MeasuresEachKernelOfAFamily) {
  target::Hardware host = target::detectHost();
  if (target::vectorIsa(host).empty()) GTEST_SKIP() << "no vector unit";
  MicroBenchOptions o;
  o.families = {"C"};
  o.maxAlpha = 1;
  o.maxBeta = 2;
  o.reduction = 8;
  o.minSeconds = 0.001;
  microkernel::MicroKernelTable t = measureMicroKernels(host, o);
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.kernels[1].beta, 2);
  EXPECT_GT(t.kernels[1].gflops, 0);
  EXPECT_FALSE(t.classes.empty());
  o.families = {"E"};
  EXPECT_THROW(measureMicroKernels(host, o), UserError);
}

}  // namespace
}  // namespace tessel::tune
