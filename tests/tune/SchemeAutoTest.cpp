// Scheme "auto", the default: a convolution sliding a 3-wide window runs the
// best-modelled TTILE scheme, unmeasured; other contractions keep the
// compiler's own code; "none", vectorization off and a hand-given schedule
// opt out. Every kernel is checked against the interpreter.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/RowPrograms.h"
#include "driver/SchemeChoice.h"
#include "target/DetectHost.h"
#include "tune/SchemeSearch.h"

namespace tessel::tune {
namespace {

using microkernel::modelledTable;
using microkernel::rankedSchemes;
using microkernel::SchemeCandidate;

bool hasVectorUnit() { return !target::vectorIsa(target::detectHost()).empty(); }

// An NHWC convolution with an R x R window and stride `stride`, `h` output rows and columns.
std::string conv(int k, int c, int h, int r, int stride) {
  std::string in = std::to_string(stride * (h - 1) + r);
  std::string sub = stride == 1 ? "" : std::to_string(stride) + " * ";
  return "# sizes: N=1 HI=" + in + " WI=" + in + " CI=" + std::to_string(c) + " K=" + std::to_string(k) +
         " R=" + std::to_string(r) + "\ndef conv(float(N, HI, WI, CI) I, float(R, R, CI, K) Wt) -> (O) {\n" +
         "  O(n, h, w, k) +=! I(n, " + sub + "h + r, " + sub +
         "w + s, c) * Wt(r, s, c, k)\n    where h in 0:" + std::to_string(h) +
         ", w in 0:" + std::to_string(h) + "\n}\n";
}

// basteln's add+conv+ReLU (NCHW, zero padding 1): the scheme takes the ReLU as its epilogue.
std::string addConvRelu(int n, int c, int hw, int k) {
  return "# sizes: N=" + std::to_string(n) + " C=" + std::to_string(c) + " H=" + std::to_string(hw) +
         " W=" + std::to_string(hw) + " K=" + std::to_string(k) +
         "\ndef f(float(N, C, H, W) X, float(N, C, H, W) Y, float(K, C, 3, 3) Wt) -> (O) {\n"
         "  A(n, c, h, w) = X(n, c, h, w) + Y(n, c, h, w)\n"
         "  Cv(n, k, h, w) +=! (h + kh - 1 >= 0 && h + kh - 1 < H && w + kw - 1 >= 0 && w + kw - 1 < W\n"
         "      ? A(n, c, h + kh - 1, w + kw - 1) : 0) * Wt(k, c, kh, kw) where n in 0:N, h in 0:H, w in "
         "0:W\n"
         "  O(n, k, h, w) = fmax(Cv(n, k, h, w), 0)\n}\n";
}

TEST(SchemeAuto, IsTheDefault) {
  EXPECT_TRUE(driver::asksForModelChoice(driver::CompileOptions{}.scheme.text));
}

TEST(SchemeAuto, AThreeByThreeConvolutionRunsTheBestModelledScheme) {
  if (!hasVectorUnit()) GTEST_SKIP() << "no vector unit";
  // Rows the register tiles compose (34, 13, 11), stride 2, one input channel, a prime channel count.
  for (const std::string& tc : {conv(32, 8, 34, 3, 1), conv(16, 7, 13, 3, 1), conv(32, 1, 11, 3, 2),
                                conv(48, 13, 9, 3, 1), addConvRelu(2, 8, 7, 32), addConvRelu(1, 3, 13, 16)}) {
    testing::CheckedProgram c = testing::compileAndCheck(tc);
    EXPECT_TRUE(c.check.pass) << tc << c.check.failures;
    std::vector<Remark> chosen = c.program.remarks.find(driver::kSchemeChoice, RemarkKind::Applied);
    ASSERT_EQ(chosen.size(), 1u) << tc << c.explained();
    EXPECT_GT(std::stoi(chosen[0].value("candidates")), 0) << c.explained();
    ASSERT_EQ(c.program.microKernelSchemes.size(), 1u) << tc << c.explained();
    EXPECT_NE(c.program.microKernelSchemes[0].find(chosen[0].value("scheme")), std::string::npos)
        << c.explained();
  }
}

TEST(SchemeAuto, ShapesWithoutASchemeKeepTheCompilersCode) {
  // Rows no register tile covers (1 and 2 output rows and columns; 7 output channels on AVX2): checked
  // against the interpreter whichever code they get.
  for (const std::string& tc : {conv(16, 4, 1, 3, 1), conv(7, 5, 2, 3, 1), addConvRelu(1, 1, 1, 1)}) {
    testing::CheckedProgram c = testing::compileAndCheck(tc);
    EXPECT_TRUE(c.check.pass) << tc << c.check.failures;
    if (c.program.microKernelSchemes.empty() && hasVectorUnit()) {
      EXPECT_FALSE(c.program.remarks.find(driver::kSchemeChoice, RemarkKind::Missed).empty())
          << tc << c.explained();
    }
  }
}

TEST(SchemeAuto, OneByOneConvolutionsRunTheBestModelledScheme) {
  if (!hasVectorUnit()) GTEST_SKIP() << "no vector unit";
  // NHWC at stride 1 and 2, and NCHW (output laid out to vectorize along k).
  const std::string nchw =
      "# sizes: N=2 C=19 H=9 W=13 K=48\ndef f(float(N, C, H, W) I, float(K, C) Wt) -> (O) {\n"
      "  O(n, k, h, w) +=! I(n, c, h, w) * Wt(k, c)\n}\n";
  for (const std::string& tc : {conv(32, 16, 8, 1, 1), conv(48, 7, 13, 1, 2), nchw}) {
    testing::CheckedProgram c = testing::compileAndCheck(tc);
    EXPECT_TRUE(c.check.pass) << tc << c.check.failures;
    EXPECT_EQ(c.program.remarks.find(driver::kSchemeChoice, RemarkKind::Applied).size(), 1u)
        << tc << c.explained();
    EXPECT_EQ(c.program.microKernelSchemes.size(), 1u) << tc << c.explained();
  }
}

TEST(SchemeAuto, MatmulsStencilsAndOtherWindowsKeepTheCompilersCode) {
  const std::string matmul =
      "# sizes: M=64 N=64 K=64\ndef mm(float(M, K) A, float(K, N) B) -> (C) {\n  C(m, n) +=! A(m, k) * B(k, "
      "n)\n}\n";
  // A 3x3 window but no input channels to accumulate over: one channel, or depthwise.
  const std::string stencil =
      "# sizes: IH=34 IW=20\ndef f(float(IH, IW) X, float(3, 3) K) -> (C) {\n"
      "  C(h, w) +=! X(h + kh, w + kw) * K(kh, kw)\n}\n";
  const std::string depthwise =
      "# sizes: N=1 C=32 H=18 W=18\ndef f(float(N, H, W, C) I, float(3, 3, C) Wt) -> (O) {\n"
      "  O(n, h, w, c) +=! I(n, h + r, w + s, c) * Wt(r, s, c)\n}\n";
  const std::string batched =
      "# sizes: B=3 M=16 N=32 K=8\ndef f(float(B, M, K) A, float(B, K, N) X) -> (C) {\n"
      "  C(b, m, n) +=! A(b, m, k) * X(b, k, n)\n}\n";
  // ResNet-18's 7x7 stem, where the model's first choice lost (1.5 against 2.3 ms).
  for (const std::string& tc : {matmul, batched, stencil, depthwise, conv(32, 3, 9, 7, 2)}) {
    testing::CheckedProgram c = testing::compileAndCheck(tc);
    EXPECT_TRUE(c.check.pass) << tc << c.check.failures;
    EXPECT_TRUE(c.program.remarks.find(driver::kSchemeChoice).empty()) << c.explained();
    EXPECT_TRUE(c.program.microKernelSchemes.empty());
  }
}

TEST(SchemeAuto, NoneVectorizationOffAndAGivenScheduleOptOut) {
  if (!hasVectorUnit()) GTEST_SKIP() << "no vector unit";
  const std::string tc = conv(32, 8, 10, 3, 1);
  driver::CompileOptions none;
  none.scheme.text = "none";
  testing::CheckedProgram c = testing::compileAndCheck(tc, none);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_TRUE(c.program.microKernelSchemes.empty());
  EXPECT_TRUE(c.program.remarks.find(driver::kSchemeChoice).empty()) << c.explained();

  driver::CompileOptions scalar;
  scalar.vectorize = false;
  c = testing::compileAndCheck(tc, scalar);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_TRUE(c.program.microKernelSchemes.empty());
  auto missed = c.program.remarks.find(driver::kSchemeChoice, RemarkKind::Missed, "O");
  ASSERT_EQ(missed.size(), 1u) << c.explained();
  EXPECT_EQ(missed[0].value("reason"), "vectorization is off");

  driver::CompileOptions steered;
  steered.scheduler = driver::CompileOptions::Scheduler::Tessel;
  steered.scheduleConstraints = driver::CompileOptions::ConstraintsFile{"auto", "", true};
  c = testing::compileAndCheck(tc, steered);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_TRUE(c.program.microKernelSchemes.empty());
  missed = c.program.remarks.find(driver::kSchemeChoice, RemarkKind::Missed, "O");
  ASSERT_EQ(missed.size(), 1u) << c.explained();
  EXPECT_EQ(missed[0].value("reason"), "--schedule-constraints steer the scheduler");
}

// --dump-after prints each pass once: the scheme's attempt prints nothing
// until it has succeeded.
TEST(SchemeAuto, DumpsPrintOnce) {
  if (!hasVectorUnit()) GTEST_SKIP() << "no vector unit";
  driver::CompileOptions o;
  o.dumpAfter = "graft-microkernel";
  int dumps = 0;
  o.dumpSink = [&dumps](const std::string&) { ++dumps; };
  driver::CompiledProgram cp = testing::compileFor(front::testing::lowerText(conv(32, 8, 10, 3, 1)), o);
  EXPECT_EQ(dumps, 1);
  EXPECT_NE(cp.dump.find("microkernel"), std::string::npos) << cp.dump;
}

// A square NHWC window: tiles down h and tiles along w move the same modelled
// data; the ranking then prefers the unrolled dimension along which the output
// is closer together (w: a tile's rows are neighbours, not rows of the image
// in pages of their own).
TEST(SchemeAuto, ATieGoesToTheUnrolledDimensionWithTheShorterOutputStride) {
  target::Hardware host = target::detectHost();
  if (target::vectorIsa(host).empty()) GTEST_SKIP() << "no vector unit";
  microkernel::VectorIsa isa = microkernel::vectorIsaNamed(target::vectorIsa(host));
  te::Program p = front::testing::lowerText(conv(32, 3, 34, 3, 1));
  std::string why;
  std::vector<SchemeCandidate> ranked =
      rankedSchemes(*microkernel::recognizeContraction(p, 0).contraction, host, modelledTable(isa), why);
  ASSERT_FALSE(ranked.empty()) << why;
  // Not down h (rows of the image 34 x 32 apart); along w (K = 32 apart) unless another shape wins.
  EXPECT_NE(ranked.front().unrolledOutputStride, 34 * 32) << ranked.front().scheme;
  for (size_t i = 1; i < ranked.size(); ++i) EXPECT_FALSE(rankedBefore(ranked[i], ranked[i - 1]));
}

// The ranking counts what a scheme wastes: partial vectors' idle lanes,
// loads beyond one per FMA, and FMA latency too few accumulators leave exposed.
TEST(SchemeAuto, TheRankingChargesIdleLanesAndExtraLoads) {
  target::Hardware host = target::detectHost();
  if (target::vectorIsa(host) != "avx512") GTEST_SKIP() << "no AVX-512 here";
  // NCHW rows of 56: partial vectors of 4 lanes (14 per tile) are among the candidates.
  te::Program p = front::testing::lowerText(
      "# sizes: N=1 C=16 H=56 W=58 K=16\n"
      "def conv(float(N, C, H, W) I, float(K, C, 3, 3) Wt) -> (O) {\n"
      "  O(n, k, h, w) +=! I(n, c, h + kh, w + kw) * Wt(k, c, kh, kw) where h in 0:H - 2, w in 0:56\n}\n");
  std::string why;
  std::vector<SchemeCandidate> ranked =
      rankedSchemes(*microkernel::recognizeContraction(p, 0).contraction, host,
                    modelledTable(microkernel::vectorIsaNamed("avx512")), why);
  ASSERT_FALSE(ranked.empty()) << why;
  bool sawNarrow = false;
  for (const auto& c : ranked) {
    EXPECT_DOUBLE_EQ(c.rankCost(), c.model.cost * c.panelPenalty / (c.laneShare * c.fmaShare)) << c.scheme;
    EXPECT_GT(c.fmaShare, 0);
    EXPECT_LE(c.fmaShare, 1);
    if (c.scheme.find("V_{4,w}") != std::string::npos) {
      sawNarrow = true;
      EXPECT_DOUBLE_EQ(c.laneShare, 4.0 / 16) << c.scheme;
    }
    // One vector per row and a row of weights per vector: more loads than FMAs.
    if (c.scheme.find("U_{8,k}, U_{1,w}, V_w") != std::string::npos) {
      EXPECT_DOUBLE_EQ(c.fmaShare, 8.0 / 9) << c.scheme;
    }
  }
  EXPECT_TRUE(sawNarrow);
  EXPECT_GE(ranked.front().laneShare, 0.5) << ranked.front().scheme;

  // 7 output rows and columns (ResNet-18's last layers): one tile of the 7 rows. With one vector,
  // 7 accumulators wait on their FMAs' latency (8 needed in flight) and load 8 values for 7 FMAs.
  p = front::testing::lowerText(conv(32, 16, 7, 3, 1));
  ranked = rankedSchemes(*microkernel::recognizeContraction(p, 0).contraction, host,
                         modelledTable(microkernel::vectorIsaNamed("avx512")), why);
  ASSERT_FALSE(ranked.empty()) << why;
  bool sawSeven = false;
  for (const auto& c : ranked)
    for (const char* tile : {"U_{7,h}, U_{1,k}, V_k", "U_{7,w}, U_{1,k}, V_k"})
      if (c.scheme.size() >= std::string(tile).size() &&
          c.scheme.compare(c.scheme.size() - std::string(tile).size(), std::string::npos, tile) == 0) {
        sawSeven = true;
        EXPECT_DOUBLE_EQ(c.fmaShare, 7.0 / 8 * 7.0 / 8) << c.scheme;
      }
  EXPECT_TRUE(sawSeven);
  EXPECT_EQ(ranked.front().scheme.find("U_{1,k}, V_k"), std::string::npos) << ranked.front().scheme;
}

}  // namespace
}  // namespace tessel::tune
