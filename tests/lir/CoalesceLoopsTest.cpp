// Loop coalescing: a short vector loop and the loop around it whose accesses
// are contiguous over both (an NCHW tensor's h and w) become one vector loop;
// nests whose reads or values do not allow it keep their loops. Every kernel
// matches the reference interpreter, at sizes that leave partial vectors.
#include <gtest/gtest.h>

#include <algorithm>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "../support/VectorIsa.h"
#include "driver/Compile.h"
#include "lir/CoalesceLoops.h"
#include "support/Remarks.h"

namespace tessel::lir {
namespace {

using testing::hostHas;
using testing::machineWith;

driver::CompiledProgram compileAndCheck(const std::string& tc, const std::string& isa) {
  driver::CompileOptions o;
  o.dumpAfter = "coalesce";
  driver::CompiledProgram cp = testing::compileFor(front::testing::lowerText(tc), o, machineWith(isa));
  testing::KernelCheck k = testing::checkAgainstInterpreter(cp);
  EXPECT_TRUE(k.pass) << isa << "\n" << tc << k.failures;
  return cp;
}

std::string sized(int n, int c, int h, int w) {
  return "# sizes: N=" + std::to_string(n) + " C=" + std::to_string(c) + " H=" + std::to_string(h) +
         " W=" + std::to_string(w) + "\n";
}

// Whether a nest was coalesced into a vector loop of `iterations` iterations.
bool coalescedInto(const driver::CompiledProgram& cp, int iterations) {
  std::vector<Remark> coalesced = cp.remarks.find("coalesce", RemarkKind::Applied);
  return std::any_of(coalesced.begin(), coalesced.end(),
                     [&](const Remark& r) { return r.value("iterations") == std::to_string(iterations); });
}

class CoalesceLoops : public ::testing::TestWithParam<std::string> {};

// basteln's `indep`: two per-channel element-wise outputs of one NCHW tensor.
TEST_P(CoalesceLoops, ShortContiguousRowsBecomeOneVectorLoop) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const char* indep =
      "def f(float(N, C, H, W) X, float(C) Shift, float(C) Scale) -> (A, M) {\n"
      "  A(n, c, h, w) = X(n, c, h, w) + Shift(c)\n"
      "  M(n, c, h, w) = X(n, c, h, w) * Scale(c)\n"
      "}\n";
  for (auto [n, c, h, w] : {std::tuple{2, 3, 7, 7}, {1, 13, 5, 3}, {3, 2, 13, 1}, {1, 1, 1, 7}}) {
    driver::CompiledProgram cp = compileAndCheck(sized(n, c, h, w) + indep, isa);
    if (h > 1 && w > 1) {
      EXPECT_TRUE(coalescedInto(cp, h * w)) << cp.remarks.text();
      EXPECT_NE(cp.dump.find("< " + std::to_string(h * w) + ")"), std::string::npos) << cp.dump;
    }
  }
}

// A temporary contracted to a row buffer (its loop nest holds more than the
// vector loop), a transposed read and a value that uses a loop variable keep
// their loops.
TEST_P(CoalesceLoops, NestsThatDoNotAllowItKeepTheirLoops) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  driver::CompiledProgram chain = compileAndCheck(
      sized(1, 3, 5, 5) +
          "def f(float(C, H, W) X) -> (B) {\n  T(c, h, w) = X(c, h, w) * 2\n  B(c, h, w) = T(c, h, w) + "
          "X(c, h, w)\n}\n",
      isa);
  EXPECT_TRUE(chain.remarks.find("coalesce", RemarkKind::Applied).empty()) << chain.remarks.text();
  driver::CompiledProgram transposed = compileAndCheck(
      sized(1, 3, 5, 5) +
          "def f(float(C, H, W) X) -> (B) {\n  B(c, h, w) = X(c, w, h) where h in 0:H, w in 0:W\n}\n",
      isa);
  EXPECT_TRUE(transposed.remarks.find("coalesce", RemarkKind::Applied).empty()) << transposed.remarks.text();
  driver::CompiledProgram indexed = compileAndCheck(
      sized(1, 3, 5, 5) + "def f(float(C, H, W) X) -> (B) {\n  B(c, h, w) = h > 2 ? X(c, h, w) : 0\n}\n",
      isa);
  EXPECT_TRUE(indexed.remarks.find("coalesce", RemarkKind::Applied).empty()) << indexed.remarks.text();
}

INSTANTIATE_TEST_SUITE_P(Isa, CoalesceLoops, ::testing::Values("avx512", "avx2"));

// A[o + i] = A[2] * 2 over o in 0..6 and a one-iteration vector loop i:
// the fixed element A[2] is written at o = 2 and read by the later rows, so
// running the rows as lanes of one vector would read its old value. An
// indirect read (an index loaded from memory) is refused too.
TEST(CoalesceLoopsLir, ReadsOfAWrittenBufferAtAFixedElementAreADependence) {
  using te::BinaryOp;
  using te::DType;
  auto nest = [](Expr value) {
    Stmt body = store("A", indexBinary(BinaryOp::Add, indexVar("o"), indexVar("i")), value);
    Stmt inner = forLoop("i", indexImm(0), indexBinary(BinaryOp::Le, indexVar("i"), indexImm(0)), indexImm(1),
                         block({body}), false, VectorHint::Independent);
    Kernel k;
    k.name = "f";
    k.outputs = {{"A", DType::F32, {8}}};
    k.inputs = {{"J", DType::I32, {8}}};
    k.body = forLoop("o", indexImm(0), indexBinary(BinaryOp::Le, indexVar("o"), indexImm(6)), indexImm(1),
                     block({inner}), false);
    return k;
  };
  Expr fixedRead = binary(BinaryOp::Mul, DType::F32, load("A", DType::F32, indexImm(2)), imm(2, DType::F32));
  Remarks fixed;
  coalesceLoops(nest(fixedRead), 8, fixed);
  std::vector<Remark> kept = fixed.find("", RemarkKind::Missed, "o i");
  ASSERT_EQ(kept.size(), 1u) << fixed.text();
  EXPECT_EQ(kept[0].value("reason"), "'A' is accessed at another element than the one written")
      << fixed.text();
  Expr indirectRead = load("A", DType::F32, load("J", DType::I32, indexVar("o")));
  Remarks indirect;
  coalesceLoops(nest(indirectRead), 8, indirect);
  kept = indirect.find("", RemarkKind::Missed, "o i");
  ASSERT_EQ(kept.size(), 1u) << indirect.text();
  EXPECT_EQ(kept[0].value("reason"), "a read of 'A' is not contiguous over both loops") << indirect.text();
  // The same nest copying J's elements row by row coalesces.
  Kernel plain = nest(load("J", DType::I32, indexBinary(BinaryOp::Add, indexVar("o"), indexVar("i"))));
  Remarks copied;
  coalesceLoops(plain, 8, copied);
  std::vector<Remark> coalesced = copied.find("", RemarkKind::Applied, "o i");
  ASSERT_EQ(coalesced.size(), 1u) << copied.text();
  EXPECT_EQ(coalesced[0].value("loop"), "o_i") << copied.text();
  EXPECT_EQ(coalesced[0].value("iterations"), "7") << copied.text();
}

}  // namespace
}  // namespace tessel::lir
