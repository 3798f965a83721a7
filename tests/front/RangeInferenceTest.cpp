// te::inferRangesAndCheck on programs built directly (no TC text): the
// inference rules and checks every front end relies on.
#include <gtest/gtest.h>

#include "te/RangeInference.h"
#include "tessel/te.h"

namespace tessel::te {
namespace {

TensorDecl tensor(const std::string& name, TensorRole role, std::vector<int64_t> shape = {},
                  bool known = true) {
  TensorDecl t;
  t.name = name;
  t.role = role;
  t.dtype = DType::F32;
  t.shape = std::move(shape);
  t.shapeKnown = known;
  return t;
}

TensorDecl input(const std::string& n, std::vector<int64_t> shape) {
  return tensor(n, TensorRole::Input, shape);
}
TensorDecl output(const std::string& n) { return tensor(n, TensorRole::Output, {}, false); }

Expr v(const std::string& n) { return var(n); }
Expr c(int64_t x) { return constant(static_cast<double>(x), DType::I32); }
Expr read(const std::string& t, std::vector<Expr> idx) { return access(t, DType::F32, std::move(idx)); }
Expr add(Expr a, Expr b) { return binary(BinaryOp::Add, a, b); }
Expr mul(Expr a, Expr b) { return binary(BinaryOp::Mul, a, b); }
Expr sub(Expr a, Expr b) { return binary(BinaryOp::Sub, a, b); }

Stage stage(const std::string& out, std::vector<std::string> idx, Expr rhs, Reduction r = Reduction::None,
            bool init = false) {
  Stage s;
  s.output = out;
  s.indices = std::move(idx);
  s.rhs = std::move(rhs);
  s.reduction = r;
  s.init = init;
  return s;
}

std::string ranges(const Stage& s) {
  std::string out;
  for (const auto& [n, r] : s.ranges)
    out += n + "=" + std::to_string(r.lo) + ":" + std::to_string(r.hi) + " ";
  return out;
}

std::string errorOf(Program p) {
  try {
    inferRangesAndCheck(p);
  } catch (const UserError& e) {
    return e.reason();
  }
  return "";
}

TEST(RangeInference, ConvolutionResolvesInRounds) {
  // O(i) += I(i + k) * K(k): k from K in round 1, then i from I in round 2.
  Program p;
  p.tensors = {input("I", {10}), input("K", {3}), output("O")};
  p.stages = {
      stage("O", {"i"}, mul(read("I", {add(v("i"), v("k"))}), read("K", {v("k")})), Reduction::Sum, true)};
  inferRangesAndCheck(p);
  EXPECT_EQ(ranges(p.stages[0]), "i=0:8 k=0:3 ");
  EXPECT_EQ(p.stages[0].reductionVars, (std::vector<std::string>{"k"}));
  EXPECT_EQ(p.tensor("O").shape, (std::vector<int64_t>{8}));
}

TEST(RangeInference, StridesAndOffsetsIntersect) {
  // A(i) = B(2i) + B(2i + 1), |B| = 9: 0:5 and 0:4 intersect to 0:4 (TC docs).
  Program p;
  p.tensors = {input("B", {9}), output("A")};
  p.stages = {
      stage("A", {"i"}, add(read("B", {mul(c(2), v("i"))}), read("B", {add(mul(c(2), v("i")), c(1))})))};
  inferRangesAndCheck(p);
  EXPECT_EQ(ranges(p.stages[0]), "i=0:4 ");
}

TEST(RangeInference, NegativeCoefficientWithKnownVariable) {
  // O(i) += A(9 - 2i - k), k in 0:3, |A| = 10: 0 <= 9-2i-k <= 9 for all k -> i in 0:4.
  Program p;
  p.tensors = {input("A", {10}), output("O")};
  Stage s = stage("O", {"i"}, read("A", {sub(sub(c(9), mul(c(2), v("i"))), v("k"))}), Reduction::Sum, true);
  s.whereRanges["k"] = {0, 3};
  p.stages = {s};
  inferRangesAndCheck(p);
  EXPECT_EQ(ranges(p.stages[0]), "i=0:4 k=0:3 ");
}

TEST(RangeInference, GuardedReadsDoNotConstrain) {
  // Padding: O(h) += (h + k - 1 in bounds) ? I(h + k - 1) : 0, h from a typed output.
  Program p;
  p.tensors = {input("I", {6}), tensor("O", TensorRole::Output, {6})};
  Expr idx = sub(add(v("h"), v("k")), c(1));
  Expr cond = binary(BinaryOp::And, binary(BinaryOp::Ge, idx, c(0)), binary(BinaryOp::Lt, idx, c(6)));
  Stage s = stage("O", {"h"}, select(cond, read("I", {idx}), constant(0, DType::F32)), Reduction::Sum, true);
  s.whereRanges["k"] = {0, 3};
  p.stages = {s};
  inferRangesAndCheck(p);
  EXPECT_EQ(ranges(p.stages[0]), "h=0:6 k=0:3 ");
}

TEST(RangeInference, IndirectIndexDoesNotDriveItsDimension) {
  // O(b) += T(L(b), r): b from L, r from T's second dimension.
  Program p;
  TensorDecl l = input("L", {4});
  l.dtype = DType::I32;
  p.tensors = {input("T", {100, 7}), l, output("O")};
  p.stages = {
      stage("O", {"b"}, read("T", {access("L", DType::I32, {v("b")}), v("r")}), Reduction::Sum, true)};
  inferRangesAndCheck(p);
  EXPECT_EQ(ranges(p.stages[0]), "b=0:4 r=0:7 ");
}

TEST(RangeInference, KnownShapeGivesLhsRanges) {
  Program p;
  p.tensors = {input("A", {3, 4}), output("O")};
  p.stages = {stage("O", {"i", "j"}, read("A", {v("i"), v("j")})),
              stage("O", {"i", "j"}, add(read("O", {v("i"), v("j")}), c(1)))};
  inferRangesAndCheck(p);
  EXPECT_EQ(ranges(p.stages[1]), "i=0:3 j=0:4 ");
}

TEST(RangeInference, InitReductionWithoutReductionVariablesIsAnAssignment) {
  Program p;
  p.tensors = {input("A", {3}), output("O")};
  p.stages = {stage("O", {"i"}, read("A", {v("i")}), Reduction::Max, true)};
  inferRangesAndCheck(p);
  EXPECT_EQ(p.stages[0].reduction, Reduction::None);
  EXPECT_FALSE(p.stages[0].init);
}

TEST(RangeInference, ReductionVariablesInOrderOfFirstAppearance) {
  Program p;
  p.tensors = {input("A", {2, 3, 4}), output("O")};
  p.stages = {stage("O", {"j"}, read("A", {v("z"), v("j"), v("a")}), Reduction::Sum, true)};
  inferRangesAndCheck(p);
  EXPECT_EQ(p.stages[0].reductionVars, (std::vector<std::string>{"z", "a"}));
}

TEST(RangeInference, RerunningIsStable) {
  Program p;
  p.tensors = {input("I", {10}), input("K", {3}), output("O")};
  p.stages = {
      stage("O", {"i"}, mul(read("I", {add(v("i"), v("k"))}), read("K", {v("k")})), Reduction::Sum, true)};
  inferRangesAndCheck(p);
  std::string once = toString(p);
  inferRangesAndCheck(p);
  EXPECT_EQ(toString(p), once);
}

TEST(RangeInference, IncrementalMatchesWholeProgram) {
  Program p;
  p.tensors = {input("A", {5}), output("O"), tensor("T", TensorRole::Temporary, {}, false)};
  p.stages = {stage("T", {"i"}, read("A", {v("i")})), stage("O", {"i"}, add(read("T", {v("i")}), c(1)))};
  Program q = p;
  RangeInference r(q);
  r.inferStage(0);
  EXPECT_EQ(q.tensor("T").shape, (std::vector<int64_t>{5}));  // known before stage 1 is inferred
  r.inferStage(1);
  r.finish();
  inferRangesAndCheck(p);
  EXPECT_EQ(toString(p), toString(q));
}

TEST(RangeInference, Errors) {
  Program base;
  base.tensors = {input("A", {3}), output("O")};
  {
    Program p = base;
    p.stages = {stage("Z", {"i"}, read("A", {v("i")}))};
    EXPECT_EQ(errorOf(p), "unknown tensor 'Z'");
  }
  {
    Program p = base;
    p.stages = {stage("O", {"i"}, read("Q", {v("i")}))};
    EXPECT_EQ(errorOf(p), "unknown tensor 'Q'");
  }
  {
    Program p = base;
    p.stages = {stage("O", {"i", "i"}, read("A", {v("i")}))};
    EXPECT_EQ(errorOf(p), "index 'i' appears twice on the left-hand side of 'O'");
  }
  {
    Program p = base;
    p.stages = {stage("O", {"i"}, read("A", {v("i"), v("i")}))};
    EXPECT_EQ(errorOf(p), "'A' has 1 dimensions but is read with 2 indices");
  }
  {
    Program p = base;
    Stage s = stage("O", {"i"}, read("A", {v("i")}), Reduction::Sum, true);
    s.reductionVars = {"i"};  // a builder that pre-filled them wrongly
    p.stages = {s};
    EXPECT_EQ(errorOf(p), "reduction index 'i' also appears on the left-hand side");
  }
  {
    Program p = base;
    p.stages = {stage("O", {"i"}, read("A", {cast(DType::F32, v("i"))}))};
    EXPECT_EQ(errorOf(p),
              "index 0 of 'A' has type f32; tensor indices must be integers (cast with int32(...))");
  }
  {
    Program p = base;
    Stage s = stage("O", {"i"}, read("A", {v("i")}));
    s.whereRanges["i"] = {2, 2};
    p.stages = {s};
    EXPECT_EQ(errorOf(p), "the range 2:2 of index 'i' is empty");
  }
  {
    Program p = base;  // no stage writes O
    EXPECT_EQ(errorOf(p), "output 'O' is never written");
  }
}

}  // namespace
}  // namespace tessel::te
