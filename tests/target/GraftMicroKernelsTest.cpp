// Contractions implemented by TTILE schemes (--scheme): every generated
// kernel checked against the interpreter on awkward shapes, compositions,
// strided and NCHW convolutions, AVX2, fused epilogues; the user's mistakes.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "../support/Compile.h"
#include "../support/RowPrograms.h"
#include "../support/VectorIsa.h"

namespace tessel::target::cpu {
namespace {

using testing::compileAndCheck;

constexpr const char* kMatmul =
    "def mm(float(M, K) A, float(K, N) B) -> (C) {\n"
    "  C(m, n) +=! A(m, k) * B(k, n)\n}\n";

// A valid (unpadded) convolution in NHWC, R x S window.
constexpr const char* kNhwcConv =
    "def conv(float(N, HI, WI, CI) I, float(R, S, CI, K) Wt) -> (C) {\n"
    "  C(n, h, w, k) +=! I(n, h + r, w + s, c) * Wt(r, s, c, k)\n"
    "    where h in 0:HI - R + 1, w in 0:WI - S + 1\n}\n";

std::string sized(const std::string& sizes, const std::string& tc) { return "# sizes: " + sizes + "\n" + tc; }

driver::CompileOptions withScheme(const std::string& scheme) {
  driver::CompileOptions o;
  o.scheme.text = scheme;
  return o;
}

// The graft-microkernel pass's remark: exactly one contraction grafted (an
// empty remark, whose values are all "", after a failure).
Remark grafted(const testing::CheckedProgram& r) {
  std::vector<Remark> g = r.program.remarks.find("graft-microkernel", RemarkKind::Applied);
  EXPECT_EQ(g.size(), 1u) << r.program.remarks.text();
  return g.size() == 1 ? g[0] : Remark{};
}

// Whether `text` begins with `prefix`.
bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

void expectGraftedAndCorrect(const std::string& tc, const driver::CompileOptions& o) {
  testing::CheckedProgram r = compileAndCheck(tc, o);
  EXPECT_TRUE(r.check.pass) << o.scheme.text << "\n" << r.check.failures;
  EXPECT_EQ(grafted(r).value("tensor"), "C") << o.scheme.text;
  EXPECT_NE(r.program.cSource.find("tessel_microkernel_0(C, "), std::string::npos);
}

// The schemes of most tests here are written for AVX-512's 16 lanes and 32
// registers (a V_k covers 16 channels); on other hosts they are refused as
// the user's would be. AvxTwoSchemesOfEveryKind covers the same paths there.
constexpr const char* kWrittenForAvx512 =
    "schemes written for AVX-512 (16 lanes, 32 registers); AvxTwoSchemesOfEveryKind runs on AVX2";

std::string errorOf(const std::string& tc, const std::string& scheme) {
  try {
    testing::compileFor(front::testing::lowerText(tc), withScheme(scheme));
  } catch (const UserError& e) {
    return e.render();
  }
  return "";
}

TEST(GraftMicroKernels, MatmulsOfAwkwardShapesMatchTheInterpreter) {
  if (!testing::hostHas("avx512")) GTEST_SKIP() << kWrittenForAvx512;
  const std::vector<std::pair<std::string, std::string>> cases = {
      // 13 = 6 + 7: two register tiles composed along m (paper 002 §1.3, Fig. 5).
      {"M=13 N=32 K=7", "lambda_m a.[(1,6),(1,7)], R_n, R_k, U_{a,m}, U_{2,n}, V_n"},
      {"M=26 N=32 K=7", "R_n, lambda_m a.[(2,6),(2,7)], T_{7,k}, U_{a,m}, U_{2,n}, V_n"},
      {"M=1 N=16 K=1", "R_m, R_n, R_k, V_n"},
      {"M=127 N=48 K=13", "R_m, R_n, R_k, U_{3,n}, V_n"},
      // Scalar register tiles, the reduction unrolled.
      {"M=7 N=13 K=127", "R_m, R_n, T_{127,k}, U_{7,m}"},
      {"M=5 N=3 K=12", "R_k, R_m, R_n, U_{4,k}, U_{3,n}"},
      // Reduction outermost: each pass over k adds to the stored accumulators.
      {"M=16 N=64 K=9", "T_{3,k}, R_m, R_n, T_{3,k}, U_{2,m}, U_{4,n}, V_n"},
      // Packed panels (BLIS's order): B under the k and n blocks, A under the m blocks.
      {"M=26 N=64 K=21",
       "T_{2,n}, T_{3,k}, P_B, T_{2,m}, P_A, lambda_m a.[(1,6),(1,7)], T_{7,k}, U_{a,m}, U_{2,n}, V_n"},
      {"M=13 N=32 K=5", "P_A, P_B, lambda_m a.[(1,6),(1,7)], R_n, R_k, U_{a,m}, U_{2,n}, V_n"},
      {"M=7 N=5 K=3", "R_m, P_B, R_n, R_k"},
  };
  for (const auto& [sizes, scheme] : cases)
    expectGraftedAndCorrect(sized(sizes, kMatmul), withScheme(scheme));
}

TEST(GraftMicroKernels, TheInitializationIsFoldedWhenEveryTileIsComplete) {
  // Every reduction inside the micro-kernel: the accumulators start at zero and C's zeroing is gone.
  testing::CheckedProgram r =
      compileAndCheck(sized("M=13 N=32 K=7", kMatmul), withScheme("R_m, R_n, R_k, V_n"));
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  EXPECT_EQ(grafted(r).value("tensor"), "C");
  EXPECT_EQ(grafted(r).value("init_folded"), "true") << r.program.remarks.text();
  EXPECT_EQ(r.program.scheduleYaml.find("S0"), std::string::npos) << r.program.scheduleYaml;
  // A reduction loop outside: each pass adds to what the last stored, so C is zeroed first.
  r = compileAndCheck(sized("M=16 N=64 K=9", kMatmul), withScheme("T_{3,k}, R_m, R_n, T_{3,k}, V_n"));
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  EXPECT_EQ(grafted(r).value("init_folded"), "false") << r.program.remarks.text();
  EXPECT_NE(r.program.scheduleYaml.find("S0"), std::string::npos);
}

TEST(GraftMicroKernels, ConvolutionsInEveryLayoutTheRulesAllow) {
  if (!testing::hostHas("avx512")) GTEST_SKIP() << kWrittenForAvx512;
  const std::string nhwc = kNhwcConv;
  const std::string strided =
      "def conv(float(N, HI, WI, CI) I, float(R, S, CI, K) Wt) -> (C) {\n"
      "  C(n, h, w, k) +=! I(n, 2 * h + r, 2 * w + s, c) * Wt(r, s, c, k)\n"
      "    where h in 0:(HI - R) / 2 + 1, w in 0:(WI - S) / 2 + 1\n}\n";
  const std::string nchw =
      "def conv(float(N, CI, HI, WI) I, float(K, CI, R, S) Wt) -> (C) {\n"
      "  C(n, k, h, w) +=! I(n, c, h + r, w + s) * Wt(k, c, r, s)\n"
      "    where h in 0:HI - R + 1, w in 0:WI - S + 1\n}\n";
  // h = 17 = 2 x 6 + 5 (paper 002 §2.3's example); r unrolled 3 times.
  expectGraftedAndCorrect(
      sized("N=1 HI=19 WI=9 CI=7 K=32 R=3 S=3", nhwc),
      withScheme("R_n, lambda_h b.[(2,6),(1,5)], R_w, T_{7,c}, T_{3,s}, U_{3,r}, U_{b,h}, "
                 "U_{2,k}, V_k"));
  expectGraftedAndCorrect(sized("N=2 HI=5 WI=4 CI=3 K=16 R=1 S=2", nhwc),
                          withScheme("R_n, R_h, R_w, R_c, R_r, R_s, V_k"));
  expectGraftedAndCorrect(sized("N=1 HI=15 WI=11 CI=5 K=48 R=3 S=3", strided),
                          withScheme("R_n, R_h, R_w, T_{5,c}, T_{3,r}, T_{3,s}, U_{5,w}, U_{3,k}, V_k"));
  // Packed: the strided input's rows (a box twice as wide as the outputs), the weights per k block.
  expectGraftedAndCorrect(
      sized("N=1 HI=15 WI=11 CI=5 K=48 R=3 S=3", strided),
      withScheme("R_n, T_{3,k}, P_Wt, R_h, P_I, R_w, T_{5,c}, T_{3,r}, T_{3,s}, U_{5,w}, U_{1,k}, V_k"));
  // NCHW: the output and the input are contiguous along w, the weights broadcast.
  expectGraftedAndCorrect(sized("N=1 HI=9 WI=34 CI=13 K=4 R=3 S=3", nchw),
                          withScheme("R_n, R_h, R_c, T_{3,r}, U_{3,s}, U_{4,k}, U_{2,w}, V_w"));
}

TEST(GraftMicroKernels, OperandsReadInTheSchemesLayouts) {
  if (!testing::hostHas("avx512")) GTEST_SKIP() << kWrittenForAvx512;
  const std::string nhwc = kNhwcConv;
  // Blocked weights (oneDNN's Ohwi-like order); 48 = a block and a half: the last block overhangs.
  for (const auto& [sizes, scheme] : std::vector<std::pair<std::string, std::string>>{
           {"N=1 HI=9 WI=7 CI=5 K=64 R=3 S=3",
            "L_Wt(k/32, r, s, c, k%32), R_n, R_k, R_h, T_{5,c}, T_{3,r}, T_{3,s}, U_{5,w}, U_{2,k}, V_k"},
           {"N=1 HI=4 WI=4 CI=3 K=48 R=1 S=2",
            "R_n, R_k, R_h, R_w, L_Wt(k/32, r, s, c, k%32), T_{3,c}, T_{2,s}, V_k"}}) {
    testing::CheckedProgram r = compileAndCheck(sized(sizes, nhwc), withScheme(scheme));
    EXPECT_TRUE(r.check.pass) << scheme << "\n" << r.check.failures;
    ASSERT_EQ(r.program.kernel.preparedInputs.size(), 1u);
    EXPECT_EQ(r.program.kernel.preparedInputs[0].input, "Wt");
    EXPECT_NE(r.program.cSource.find("tessel_microkernel_0(C, I, Wt_laid_out)"), std::string::npos);
    Remark g = grafted(r);
    EXPECT_EQ(g.value("reads_laid_out"), "Wt") << r.program.remarks.text();
    EXPECT_TRUE(startsWith(g.value("layout.Wt"), "Wt[#3/32:")) << r.program.remarks.text();
    EXPECT_EQ(g.value("prepared.Wt"), "true");
  }
  // The input read as NCHW from an NHWC program, by positions; the transform copies element by element.
  expectGraftedAndCorrect(sized("N=2 HI=5 WI=6 CI=3 K=16 R=2 S=2", nhwc),
                          withScheme("L_I(#0, c, #1, #2), R_n, R_h, R_w, R_c, R_r, R_s, V_k"));
  // Matmul with B in column panels of 32 and A transposed.
  expectGraftedAndCorrect(sized("M=7 N=64 K=13", kMatmul),
                          withScheme("L_B(n/32, k, n%32), L_A(k, m), R_n, R_m, R_k, U_{2,n}, V_n"));
  // An operand the kernel computes is laid out inside the kernel, right before the micro-kernel.
  testing::CheckedProgram r = compileAndCheck(sized("M=5 N=32 K=3",
                                                    "def f(float(M, K) A, float(K, N) B) -> (C) {\n"
                                                    "  D(k, n) = B(k, n) * 2\n"
                                                    "  C(m, n) +=! A(m, k) * D(k, n)\n}\n"),
                                              withScheme("C: L_D(n/16, k, n%16), R_m, R_n, R_k, V_n"));
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  EXPECT_TRUE(r.program.kernel.preparedInputs.empty());
  Remark g = grafted(r);
  EXPECT_EQ(g.value("reads_laid_out"), "D") << r.program.remarks.text();
  EXPECT_EQ(g.value("layout.D"), "D[#1/16:2][#0:3][#1%16:16]");
  EXPECT_EQ(g.value("prepared.D"), "false");  // transformed right before the micro-kernel
  // The header declares the prepare and prepared entries.
  driver::CompiledProgram cp = testing::compileFor(front::testing::lowerText(sized("M=7 N=64 K=13", kMatmul)),
                                                   withScheme("L_B(n/32, k, n%32), R_m, R_n, R_k, V_n"));
  std::string header = backend::emitHeader(cp.kernel, "test");
  EXPECT_NE(header.find("int mm__prepare(const float* A, const float* B, float* B_laid_out);"),
            std::string::npos)
      << header;
  EXPECT_NE(
      header.find("int mm__prepared(const float* A, const float* B, float* C, const float* B_laid_out);"),
      std::string::npos)
      << header;
  EXPECT_NE(header.find("B_laid_out[2][13][32]: B as B[#1/32:2][#0:13][#1%32:32]"), std::string::npos)
      << header;
  // With B constant, timing runs the prepared entry, the transform apart; otherwise the whole kernel.
  runtime::RunOptions ro;
  ro.time = true;
  ro.minRuns = 1;
  ro.minSeconds = 0;
  auto constant = [](const std::string& input) { return input == "B"; };
  runtime::RunReport timed =
      runtime::runKernel(cp.program, cp.cSource, backend::kernelEntries(cp.kernel, constant), ro);
  EXPECT_EQ(timed.preparedInputs, std::vector<std::string>{"B"});
  EXPECT_GE(timed.runs, 1);
  EXPECT_TRUE(backend::kernelEntries(cp.kernel).prepare.empty());
  EXPECT_TRUE(
      backend::kernelEntries(cp.kernel, [](const std::string& i) { return i == "A"; }).prepare.empty());
  timed = runtime::runKernel(cp.program, cp.cSource, backend::kernelEntries(cp.kernel), ro);
  EXPECT_TRUE(timed.preparedInputs.empty());
}

TEST(GraftMicroKernels, PaddedConvolutionsReadAZeroBorderedCopy) {
  if (!testing::hostHas("avx512")) GTEST_SKIP() << kWrittenForAvx512;
  const std::string same =
      "def conv(float(N, H, W, C) I, float(R, R, C, K) Wt) -> (O) {\n"
      "  O(n, h, w, k) +=! (h + r - (R - 1) / 2 >= 0 && h + r - (R - 1) / 2 < H &&\n"
      "      w + s - (R - 1) / 2 >= 0 && w + s - (R - 1) / 2 < W\n"
      "      ? I(n, h + r - (R - 1) / 2, w + s - (R - 1) / 2, c) : 0) * Wt(r, s, c, k)\n"
      "    where h in 0:H, w in 0:W\n}\n";
  for (const auto& [sizes, scheme] : std::vector<std::pair<std::string, std::string>>{
           // One pixel: every tap but the centre reads the border.
           {"N=1 H=1 W=1 C=3 K=16 R=3", "R_n, R_h, R_w, R_r, R_s, R_c, V_k"},
           {"N=2 H=7 W=13 C=5 K=32 R=3",
            "R_n, R_h, lambda_w a.[(1,6),(1,7)], R_r, R_s, R_c, U_{a,w}, U_{2,k}, V_k"},
           // Padding 2, the weights blocked, the copy of I read as NCHW.
           {"N=1 H=13 W=7 C=16 K=48 R=5",
            "L_Wt(k/16, r, s, c, k%16), L_I(#0, c, #1, #2), R_n, R_k, R_h, T_{16,c}, T_{5,r}, T_{5,s}, "
            "U_{7,w}, V_k"},
           // Scalar tiles.
           {"N=1 H=7 W=5 C=2 K=3 R=3", "R_n, R_k, R_h, R_r, R_s, R_c, U_{5,w}"},
       }) {
    testing::CheckedProgram r = compileAndCheck(sized(sizes, same), withScheme(scheme));
    EXPECT_TRUE(r.check.pass) << scheme << "\n" << r.check.failures;
    EXPECT_NE(grafted(r).value("layout.I").find(" with a zero border of 0+0, "), std::string::npos)
        << scheme << "\n"
        << r.program.remarks.text();
  }
  // With only the weights declared constant, the padded copy of I is made on every call, inside the kernel.
  driver::CompileOptions o =
      withScheme("L_Wt(k/16, r, s, c, k%16), R_n, R_k, R_h, R_r, R_s, R_c, U_{7,w}, V_k");
  o.constantInputs.names = {"Wt"};
  testing::CheckedProgram r = compileAndCheck(sized("N=1 H=7 W=7 C=3 K=32 R=3", same), o);
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  ASSERT_EQ(r.program.kernel.preparedInputs.size(), 1u);
  EXPECT_EQ(r.program.kernel.preparedInputs[0].input, "Wt");
  EXPECT_EQ(grafted(r).value("prepared.I"), "false") << r.program.remarks.text();  // on every call
  // Undeclared, both are prepared apart.
  o.constantInputs.names.clear();
  EXPECT_EQ(compileAndCheck(sized("N=1 H=7 W=7 C=3 K=32 R=3", same), o).program.kernel.preparedInputs.size(),
            2u);

  // basteln's add + 3x3 conv + ReLU in NCHW: the padded operand is a temporary the kernel computes.
  const std::string addConvRelu =
      "def f(float(N, C, H, W) X, float(N, C, H, W) Y, float(K, C, 3, 3) Wt) -> (O) {\n"
      "  A(n, c, h, w) = X(n, c, h, w) + Y(n, c, h, w)\n"
      "  Cv(n, k, h, w) +=! (h + kh - 1 >= 0 && h + kh - 1 < H && w + kw - 1 >= 0 && w + kw - 1 < W\n"
      "      ? A(n, c, h + kh - 1, w + kw - 1) : 0) * Wt(k, c, kh, kw) where n in 0:N, h in 0:H, w in 0:W\n"
      "  O(n, k, h, w) = fmax(Cv(n, k, h, w), 0)\n}\n";
  std::string scheme = testing::hostHas("avx512") ? "Cv: R_n, R_k, R_h, R_c, R_kh, R_kw, U_{3,k}, V_{13,w}"
                                                  : "Cv: R_n, R_k, R_h, R_c, R_kh, R_kw, U_{3,k}, U_{13,w}";
  r = compileAndCheck(sized("N=2 C=5 H=7 W=13 K=6", addConvRelu), withScheme(scheme));
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  Remark g = grafted(r);
  EXPECT_EQ(g.value("epilogue"), "O") << r.program.remarks.text();
  EXPECT_EQ(g.value("epilogue_fused"), "true");
  EXPECT_EQ(g.value("layout.A"), "A[#0:2][#1:5][#2:9][#3:15] with a zero border of 0+0, 0+0, 1+1, 1+1")
      << r.program.remarks.text();
  EXPECT_EQ(g.value("prepared.A"), "false");  // transformed right before the micro-kernel
}

TEST(GraftMicroKernels, OutputsWrittenInTheSchemesLayoutAndCopiedBack) {
  if (!testing::hostHas("avx512")) GTEST_SKIP() << kWrittenForAvx512;
  // NCHW, padded: the kernel writes O as NHWC (k vectorized) and copies it back.
  const std::string nchw =
      "def conv(float(N, C, H, W) I, float(K, C, 3, 3) Wt) -> (O) {\n"
      "  O(n, k, h, w) +=! (h + kh - 1 >= 0 && h + kh - 1 < H && w + kw - 1 >= 0 && w + kw - 1 < W\n"
      "      ? I(n, c, h + kh - 1, w + kw - 1) : 0) * Wt(k, c, kh, kw) where n in 0:N, h in 0:H, w in "
      "0:W\n}\n";
  for (const auto& [sizes, scheme, copiedIn] : std::vector<std::tuple<std::string, std::string, bool>>{
           // Every tile complete: the accumulators start at zero, nothing copied in.
           {"N=2 C=5 H=7 W=13 K=32",
            "L_O(n, h, w, k), L_Wt(k/32, c, kh, kw, k%32), R_n, R_h, R_w, R_c, R_kh, R_kw, U_{2,k}, V_k",
            false},
           // c split around the tile: the accumulators start from O, copied in first.
           {"N=1 C=6 H=1 W=7 K=48",
            "L_O(n, h, w, k), T_{2,c}, R_n, R_h, R_w, T_{3,c}, R_kh, R_kw, L_Wt(k/48, c, kh, kw, k%48), "
            "U_{3,k}, V_k",
            true},
           // Blocked output (NCHWc16) with a block that overhangs K = 40, scalar tiles.
           {"N=1 C=3 H=5 W=4 K=40", "L_O(n, k/16, h, w, k%16), R_n, R_k, R_h, R_w, R_c, R_kh, R_kw", false},
       }) {
    testing::CheckedProgram r = compileAndCheck(sized(sizes, nchw), withScheme(scheme));
    EXPECT_TRUE(r.check.pass) << scheme << "\n" << r.check.failures;
    Remark g = grafted(r);
    EXPECT_EQ(g.value("writes_laid_out"), "O") << scheme << "\n" << r.program.remarks.text();
    EXPECT_TRUE(startsWith(g.value("layout.O"), "O[#0:")) << r.program.remarks.text();
    EXPECT_EQ(g.value("copied_in"), copiedIn ? "true" : "false") << scheme << "\n"
                                                                 << r.program.remarks.text();
  }
  // With a fused epilogue, the epilogue's output is the one laid out.
  const std::string addConvRelu =
      "def f(float(N, C, H, W) X, float(N, C, H, W) Y, float(K, C, 3, 3) Wt, float(K) B) -> (O) {\n"
      "  A(n, c, h, w) = X(n, c, h, w) + Y(n, c, h, w)\n"
      "  Cv(n, k, h, w) +=! (h + kh - 1 >= 0 && h + kh - 1 < H && w + kw - 1 >= 0 && w + kw - 1 < W\n"
      "      ? A(n, c, h + kh - 1, w + kw - 1) : 0) * Wt(k, c, kh, kw) where n in 0:N, h in 0:H, w in 0:W\n"
      "  O(n, k, h, w) = fmax(Cv(n, k, h, w) + B(k), 0)\n}\n";
  testing::CheckedProgram r =
      compileAndCheck(sized("N=2 C=3 H=7 W=1 K=17", addConvRelu),
                      withScheme("Cv: L_Cv(n, h, w, k), R_n, R_h, R_w, R_c, R_kh, R_kw, U_{17,k}"));
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  Remark g = grafted(r);
  EXPECT_EQ(g.value("epilogue"), "O") << r.program.remarks.text();
  EXPECT_EQ(g.value("epilogue_fused"), "true");
  EXPECT_EQ(g.value("writes_laid_out"), "O");
  EXPECT_EQ(g.value("layout.O"), "O[#0:2][#2:7][#3:1][#1:17]") << r.program.remarks.text();
  EXPECT_EQ(g.value("copied_in"), "false");
}

TEST(GraftMicroKernels, PartialVectorsCoverWhatWholeOnesCannot) {
  if (!testing::hostHas("avx512")) GTEST_SKIP() << "no AVX-512 here";
  // N = 44 = 2 x 16 + 12: the last tile's vectors have 12 lanes, masked.
  expectGraftedAndCorrect(sized("M=7 N=44 K=5", kMatmul),
                          withScheme("R_m, lambda_n v.[(2,16),(1,12)], R_k, U_{7,m}, V_{v,n}"));
  // Two vectors of 14 lanes per tile at the end (700 = 21 x 32 + 2 x 14), B blocked by 32.
  expectGraftedAndCorrect(
      sized("M=3 N=700 K=4", kMatmul),
      withScheme("L_B(n/32, k, n%32), R_m, lambda_n v.[(21,16),(1,14)], R_k, U_{2,n}, V_{v,n}"));
  // No loop but the lambda over n to share out, inside a reduction loop: its branches run as parallel loops.
  driver::CompileOptions parallel =
      withScheme("T_{2,k}, lambda_n v.[(2,16),(1,12)], lambda_m b.[(1,6),(1,7)], T_{3,k}, U_{b,m}, V_{v,n}");
  testing::CheckedProgram branches = compileAndCheck(sized("M=13 N=44 K=6", kMatmul), parallel);
  EXPECT_TRUE(branches.check.pass) << branches.check.failures;
  EXPECT_NE(branches.program.cSource.find("/* v = 16 */\n    #pragma omp parallel for schedule(static)\n"),
            std::string::npos)
      << branches.program.cSource;
  // A single partial vector, accumulating over a reduction outside the micro-kernel.
  expectGraftedAndCorrect(sized("M=5 N=9 K=6", kMatmul), withScheme("T_{2,k}, R_m, R_n, T_{3,k}, V_{9,n}"));
  // Through an epilogue.
  testing::CheckedProgram r =
      compileAndCheck(sized("M=4 N=20 K=3",
                            "def f(float(M, K) A, float(K, N) W, float(N) B) -> (Y) {\n"
                            "  C(m, n) +=! A(m, k) * W(k, n)\n  Y(m, n) = max(C(m, n) + B(n), 0)\n}\n"),
                      withScheme("C: R_m, lambda_n v.[(1,16),(1,4)], R_k, V_{v,n}"));
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  EXPECT_EQ(grafted(r).value("epilogue"), "Y") << r.program.remarks.text();
  EXPECT_EQ(grafted(r).value("epilogue_fused"), "true");
  EXPECT_NE(r.program.cSource.find("_mm512_maskz_loadu_ps"), std::string::npos);
}

TEST(GraftMicroKernels, DepthwiseConvolutions) {
  if (!testing::hostHas("avx512")) GTEST_SKIP() << kWrittenForAvx512;
  // Each channel its own filter: c is an output dimension both operands vary along (no broadcast operand).
  const std::string depthwise =
      "def dw(float(N, HI, WI, CH) I, float(3, 3, CH) Wt) -> (C) {\n"
      "  C(n, h, w, c) +=! I(n, h + r, w + s, c) * Wt(r, s, c)\n"
      "    where h in 0:HI - 2, w in 0:WI - 2\n}\n";
  const std::string strided =
      "def dw(float(N, HI, WI, CH) I, float(3, 3, CH) Wt) -> (C) {\n"
      "  C(n, h, w, c) +=! I(n, 2 * h + r, 2 * w + s, c) * Wt(r, s, c)\n"
      "    where h in 0:(HI - 3) / 2 + 1, w in 0:(WI - 3) / 2 + 1\n}\n";
  expectGraftedAndCorrect(sized("N=1 HI=9 WI=13 CH=48", depthwise),
                          withScheme("R_n, R_h, R_c, T_{3,r}, T_{3,s}, U_{11,w}, U_{1,c}, V_c"));
  expectGraftedAndCorrect(sized("N=2 HI=7 WI=9 CH=32", depthwise),
                          withScheme("R_n, R_h, R_w, U_{3,r}, U_{3,s}, U_{2,c}, V_c"));
  expectGraftedAndCorrect(
      sized("N=1 HI=15 WI=11 CH=32", strided),
      withScheme("R_n, R_c, R_h, T_{3,r}, T_{3,s}, lambda_w a.[(1,2),(1,3)], U_{a,w}, V_c"));
  // Scalar, with a channel count that no vector divides.
  expectGraftedAndCorrect(sized("N=1 HI=5 WI=6 CH=7", depthwise), withScheme("R_n, R_h, R_w, R_c, R_r, R_s"));
}

TEST(GraftMicroKernels, Avx2RegisterTilesMatchTheInterpreter) {
  if (!testing::hostHas("avx2")) GTEST_SKIP() << "no AVX2 here";
  driver::CompileOptions o = withScheme("R_m, lambda_n a.[(1,2),(1,1)], R_k, U_{4,m}, U_{a,n}, V_n");
  testing::CheckedProgram r =
      compileAndCheck(sized("M=8 N=24 K=11", kMatmul), o, testing::machineWith("avx2"));
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  EXPECT_NE(r.program.cSource.find("_mm256_fmadd_ps"), std::string::npos);
  EXPECT_EQ(r.program.cSource.find("_mm512_fmadd_ps"), std::string::npos);
}

// The paths of the AVX-512 tests above with schemes sized for AVX2 (8 lanes,
// 16 registers), on any host with AVX2: compositions, convolutions with r
// unrolled, blocked weights, zero padding, depthwise, a fused epilogue.
TEST(GraftMicroKernels, AvxTwoSchemesOfEveryKind) {
  if (!testing::hostHas("avx2")) GTEST_SKIP() << "no AVX2 here";
  const std::string nhwc = kNhwcConv;
  const std::string same =
      "def conv(float(N, H, W, CI) I, float(R, R, CI, K) Wt) -> (C) {\n"
      "  C(n, h, w, k) +=! (h + r - (R - 1) / 2 >= 0 && h + r - (R - 1) / 2 < H &&\n"
      "      w + s - (R - 1) / 2 >= 0 && w + s - (R - 1) / 2 < W\n"
      "      ? I(n, h + r - (R - 1) / 2, w + s - (R - 1) / 2, c) : 0) * Wt(r, s, c, k)\n"
      "    where h in 0:H, w in 0:W\n}\n";
  const std::string depthwise =
      "def dw(float(N, HI, WI, CH) I, float(3, 3, CH) Wt) -> (C) {\n"
      "  C(n, h, w, c) +=! I(n, h + r, w + s, c) * Wt(r, s, c)\n"
      "    where h in 0:HI - 2, w in 0:WI - 2\n}\n";
  const std::string convBiasRelu =
      "def f(float(N, HI, WI, C) I, float(3, 3, C, K) Wt, float(K) B) -> (Y) {\n"
      "  O(n, h, w, k) +=! I(n, h + r, w + s, c) * Wt(r, s, c, k)\n"
      "    where h in 0:HI - 2, w in 0:WI - 2\n"
      "  Y(n, h, w, k) = max(O(n, h, w, k) + B(k), 0)\n}\n";
  for (const auto& [program, sizes, scheme] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {kMatmul, "M=13 N=16 K=7", "lambda_m a.[(1,6),(1,7)], R_n, R_k, U_{a,m}, U_{1,n}, V_n"},
           {kMatmul, "M=26 N=24 K=7", "R_n, lambda_m a.[(2,6),(2,7)], T_{7,k}, U_{a,m}, U_{1,n}, V_n"},
           // h = 17 = 7 x 2 + 3; r unrolled 3 times (rows of h + r shared by two steps stay in registers).
           {nhwc, "N=1 HI=19 WI=9 CI=7 K=16 R=3 S=3",
            "R_n, lambda_h b.[(7,2),(1,3)], R_w, T_{7,c}, T_{3,s}, U_{3,r}, U_{b,h}, U_{2,k}, V_k"},
           {nhwc, "N=1 HI=9 WI=7 CI=5 K=40 R=3 S=3",
            "L_Wt(k/16, r, s, c, k%16), R_n, R_k, R_h, T_{5,c}, T_{3,r}, T_{3,s}, U_{5,w}, V_k"},
           {same, "N=2 H=7 W=13 CI=5 K=16 R=3",
            "R_n, R_k, R_h, lambda_w a.[(1,6),(1,7)], R_r, R_s, R_c, U_{a,w}, V_k"},
           {depthwise, "N=2 HI=7 WI=9 CH=16", "R_n, R_h, R_w, U_{3,r}, U_{3,s}, U_{2,c}, V_c"},
           {convBiasRelu, "N=1 HI=10 WI=7 C=6 K=16",
            "O: R_n, R_h, R_w, T_{6,c}, T_{3,r}, T_{3,s}, U_{5,w}, U_{2,k}, V_k"},
       }) {
    driver::CompileOptions o = withScheme(scheme);
    testing::CheckedProgram r = compileAndCheck(sized(sizes, program), o, testing::machineWith("avx2"));
    EXPECT_TRUE(r.check.pass) << scheme << "\n" << r.check.failures;
    EXPECT_FALSE(grafted(r).value("tensor").empty()) << scheme;
    EXPECT_NE(r.program.cSource.find("_mm256_fmadd_ps"), std::string::npos) << scheme;
  }
}

// GCC unrolls a 3 x 3 window around the register tile completely, then
// interleaves the copies and spills accumulators: the reduction loops inside
// the accumulators' lifetime stay rolled; the scheme's U are its unrolling.
TEST(GraftMicroKernels, ReductionLoopsAroundTheRegisterTileStayRolled) {
  if (!testing::hostHas("avx2")) GTEST_SKIP() << "no AVX2 here";
  const std::string nhwc = kNhwcConv;
  driver::CompileOptions o = withScheme("R_n, R_h, R_w, T_{7,c}, T_{3,r}, T_{3,s}, U_{5,w}, U_{2,k}, V_k");
  testing::CheckedProgram r =
      compileAndCheck(sized("N=1 HI=7 WI=12 CI=7 K=16 R=3 S=3", nhwc), o, testing::machineWith("avx2"));
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  const std::string& c = r.program.cSource;
  for (const char* loop : {"for (long i_c_3 = 0;", "for (long i_r_4 = 0;", "for (long i_s_5 = 0;"}) {
    size_t at = c.find(loop);
    ASSERT_NE(at, std::string::npos) << loop << "\n" << c;
    size_t lineStart = c.rfind('\n', at);
    size_t previousLine = c.rfind('\n', lineStart - 1);
    EXPECT_NE(c.substr(previousLine, lineStart - previousLine).find("#pragma GCC unroll 1"),
              std::string::npos)
        << loop;
  }
  // The loops outside the accumulators' lifetime are left to the C compiler.
  EXPECT_EQ(c.find("#pragma GCC unroll 1\n" + std::string(8, ' ') + "for (long i_h_1"), std::string::npos);
}

TEST(GraftMicroKernels, EpiloguesAreAppliedToEachTileUnderEveryFusion) {
  if (!testing::hostHas("avx512")) GTEST_SKIP() << kWrittenForAvx512;
  const std::string tc = sized("N=1 HI=10 WI=7 C=6 K=32",
                               "def f(float(N, HI, WI, C) I, float(3, 3, C, K) Wt, float(K) B) -> (Y) {\n"
                               "  O(n, h, w, k) +=! I(n, h + r, w + s, c) * Wt(r, s, c, k)\n"
                               "    where h in 0:HI - 2, w in 0:WI - 2\n"
                               "  Y(n, h, w, k) = max(O(n, h, w, k) + B(k), 0)\n}\n");
  for (auto fusion : {driver::Fusion::None, driver::Fusion::Min, driver::Fusion::Smart, driver::Fusion::Max,
                      driver::Fusion::Basteln}) {
    // Fused: O's initialization, the update and Y's statement are the micro-kernel; O is gone.
    driver::CompileOptions o =
        withScheme("O: R_n, R_h, R_w, T_{6,c}, T_{3,r}, T_{3,s}, U_{5,w}, U_{2,k}, V_k");
    o.fusion = fusion;
    o.bastelnRedundancy = 1;
    testing::CheckedProgram r = compileAndCheck(tc, o);
    EXPECT_TRUE(r.check.pass) << driver::fusionName(fusion) << "\n" << r.check.failures;
    EXPECT_NE(r.program.cSource.find("tessel_microkernel_0(Y, I, Wt, B))"), std::string::npos);
    Remark g = grafted(r);
    EXPECT_EQ(g.value("tensor"), "O") << r.program.remarks.text();
    EXPECT_EQ(g.value("epilogue"), "Y");
    EXPECT_EQ(g.value("epilogue_fused"), "true");  // applied to each tile as it leaves the registers
    EXPECT_TRUE(r.program.kernel.temporaries.empty());
    // A reduction loop outside the micro-kernel: the epilogue runs after it, as its own nest.
    o.scheme.text = "O: T_{2,c}, R_n, R_h, R_w, T_{3,c}, T_{3,r}, T_{3,s}, U_{5,w}, U_{2,k}, V_k";
    r = compileAndCheck(tc, o);
    EXPECT_TRUE(r.check.pass) << driver::fusionName(fusion) << "\n" << r.check.failures;
    EXPECT_NE(r.program.cSource.find("tessel_microkernel_0(O, I, Wt))"), std::string::npos);
    g = grafted(r);
    EXPECT_EQ(g.value("epilogue"), "Y") << r.program.remarks.text();
    EXPECT_EQ(g.value("epilogue_fused"), "false");
    EXPECT_TRUE(
        startsWith(g.value("epilogue_reason"), "the reduction loop T_{2,c} runs outside the micro-kernel"))
        << r.program.remarks.text();
    if (fusion == driver::Fusion::Basteln) {
      std::vector<Remark> kept = r.program.remarks.find("basteln", RemarkKind::Missed, "S1");
      EXPECT_TRUE(std::any_of(kept.begin(), kept.end(), [](const Remark& k) {
        return k.value("action") == "not-recomputed";
      })) << r.program.remarks.text();
    }
  }
}

TEST(GraftMicroKernels, MatmulBiasGeluOfAwkwardShapes) {
  if (!testing::hostHas("avx512")) GTEST_SKIP() << kWrittenForAvx512;
  // GELU (tanh form), the bias along the vector dimension, a scale along the rows.
  const std::string tc =
      "def f(float(M, K) A, float(K, N) W, float(N) B, float(M) S) -> (Y) {\n"
      "  C(m, n) +=! A(m, k) * W(k, n)\n"
      "  Y(m, n) = 0.5 * (C(m, n) + B(n)) * (1 + tanh(0.7978845608 * ((C(m, n) + B(n)) + 0.044715 * "
      "(C(m, n) + B(n)) * (C(m, n) + B(n)) * (C(m, n) + B(n))))) * S(m)\n}\n";
  for (const auto& [sizes, scheme] : std::vector<std::pair<std::string, std::string>>{
           {"M=13 N=32 K=7", "C: lambda_m a.[(1,6),(1,7)], R_n, R_k, U_{a,m}, U_{2,n}, V_n"},
           {"M=1 N=16 K=1", "C: R_m, R_n, R_k, V_n"},
           {"M=5 N=3 K=127", "C: R_m, R_n, T_{127,k}, U_{3,n}"}}) {
    testing::CheckedProgram r = compileAndCheck(sized(sizes, tc), withScheme(scheme));
    EXPECT_TRUE(r.check.pass) << scheme << "\n" << r.check.failures;
    EXPECT_EQ(grafted(r).value("epilogue"), "Y") << r.program.remarks.text();
    EXPECT_EQ(grafted(r).value("epilogue_fused"), "true");
    EXPECT_NE(r.program.cSource.find("tessel_microkernel_0(Y, A, W, B, S))"), std::string::npos);
  }
}

TEST(GraftMicroKernels, WhatIsNotAnEpilogue) {
  // Why no epilogue is fused: no statement qualifies as one.
  auto note = [](const std::string& tc) {
    testing::CheckedProgram r =
        compileAndCheck(sized("M=4 N=16 K=3", tc), withScheme("C: R_m, R_n, R_k, V_n"));
    EXPECT_TRUE(r.check.pass) << r.check.failures;
    Remark g = grafted(r);
    EXPECT_FALSE(g.has("epilogue")) << r.program.remarks.text();
    EXPECT_EQ(g.value("epilogue_fused"), "false") << r.program.remarks.text();
    return g.value("epilogue_reason");
  };
  const std::string mm = "  C(m, n) +=! A(m, k) * B(k, n)\n";
  EXPECT_EQ(note("def f(float(M, K) A, float(K, N) B) -> (C, Y) {\n" + mm + "  Y(m, n) = C(m, n) * 2\n}\n"),
            "C is an output of the program");
  EXPECT_EQ(note("def f(float(M, K) A, float(K, N) B) -> (Y, Z) {\n" + mm +
                 "  Y(m, n) = C(m, n) * 2\n  Z(m, n) = C(m, n) + 1\n}\n"),
            "several statements read C");
  EXPECT_EQ(note("def f(float(M, K) A, float(K, N) B) -> (Y) {\n" + mm + "  Y(m, n) = C(m, 15 - n) * 2\n}\n"),
            "Y reads C elsewhere than at its own coordinates");
  EXPECT_EQ(note("def f(float(M, K) A, float(K, N) B) -> (Y) {\n" + mm + "  Y(m) +=! C(m, n)\n}\n"),
            "Y is not an elementwise f32 statement");
  EXPECT_EQ(note("def f(float(M, K) A, float(K, N) B) -> (Y) {\n" + mm +
                 "  D(m, n) = A(m, 0) + B(0, n)\n  Y(m, n) = C(m, n) * D(m, n)\n}\n"),
            "Y also reads D, which the program computes");
}

TEST(GraftMicroKernels, SchemesThatNameTheirContraction) {
  const std::string tc = sized("M=4 N=16 K=3",
                               "def f(float(M, K) A, float(K, N) B, float(N, N) D) -> (E) {\n"
                               "  C(m, n) +=! A(m, k) * B(k, n)\n"
                               "  E(m, j) +=! C(m, n) * D(n, j)\n}\n");
  testing::CheckedProgram r = compileAndCheck(tc, withScheme(" E : R_m, R_j, R_n, V_j"));
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  EXPECT_NE(r.program.cSource.find("tessel_microkernel_0(E, C, D))"), std::string::npos);
  std::string e = errorOf(tc, "R_m, R_n, R_k");
  EXPECT_NE(e.find("--scheme: the program has several contractions (C (line 3), E (line 4)); name one before "
                   "the scheme, as in \"C: R_...\""),
            std::string::npos)
      << e;
  EXPECT_NE(errorOf(tc, "X: R_m").find("--scheme: no statement of the program defines 'X'"),
            std::string::npos);
}

TEST(GraftMicroKernels, ProgramsWithoutAContractionAreRefusedWithTheReasons) {
  std::string e = errorOf(sized("N=8",
                                "def f(float(N) A, float(N, N) B) -> (C, D) {\n"
                                "  C(i) = A(i) * 2\n"
                                "  D(i) +=! B(i, j) + A(j)\n}\n"),
                          "R_i");
  EXPECT_NE(
      e.find("--scheme: a scheme implements a contraction O(...) +=! A(...) * B(...) in f32 with affine "
             "subscripts, and the program has none:\n  C (line 3): it is not an f32 sum reduction\n  D "
             "(line 4): its right-hand side is not a product of two tensor reads"),
      std::string::npos)
      << e;
  // A guard that is more than zero padding (it also drops A(0)).
  e = errorOf(
      sized("N=8 R=3",
            "def f(float(N) A, float(R) W) -> (C) {\n"
            "  C(i) +=! (i + r - 1 >= 1 && i + r - 1 < N ? A(i + r - 1) : 0) * W(r) where i in 0:N\n}\n"),
      "R_i, R_r");
  EXPECT_NE(
      e.find("C (line 3): the guard of A is not exactly the bounds of its subscript #0 (only zero padding "
             "is in the class)"),
      std::string::npos)
      << e;
}

// A scheme the model chose, not the user, that breaks a rule here: the
// compiler's own code runs, and the pass says why; the user's own is an error.
TEST(GraftMicroKernels, TheModelsSchemeThatDoesNotGraftLeavesTheCompilersCode) {
  const std::string tc = sized("M=13 N=7 K=5", kMatmul);
  driver::CompileOptions modelled = withScheme("R_m, R_n, T_{4,k}");
  modelled.scheme.origin = "--scheme auto";
  modelled.scheme.chosenByModel = true;
  testing::CheckedProgram r = compileAndCheck(tc, modelled);
  EXPECT_TRUE(r.check.pass) << r.check.failures;
  EXPECT_TRUE(r.program.microKernelSchemes.empty());
  std::vector<Remark> missed = r.program.remarks.find("graft-microkernel", RemarkKind::Missed, "S1");
  ASSERT_EQ(missed.size(), 1u) << r.explained();
  EXPECT_EQ(missed[0].value("reason"), "bad scheme: the scheme covers 4 along k, whose extent is 5");
  EXPECT_EQ(missed[0].value("scheme"), "R_m, R_n, T_{4,k}");
  EXPECT_NE(errorOf(tc, "R_m, R_n, T_{4,k}").find("the scheme covers 4 along k, whose extent is 5"),
            std::string::npos);
}

}  // namespace
}  // namespace tessel::target::cpu
