// Transposes through registers: a vector loop whose read is contiguous along
// the loop above it (marked transpose_block) runs that loop in blocks of the
// lane count, loads the read's blocks as rows and transposes them with
// shuffles. Layout changes (2-D, NCHW -> NHWC with scale and bias, NCHW ->
// NCHWc16, BERT's key transpose, mixed-layout elementwise) on AVX-512 and
// AVX2, with and without tiling, at sizes that leave partial blocks in both
// directions, each checked against the reference interpreter.
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

struct LayoutCase {
  const char* name;
  const char* tc;
  // '# sizes:' lines to try, and whether a transpose is left (a size of 1
  // leaves one loop, and the read is then plain or a broadcast).
  std::vector<std::pair<std::string, bool>> sizes;
};

const LayoutCase kCases[] = {
    {"transpose",
     "def f(float(M,N) I) -> (O) {\n  O(n,m) = I(m,n)\n}\n",
     {{"M=1 N=37", false},
      {"M=17 N=1", false},
      {"M=13 N=7", true},
      {"M=16 N=16", true},
      {"M=127 N=131", true},
      {"M=64 N=200", true}}},
    {"nchw_to_nhwc_scale_bias",
     "def f(float(N,C,H,W) I, float(C) S, float(C) B) -> (O) {\n  O(n,h,w,c) = I(n,c,h,w) * S(c) + B(c)\n}\n",
     {{"N=1 C=3 H=5 W=7", true}, {"N=2 C=19 H=3 W=13", true}, {"N=1 C=64 H=7 W=7", true}}},
    {"nchw_to_nchwc16",
     "def f(float(N,C,H,W) I) -> (O) {\n  O(n,b,h,w,c) = I(n,16*b+c,h,w) where b in 0:C/16, c in 0:16\n}\n",
     {{"N=1 C=16 H=1 W=1", false}, {"N=2 C=32 H=5 W=7", true}, {"N=1 C=48 H=13 W=3", true}}},
    {"bert_key_transpose",
     "def f(float(B,S,E) X) -> (K) {\n  K(b,h,d,s) = X(b,s,64*h+d) where h in 0:E/64, d in 0:64\n}\n",
     {{"B=1 S=7 E=64", true}, {"B=2 S=33 E=128", true}}},
    {"mixed_layout_elementwise",
     "def f(float(M,N) A, float(N,M) Bt, float(N) c) -> (O) {\n  O(m,n) = fmax(A(m,n) + 2 * Bt(n,m) - c(n), "
     "0)\n}\n",
     {{"M=13 N=29", true}, {"M=1 N=16", false}, {"M=40 N=3", true}, {"M=100 N=67", true}}},
};

struct Compiled {
  driver::CompiledProgram cp;
  testing::KernelCheck check;
};

Compiled compileAndCheck(const std::string& tc, const std::string& isa, bool tiling) {
  driver::CompileOptions o;
  o.autoTiling = tiling;
  Compiled c;
  c.cp = testing::compileFor(front::testing::lowerText(tc), o, machineWith(isa));
  c.check = testing::checkAgainstInterpreter(c.cp);
  return c;
}

// Whether the vectorizer ran a loop in blocks, its reads transposed in registers.
bool transposedInRegisters(const driver::CompiledProgram& cp) {
  for (const Remark& r : cp.remarks.find("vectorize", RemarkKind::Applied))
    if (r.has("transpose")) return true;
  return false;
}

// Whether the vectorizer refused to run a loop in transpose blocks for `reason`.
bool refusedBlocks(const driver::CompiledProgram& cp, const std::string& reason) {
  for (const Remark& r : cp.remarks.find("vectorize", RemarkKind::Missed))
    if (r.has("vector_loop") && r.value("reason") == reason) return true;
  return false;
}

class TransposeBlock : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(TransposeBlock, MatchesTheInterpreter) {
  auto [index, isa] = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const LayoutCase& lc = kCases[index];
  for (const auto& [sizes, transposes] : lc.sizes) {
    for (bool tiling : {true, false}) {
      Compiled c = compileAndCheck("# sizes: " + sizes + "\n" + lc.tc, isa, tiling);
      std::string where = std::string(lc.name) + " " + sizes + (tiling ? " tiled" : " untiled");
      EXPECT_TRUE(c.check.pass) << where << "\n" << c.check.failures << c.cp.cSource;
      EXPECT_EQ(transposedInRegisters(c.cp), transposes) << where << "\n" << c.cp.remarks.text();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, TransposeBlock,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kCases))),
                                            ::testing::Values("avx512", "avx2")),
                         [](const auto& info) {
                           return std::string(kCases[std::get<0>(info.param)].name) + "_" +
                                  std::get<1>(info.param);
                         });

// A read strided along the vector loop and by 2 along the loop above it
// (every other column, transposed) stays scalar.
TEST(TransposeBlock, NotWhereNoLoopMakesTheReadContiguous) {
  Compiled c = compileAndCheck(
      "# sizes: M=9 K=40\ndef f(float(M,K) I) -> (O) {\n  O(n,m) = I(m, 2 * n) where n in 0:K/2\n}\n",
      "avx512", false);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_FALSE(transposedInRegisters(c.cp)) << c.cp.remarks.text();
}

// A read under a guard may lie outside its tensor where the guard is false
// (here I(m, -1)); a block's rows are loaded whatever each element's branch,
// so a guarded read is never transposed.
TEST(TransposeBlock, NotUnderAGuard) {
  // The first is marked for transposes (its one read of I is contiguous along n) and the
  // vectorizer says why it refuses; the second's two reads of I make no single access to mark.
  const std::pair<const char*, bool> cases[] = {
      {"O(n,m) = n >= 1 ? I(m, n - 1) : 0 where n in 0:N", true},
      {"O(n,m) = fmax(n >= 1 ? I(m, n - 1) : 0, I(m, n)) where n in 0:N", false}};
  for (const auto& [body, marked] : cases) {
    Compiled c =
        compileAndCheck(std::string("# sizes: M=37 N=21\ndef f(float(M,N) I) -> (O) {\n  ") + body + "\n}\n",
                        "avx512", false);
    EXPECT_TRUE(c.check.pass) << body << "\n" << c.check.failures;
    EXPECT_FALSE(transposedInRegisters(c.cp)) << body << "\n" << c.cp.remarks.text();
    EXPECT_EQ(refusedBlocks(c.cp, "a read to transpose is under a condition"), marked) << body << "\n"
                                                                                       << c.cp.remarks.text();
  }
}

}  // namespace
}  // namespace tessel::lir
