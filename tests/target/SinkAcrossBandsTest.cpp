// sink-across-bands moves an output dimension below the reduction loops the
// scheduler left innermost (a convolution's channels, a short window), only
// when it makes unit-stride vectors, and the kernels stay right.
#include <gtest/gtest.h>

#include <string>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "driver/Compile.h"

namespace tessel::target::cpu {
namespace {

struct Checked {
  Remarks remarks;
  bool pass = true;
  std::string failures;
};

Checked compileAndCheck(const std::string& tc, bool autoTiling) {
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Smart;  // the decisions below are on smart fusion's bands
  o.scheme.text = "none";            // the compiler's own code, not a micro-kernel (scheme auto)
  o.autoTiling = autoTiling;
  driver::CompiledProgram cp = testing::compileFor(front::testing::lowerText(tc), o);
  testing::KernelCheck k = testing::checkAgainstInterpreter(cp);
  return {cp.remarks, k.pass, k.failures};
}

// Whether sink-across-bands moved a member below the bands under it.
bool moved(const Checked& c) { return !c.remarks.find("sink-across-bands", RemarkKind::Applied).empty(); }

// Whether the vectorizer left a loop scalar because a read is strided (its
// other misses, loops not run in transpose blocks, name their vector loop).
bool stridedReadLeftScalar(const Checked& c) {
  for (const Remark& r : c.remarks.find("vectorize", RemarkKind::Missed))
    if (r.value("reason").rfind("a read is strided", 0) == 0 && !r.has("vector_loop")) return true;
  return false;
}

// Whether mark-unroll-jam made `member` the last of a band, for unrolling.
bool madeLastForUnrolling(const Checked& c, int member) {
  for (const Remark& r : c.remarks.find("mark-unroll-jam", RemarkKind::Applied))
    if (r.value("action") == "made-last" && r.value("member") == std::to_string(member)) return true;
  return false;
}

const char* const kConv =
    "def f(float(N,C,H,W) I, float(K,C,3,3) Wt) -> (O) {\n"
    "  O(n,k,h,w) +=! (h+kh-1 >= 0 && h+kh-1 < H && w+kw-1 >= 0 && w+kw-1 < W\n"
    "      ? I(n,c,h+kh-1,w+kw-1) : 0) * Wt(k,c,kh,kw)\n"
    "    where n in 0:N, h in 0:H, w in 0:W\n}\n";
const char* const kDepthwise =
    "def f(float(N,C,H,W) I, float(C,KH,KW) Wt) -> (O) {\n  O(n,c,h,w) +=! I(n,c,h+kh,w+kw) * "
    "Wt(c,kh,kw)\n}\n";

TEST(SinkAcrossBands, ConvolutionVectorizesAlongTheOutputRow) {
  for (bool tiled : {true, false}) {
    for (auto [c, h, w, k] : {std::tuple{3, 13, 17, 5}, {16, 7, 33, 8}, {1, 1, 127, 1}}) {
      std::string sizes = "# sizes: N=1 C=" + std::to_string(c) + " H=" + std::to_string(h) +
                          " W=" + std::to_string(w) + " K=" + std::to_string(k) + "\n";
      Checked r = compileAndCheck(sizes + kConv, tiled);
      EXPECT_TRUE(r.pass) << sizes << r.failures;
      // With one output row and channel, w is the band's only parallel loop: it stays outside.
      if (h == 1 && k == 1) {
        EXPECT_FALSE(moved(r)) << sizes << r.remarks.text();
        continue;
      }
      EXPECT_TRUE(moved(r)) << sizes << r.remarks.text();
      EXPECT_FALSE(stridedReadLeftScalar(r)) << r.remarks.text();
      // The output channel k, which no vector read moves with, becomes the
      // last member of the (k, h, kh) band, to be unrolled and jammed.
      if (k > 1) {
        EXPECT_TRUE(madeLastForUnrolling(r, 0)) << r.remarks.text();
      }
    }
  }
}

TEST(SinkAcrossBands, DepthwiseWindowLeavesTheInnermostPosition) {
  Checked r = compileAndCheck("# sizes: N=2 C=5 H=11 W=23 KH=3 KW=2\n" + std::string(kDepthwise), true);
  EXPECT_TRUE(r.pass) << r.failures;
  EXPECT_TRUE(moved(r)) << r.remarks.text();
  // A row shorter than a vector makes partial vectors: still better than a
  // window loop of 2 or 3 iterations innermost (2.2x at W=9, 3x3 windows).
  Checked narrow = compileAndCheck("# sizes: N=2 C=5 H=11 W=9 KH=3 KW=2\n" + std::string(kDepthwise), true);
  EXPECT_TRUE(narrow.pass) << narrow.failures;
  EXPECT_TRUE(moved(narrow)) << narrow.remarks.text();
}

// Moving the row index of a row reduction below the reduction would stride
// through the rows: it stays.
TEST(SinkAcrossBands, RowReductionsAndMatmulStay) {
  Checked softmax = compileAndCheck(
      "# sizes: N=64 D=100\ndef f(float(N,D) X) -> (Y) {\n  mx(n) max=! X(n,d)\n  e(n,d) = exp(X(n,d) - "
      "mx(n))\n"
      "  s(n) +=! e(n,d)\n  Y(n,d) = e(n,d) / s(n)\n}\n",
      true);
  EXPECT_TRUE(softmax.pass) << softmax.failures;
  EXPECT_FALSE(moved(softmax)) << softmax.remarks.text();
  Checked matmul = compileAndCheck(
      "# sizes: M=40 N=50 K=60\ndef f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * "
      "B(k,n)\n}\n",
      true);
  EXPECT_TRUE(matmul.pass) << matmul.failures;
  EXPECT_FALSE(moved(matmul)) << matmul.remarks.text();
}

}  // namespace
}  // namespace tessel::target::cpu
