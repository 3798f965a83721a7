// Contraction: a temporary whose values live within one iteration of a loop
// nest becomes a per-iteration local buffer (no array, no clearing, no
// memory traffic); where that does not hold, or the generated code splits
// the site apart, the array stays. Every kernel is checked against the
// interpreter on two threads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../front/FrontTestUtil.h"
#include "../support/RowPrograms.h"
#include "driver/Compile.h"
#include "tile/TilePolicy.h"

namespace tessel::target::cpu {
namespace {

using Compiled = testing::CheckedProgram;
using testing::compileAndCheck;

std::string sizes(int n, int d) { return testing::rowSizes(n, d); }

// The contract pass's remarks of `kind` about temporary `tensor`.
std::vector<Remark> contraction(const Compiled& c, RemarkKind kind, const std::string& tensor) {
  return c.program.remarks.find("contract", kind, tensor);
}

const char* const kSoftmax = testing::kRowSoftmax;
const char* const kLayernorm = testing::kRowLayernorm;

// Softmax's three temporaries share one site under the row loop.
TEST(ContractTemporaries, SoftmaxTemporariesBecomeRowBuffers) {
  for (auto [n, d] : {std::pair{2, 17}, {13, 127}, {3, 33}}) {
    Compiled c = compileAndCheck(sizes(n, d) + kSoftmax);
    EXPECT_TRUE(c.check.pass) << n << "x" << d << "\n" << c.check.failures;
    auto e = contraction(c, RemarkKind::Applied, "e");
    ASSERT_EQ(e.size(), 1u) << n << "x" << d << "\n" << c.program.remarks.text();
    EXPECT_EQ(e[0].value("shape"), std::to_string(n) + "x" + std::to_string(d));
    EXPECT_EQ(e[0].value("buffer"), "1x" + std::to_string(d));
    EXPECT_TRUE(c.program.kernel.temporaries.empty());
    EXPECT_EQ(c.program.kernel.locals.size(), 3u);
  }
}

// The second statement reads the row backwards: values cross iterations of
// the inner loop but not of the row loop, so the buffer is a row.
TEST(ContractTemporaries, ReversedReadsKeepTheWholeRow) {
  Compiled c = compileAndCheck(sizes(5, 37) +
                               "def f(float(N,D) X) -> (Y) {\n  t(n,d) = X(n,d) * 2\n"
                               "  Y(n,d) = t(n, D - 1 - d) + X(n,d)\n}\n");
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  auto t = contraction(c, RemarkKind::Applied, "t");
  ASSERT_EQ(t.size(), 1u) << c.program.remarks.text();
  EXPECT_EQ(t[0].value("shape"), "5x37");
  EXPECT_EQ(t[0].value("buffer"), "1x37");
  EXPECT_TRUE(c.program.kernel.temporaries.empty());
}

// A row of 70000 floats (273 KiB) passes the stack budget of a site. (t is
// neither inlined nor recomputed in tiles of Y, as it would be on a host
// whose private caches are smaller than its 547 KiB.)
TEST(ContractTemporaries, BuffersPastTheBudgetStayArrays) {
  driver::CompileOptions o;
  o.recomputeCheap = false;
  o.fusion = driver::Fusion::Smart;
  Compiled c = compileAndCheck(sizes(2, 70000) +
                                   "def f(float(N,D) X) -> (Y) {\n  t(n,d) = X(n,d) * 2\n"
                                   "  Y(n,d) = t(n, D - 1 - d) + X(n,d)\n}\n",
                               o);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  auto t = contraction(c, RemarkKind::Missed, "t");
  ASSERT_EQ(t.size(), 1u) << c.program.remarks.text();
  EXPECT_FALSE(t[0].value("reason").empty()) << c.program.remarks.text();
  EXPECT_TRUE(contraction(c, RemarkKind::Applied, "t").empty()) << c.program.remarks.text();
  EXPECT_EQ(c.program.kernel.temporaries.size(), 1u);
}

// Tiles of 4 then 3 rows over 13 rows leave one-row tiles, where isl
// generates each statement of the site apart: a temporary written in one
// piece and read in another keeps its array there (and stays right).
TEST(ContractTemporaries, SplitSitesFallBackToTheArray) {
  driver::CompileOptions o;
  o.autoTiling = false;
  o.tiles = tile::parseTilePolicy("*: 4@L2/3@L1", "test");
  for (const char* program : {kSoftmax, kLayernorm}) {
    Compiled c = compileAndCheck(sizes(13, 127) + program, o);
    EXPECT_TRUE(c.check.pass) << c.check.failures;
    EXPECT_FALSE(c.program.kernel.temporaries.empty()) << c.program.astC;
    EXPECT_FALSE(c.program.kernel.locals.empty());
  }
}

// A temporary first accumulated without '!' starts from zeros, which a fresh
// local buffer would not hold: it keeps its array.
TEST(ContractTemporaries, TemporaryReadBeforeAnyWriteStaysAnArray) {
  Compiled c = compileAndCheck(
      sizes(7, 19) + "def f(float(N,D) X) -> (Y) {\n  t(n) += X(n,d)\n  Y(n,d) = X(n,d) - t(n)\n}\n");
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  auto t = contraction(c, RemarkKind::Missed, "t");
  ASSERT_EQ(t.size(), 1u) << c.program.remarks.text();
  EXPECT_EQ(t[0].value("reason"), "some read sees the array's initial zeros");
  EXPECT_EQ(c.program.kernel.temporaries.size(), 1u);
}

// A temporary read through a data-dependent index cannot be redirected.
// A 2x upsampling reads its temporary through quotients (e / 2), whose
// relations are exact: the row still becomes a buffer.
TEST(ContractTemporaries, UpsampledReadsKeepARowBuffer) {
  for (int d : {2, 13, 37}) {
    Compiled c = compileAndCheck(sizes(5, d) +
                                 "def f(float(N,D) X) -> (Y) {\n  t(n,d) = X(n,d) * 2\n"
                                 "  Y(n,e) = t(n, e / 2) + t(n, (e + 1) / 2) where e in 0:2 * D - 1\n}\n");
    EXPECT_TRUE(c.check.pass) << d << "\n" << c.check.failures;
    auto t = contraction(c, RemarkKind::Applied, "t");
    ASSERT_EQ(t.size(), 1u) << d << "\n" << c.program.remarks.text();
    EXPECT_EQ(t[0].value("shape"), "5x" + std::to_string(d));
    EXPECT_EQ(t[0].value("buffer"), "1x" + std::to_string(d));
    EXPECT_TRUE(c.program.kernel.temporaries.empty());
  }
}

TEST(ContractTemporaries, IndirectlyReadTemporaryStaysAnArray) {
  Compiled c = compileAndCheck(
      "# sizes: N=6 D=10\ndef f(float(N,D) X, int32(N) P) -> (Y) {\n  t(n,d) = X(n,d) * 2\n"
      "  Y(n,d) = t(n, (P(n) % D + D) % D) where d in 0:D\n}\n");
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  auto t = contraction(c, RemarkKind::Missed, "t");
  ASSERT_EQ(t.size(), 1u) << c.program.remarks.text();
  EXPECT_EQ(t[0].value("reason"), "a read's index is data-dependent or not proven in range");
}

}  // namespace
}  // namespace tessel::target::cpu
