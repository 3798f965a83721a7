// fuse-outer runs consecutive nests in one parallel loop when their
// dependences stay within its iterations, and contraction then keeps the
// temporaries of one iteration in small local buffers. Every kernel is
// checked against the interpreter on two threads at awkward shapes.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/RowPrograms.h"
#include "driver/Compile.h"
#include "schedule/MarkParallel.h"
#include "target/DetectHost.h"
#include "tile/TilePolicy.h"

namespace tessel::fuse {
namespace {

using Compiled = testing::CheckedProgram;
using testing::compileAndCheck;

std::string sizes(int n, int d) { return testing::rowSizes(n, d); }

// The groups these tests name are made on smart fusion's schedule (basteln,
// the default, first groups nests by its own rule).
driver::CompileOptions smart() {
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Smart;
  return o;
}
const char* const kSoftmax = testing::kRowSoftmax;
const char* const kLayernorm = testing::kRowLayernorm;

// fuse-outer's remarks, one per group of nests.
std::vector<Remark> groups(const Compiled& c) {
  return c.program.remarks.find("fuse-outer", RemarkKind::Applied);
}

// The group whose nests are `nests` ("S0 S1 ; S2"), if one formed.
std::optional<Remark> group(const Compiled& c, const std::string& nests) {
  for (const Remark& r : groups(c))
    if (r.value("nests") == nests) return r;
  return std::nullopt;
}

// Whether the contract pass made a `buffer` of `tensor` (of `shape`).
bool contracted(const Compiled& c, const std::string& tensor, const std::string& shape,
                const std::string& buffer) {
  for (const Remark& r : c.program.remarks.find("contract", RemarkKind::Applied, tensor))
    if (r.value("shape") == shape && r.value("buffer") == buffer) return true;
  return false;
}

TEST(FuseOuterLoops, SoftmaxRunsOneParallelLoopOverTheRows) {
  for (auto [n, d] : {std::pair{1, 1}, {7, 13}, {13, 127}, {127, 7}, {3, 1031}, {61, 2053}}) {
    for (bool tiled : {true, false}) {
      driver::CompileOptions o = smart();
      o.autoTiling = tiled;
      Compiled c = compileAndCheck(sizes(n, d) + kSoftmax, o);
      EXPECT_TRUE(c.check.pass) << n << "x" << d << "\n" << c.check.failures;
      if (n == 1 && d == 1) continue;  // one instance per statement: no loops at all
      EXPECT_TRUE(group(c, "S0 S1 ; S2 ; S3 S4 ; S5")) << c.explained();
      // All three temporaries live in per-row buffers: the kernel allocates no array.
      EXPECT_TRUE(c.program.kernel.temporaries.empty()) << c.explained();
      EXPECT_EQ(c.program.kernel.locals.size(), 3u);
      // Serial when there is too little work to share among threads (schedule/MarkParallel.h).
      bool serial = c.program.kernel.work < schedule::kMinParallelWork && target::detectHost().cores > 1;
      EXPECT_EQ(c.program.astC.find("parallel") == std::string::npos, serial) << c.program.kernel.work;
    }
  }
}

TEST(FuseOuterLoops, LayernormKeepsOneRowInCache) {
  for (auto [n, d] : {std::pair{2, 17}, {13, 64}, {5, 257}}) {
    Compiled c = compileAndCheck(sizes(n, d) + kLayernorm);
    EXPECT_TRUE(c.check.pass) << n << "x" << d << "\n" << c.check.failures;
    EXPECT_FALSE(groups(c).empty()) << c.explained();
    EXPECT_TRUE(contracted(c, "xc", std::to_string(n) + "x" + std::to_string(d), "1x" + std::to_string(d)))
        << c.explained();
    EXPECT_TRUE(c.program.kernel.temporaries.empty());
  }
}

TEST(FuseOuterLoops, MinimalFusionKeepsTheNestsAndArrays) {
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Min;
  Compiled c = compileAndCheck(sizes(13, 29) + kSoftmax, o);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_TRUE(c.program.remarks.find("fuse-outer").empty()) << c.explained();
  EXPECT_EQ(c.program.kernel.temporaries.size(), 3u);
  EXPECT_FALSE(c.program.remarks.find("contract", RemarkKind::Missed, "e").empty()) << c.explained();
}

// The second nest reads the row sums in reverse: its iteration n needs row
// N-1-n, so the nests cannot share the loop and t stays a full array.
TEST(FuseOuterLoops, CrossIterationDependenceStopsTheGroup) {
  Compiled c = compileAndCheck(
      sizes(11, 37) + "def f(float(N,D) X) -> (Y) {\n  t(n) +=! X(n,d)\n  Y(n,d) = X(n,d) / t(N-1-n)\n}\n");
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_TRUE(c.program.remarks.find("fuse-outer").empty()) << c.explained();
  EXPECT_EQ(c.program.kernel.temporaries.size(), 1u);
}

// A nest after a group it does not depend on joins only to reuse what the
// group reads in the same iteration (here the scheduler puts them under a
// set node: independent nests).
TEST(FuseOuterLoops, IndependentNestsJoinOnlyForSharedReads) {
  const std::string shared =
      sizes(9, 41) +
      "def f(float(N,D) X) -> (Y, Z) {\n  m(n) max=! X(n,d)\n  Y(n,d) = X(n,d) - m(n)\n"
      "  Z(n) +=! X(n,d) * X(n,d)\n}\n";
  Compiled c = compileAndCheck(shared, smart());
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_TRUE(group(c, "S2 S0 S1 ; S3 S4")) << c.explained();
  const std::string apart = sizes(9, 41) +
                            "def f(float(N,D) X, float(D,N) W) -> (Y, Z) {\n  m(n) max=! X(n,d)\n"
                            "  Y(n,d) = X(n,d) - m(n)\n  Z(n) +=! W(d,n) * 2\n}\n";
  Compiled d = compileAndCheck(apart, smart());
  EXPECT_TRUE(d.check.pass) << d.check.failures;
  std::optional<Remark> first = group(d, "S0 S1 ; S2");
  ASSERT_TRUE(first) << d.explained();
  EXPECT_EQ(first->value("band_members"), "0 0") << d.explained();
  // (S3 S4, Z's nest, joins no group.)
  for (const Remark& r : groups(d))
    EXPECT_EQ(r.value("nests").find("; S3 S4"), std::string::npos) << d.explained();
}

// The transpose's band runs d outside n; its n member moves out to join
// the row loop of the sum that the division needs.
TEST(FuseOuterLoops, AnotherMemberOfAPermutableBandCanBeTheSharedLoop) {
  Compiled c = compileAndCheck(sizes(9, 41) +
                                   "def f(float(N,D) X) -> (Y) {\n  s(n) +=! X(n,d)\n  T(d,n) = X(n,d) * 2\n"
                                   "  Y(n,d) = T(d,n) / s(n)\n}\n",
                               smart());
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  std::optional<Remark> fused = group(c, "S0 S1 ; S2 S3");
  ASSERT_TRUE(fused) << c.explained();
  EXPECT_EQ(fused->value("band_members"), "0 1") << c.explained();
}

// basteln's independent groups (paper 001 §5.4, batch norm's two branches):
// two outputs computed from the same tensor with per-channel vectors, which
// every batch entry reads again. Vectors that small stay cached in any loop
// order, so they do not hold the nests apart, and X is read once.
TEST(FuseOuterLoops, IndependentBranchesOverOneTensorShareTheLoop) {
  for (const char* shape : {"# sizes: N=3 C=13 H=7 W=1\n", "# sizes: N=2 C=7 H=1 W=13\n"}) {
    Compiled c =
        compileAndCheck(std::string(shape) +
                        "def f(float(N,C,H,W) X, float(C) Shift, float(C) Scale) -> (A, M) {\n"
                        "  A(n,c,h,w) = X(n,c,h,w) + Shift(c)\n  M(n,c,h,w) = X(n,c,h,w) * Scale(c)\n}\n");
    EXPECT_TRUE(c.check.pass) << c.check.failures;
    EXPECT_TRUE(group(c, "S0 ; S1")) << c.explained();
  }
}

// A matmul's band keeps its rows: hoisting i would stream all of B per row.
TEST(FuseOuterLoops, MatmulBandIsNotSplit) {
  Compiled c = compileAndCheck(
      "# sizes: M=24 N=40 K=17\ndef f(float(M,K) A, float(K,N) B) -> (Y) {\n  C(m,n) +=! A(m,k) * B(k,n)\n"
      "  mx(m) max=! C(m,n)\n  Y(m,n) = C(m,n) - mx(m)\n}\n");
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  // (No group starts with the matmul's nest, S0 S1, and goes on.)
  for (const Remark& r : groups(c)) EXPECT_NE(r.value("nests").rfind("S0 S1 ", 0), 0u) << c.explained();
}

TEST(FuseOuterLoops, DumpAfterShowsTheSharedBand) {
  driver::CompileOptions o;
  o.dumpAfter = "fuse-outer";
  driver::CompiledProgram cp = testing::compileFor(front::testing::lowerText(sizes(8, 16) + kSoftmax), o);
  // One band over every statement right under the domain, the nests in sequence below it.
  EXPECT_NE(cp.dump.find("child:\n  schedule: \"[{ S"), std::string::npos) << cp.dump;
  EXPECT_NE(cp.dump.find("sequence"), std::string::npos) << cp.dump;
}

}  // namespace
}  // namespace tessel::fuse
