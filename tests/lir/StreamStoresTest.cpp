// Streaming stores: outputs at least as large as the caches that the kernel never reads
// back are written with non-temporal stores (full aligned vectors; tails and
// unaligned rows with plain masked stores). Tiny caches in the machine
// description (or stream-stores=always) make small outputs stream, so
// awkward shapes exercise every path, on AVX-512 and AVX2, against the
// interpreter.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "../support/VectorIsa.h"
#include "driver/Compile.h"
#include "support/Remarks.h"

namespace tessel::lir {
namespace {

using testing::hostHas;
using testing::machineWith;

// The host's ISA on two cores with private caches of `bytes` each: outputs
// of 4 x 2 x `bytes` and more stream.
target::Hardware tinyCaches(const std::string& isa, int64_t bytes) {
  target::Hardware h = machineWith(isa);
  h.cores = 2;
  for (auto& level : h.memory)
    if (level.capacityBytes > 0) {
      level.capacityBytes = bytes;
      level.sharedBy = 1;
    }
  return h;
}

driver::CompiledProgram compile(const std::string& tc, const target::Hardware& hw,
                                driver::CompileOptions o = {}) {
  return testing::compileFor(front::testing::lowerText(tc), o, hw);
}

bool streams(const driver::CompiledProgram& cp) {
  return cp.cSource.find("_stream(&") != std::string::npos &&
         cp.cSource.find("  tessel_stream_fence();\n") != std::string::npos;
}

class StreamStores : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamStores, ElementwiseAndSoftmaxOutputsStream) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const std::string gelu =
      "def f(float(M,N) X) -> (Y) {\n  Y(m,n) = 0.5 * X(m,n) * (1 + tanh(0.79788456 * (X(m,n) + 0.044715 * "
      "X(m,n) * X(m,n) * X(m,n))))\n}\n";
  const std::string softmax =
      "def f(float(M,N) X) -> (Y) {\n  mx(m) max=! X(m,n)\n  e(m,n) = exp(X(m,n) - mx(m))\n"
      "  s(m) +=! e(m,n)\n  Y(m,n) = e(m,n) / s(m)\n}\n";
  for (const auto* body : {&gelu, &softmax}) {
    for (auto [m, n] : {std::pair{1, 1}, {7, 13}, {13, 127}, {3, 64}, {33, 16}, {5, 1031}}) {
      std::string tc = "# sizes: M=" + std::to_string(m) + " N=" + std::to_string(n) + "\n" + *body;
      driver::CompiledProgram cp = compile(tc, tinyCaches(isa, 16));
      testing::KernelCheck k = testing::checkAgainstInterpreter(cp);
      EXPECT_TRUE(k.pass) << m << "x" << n << "\n" << k.failures;
      if (m * n >= 16) {
        EXPECT_TRUE(streams(cp)) << m << "x" << n << "\n" << cp.remarks.text();
      }
    }
  }
}

// An output the kernel reads back (a reduction accumulates into it) keeps
// cached stores, and so does any output on the real machine at test sizes.
TEST_P(StreamStores, OutputsReadBackOrSmallStayCached) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const std::string sum = "# sizes: M=130 N=20\ndef f(float(M,N) X) -> (S) {\n  S(m) +=! X(m,n)\n}\n";
  driver::CompiledProgram cp = compile(sum, tinyCaches(isa, 16));
  EXPECT_TRUE(testing::checkAgainstInterpreter(cp).pass);
  EXPECT_FALSE(streams(cp));
  std::vector<Remark> cached = cp.remarks.find("stream-stores", RemarkKind::Missed, "S");
  EXPECT_EQ(cached.size(), 1u) << cp.remarks.text();
  if (!cached.empty()) {
    EXPECT_EQ(cached[0].value("reason"), "the kernel reads it back") << cp.remarks.text();
  }
  const std::string add =
      "# sizes: M=13 N=40\ndef f(float(M,N) A, float(M,N) B) -> (C) {\n  C(m,n) = A(m,n) + B(m,n)\n}\n";
  EXPECT_FALSE(streams(compile(add, machineWith(isa))));
  driver::CompileOptions always;
  always.streamingStores = driver::CompileOptions::StreamingStores::Always;
  driver::CompiledProgram forced = compile(add, machineWith(isa), always);
  EXPECT_TRUE(streams(forced));
  EXPECT_TRUE(testing::checkAgainstInterpreter(forced).pass);
  driver::CompileOptions off;
  off.streamingStores = driver::CompileOptions::StreamingStores::Off;
  EXPECT_FALSE(streams(compile(add, tinyCaches(isa, 16), off)));
}

// A one-dimensional kernel's vector loop is also its parallel loop: the
// threads share it in a parallel region and each fences its own stores.
TEST_P(StreamStores, ParallelVectorLoopFencesEachThread) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  driver::CompileOptions always;
  always.streamingStores = driver::CompileOptions::StreamingStores::Always;
  for (int n : {1, 17, 1000, 4099, 150001}) {
    std::string tc =
        "# sizes: N=" + std::to_string(n) + "\ndef f(float(N) X) -> (Y) {\n  Y(i) = X(i) * 2 + 1\n}\n";
    driver::CompiledProgram cp = compile(tc, machineWith(isa), always);
    EXPECT_TRUE(testing::checkAgainstInterpreter(cp).pass) << n;
    if (n >= 17) {
      EXPECT_TRUE(streams(cp)) << n;
    }
    // (Smaller loops run on one thread: schedule/MarkParallel.h.)
    if (n >= 150001) {
      EXPECT_NE(cp.cSource.find("#pragma omp for schedule(static) nowait"), std::string::npos) << cp.cSource;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, StreamStores, ::testing::Values("avx512", "avx2"));

}  // namespace
}  // namespace tessel::lir
