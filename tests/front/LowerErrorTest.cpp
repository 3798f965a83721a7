// One test per semantic error path of lowering and range inference: the
// message and the line:col it points at.
#include <gtest/gtest.h>

#include "FrontTestUtil.h"

namespace tessel::front {
namespace {

using namespace testing;

// ---- sizes and entry ----

const char* kMatmul = "def mm(float(M, K) A, float(K, N) B) -> (C) {\n  C(m, n) +=! A(m, k) * B(k, n)\n}\n";

Failure lowerWith(const std::map<std::string, int64_t>& sizes) {
  Failure f;
  try {
    lower(*parse({"", kMatmul}), "", sizes);
  } catch (const UserError& e) {
    f.thrown = true;
    f.reason = e.reason();
    f.line = e.loc().line;
    f.col = e.loc().col;
  }
  return f;
}

TEST(FrontErrors, UnknownSize) {
  auto f = lowerWith({{"M", 2}, {"K", 3}, {"N", 4}, {"Q", 5}});
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.reason, "unknown size 'Q' for def 'mm' (its sizes are M, K, N)");
  EXPECT_EQ(f.line, 1);
  EXPECT_EQ(f.col, 5);
}

TEST(FrontErrors, MissingSize) {
  auto f = lowerWith({{"M", 2}, {"N", 4}});
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.reason, "no value given for size 'K'");
  EXPECT_EQ(f.line, 1);
  EXPECT_EQ(f.col, 17);
}

TEST(FrontErrors, NonPositiveSize) {
  auto f = lowerWith({{"M", 2}, {"K", 0}, {"N", 4}});
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.reason, "size 'K' must be positive, got 0");
}

TEST(FrontErrors, UnsupportedType) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(int64(N) A) -> (O) {\n  O(i) = A(i)\n}\n",
                  "unsupported type 'int64': Tessel supports bool, int8, uint8 (byte), int32", 2, 7);
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = uint16(A(i))\n}\n",
                  "unsupported type 'uint16'", 3, 10);
}

// ---- names ----

TEST(FrontErrors, TensorDeclaredTwice) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A, float(N) A) -> (O) {\n  O(i) = A(i)\n}\n",
                  "tensor 'A' is declared twice", 2, 28);
}

TEST(FrontErrors, InputAlsoOutput) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (A) {\n  A(i) = 1.0\n}\n",
                  "'A' is both an input and an output; inputs are immutable", 2, 23);
}

TEST(FrontErrors, SizeNameAsTensor) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) N) -> (O) {\n  O(i) = 1.0\n}\n", "'N' is already a size name",
                  2, 16);
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  N(i) = A(i)\n}\n",
                  "'N' is a size, not a tensor", 3, 3);
}

TEST(FrontErrors, BuiltinAsTensorName) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) exp) -> (O) {\n  O(i) = exp(i)\n}\n",
                  "'exp' is a builtin function and cannot name a tensor", 2, 16);
}

TEST(FrontErrors, LhsIndexNotAPlainName) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i + 1) = A(i)\n}\n",
                  "indices on the left-hand side must be plain index names, not expressions", 3, 7);
}

TEST(FrontErrors, LhsIndexRepeated) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N, N) A) -> (O) {\n  O(i, i) = A(i, i)\n}\n",
                  "index 'i' appears twice on the left-hand side of 'O'", 3, 8);
}

TEST(FrontErrors, LhsIndexIsASize) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(N) = A(0)\n}\n",
                  "'N' is a size and cannot be used as an index", 3, 5);
}

TEST(FrontErrors, UnknownTensor) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) + Z(i)\n}\n",
                  "unknown tensor or function 'Z'", 3, 17);
}

TEST(FrontErrors, UnsupportedBuiltin) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = sinpif(A(i))\n}\n",
                  "unsupported builtin 'sinpif': Tessel implements acos, acosh, asin", 3, 10);
}

TEST(FrontErrors, BuiltinArity) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = fmaxf(A(i))\n}\n",
                  "'fmaxf' takes 2 arguments but is given 1", 3, 10);
}

TEST(FrontErrors, BuiltinWithoutCall) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) * exp\n}\n",
                  "'exp' is a builtin function; call it as exp(...)", 3, 17);
}

TEST(FrontErrors, CallingADef) {
  auto f = failureOf(
      "# sizes: N=3\ndef g(float(N) A) -> (O) {\n  O(i) = A(i)\n}\n"
      "def f(float(N) A) -> (O) {\n  O(i) = g(A(i))\n}\n",
      "f");
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.reason, "unsupported: calling a def ('g'); Tessel compiles each def on its own");
  EXPECT_EQ(f.line, 6);
  EXPECT_EQ(f.col, 10);
}

TEST(FrontErrors, CallingADefNamed) {
  auto f = failureOf(
      "# sizes: N=3\ndef g(float(N) A) -> (O) {\n  O(i) = A(i)\n}\n"
      "def f(float(N) A) -> (O) {\n  O = g(A)\n}\n",
      "f");
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.reason, "unsupported: calling a def ('g'); Tessel compiles each def on its own");
  EXPECT_EQ(f.line, 6);
  EXPECT_EQ(f.col, 7);
}

TEST(FrontErrors, ReadBeforeWrite) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) + T(i)\n  T(i) = A(i)\n}\n",
                  "'T' is read before any statement writes it", 3, 17);
}

TEST(FrontErrors, ReadOwnOutputBeforeAnyWrite) {
  // untyped output: caught while typing the expression
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = O(i) + A(i)\n}\n",
                  "'O' is read before any statement writes it", 3, 10);
  // typed output: caught by range inference
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (float(N) O) {\n  O(i) = O(i) + A(i)\n}\n",
                  "this statement reads 'O', which no earlier statement wrote", 3, 10);
}

TEST(FrontErrors, ReadRankMismatch) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N, N) A) -> (O) {\n  O(i) = A(i)\n}\n",
                  "'A' has 2 dimensions but is read with 1 indices", 3, 10);
}

TEST(FrontErrors, TensorUsedWithoutIndices) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A\n}\n",
                  "'A' has 1 dimensions; read it with indices", 3, 10);
}

TEST(FrontErrors, NarrowingAssignment) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (int32(N) O) {\n  O(i) = A(i)\n}\n",
                  "cannot assign a f32 value to 'O' of type i32 without an explicit cast", 3, 8);
}

TEST(FrontErrors, BooleanOperands) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = !A(i)\n}\n",
                  "the operand of '!' must be a boolean (e.g. a comparison), not f32", 3, 10);
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) ? 1 : 0\n}\n",
                  "the condition of '?:' must be a boolean (e.g. a comparison), not f32", 3, 15);
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = i > 0 && A(i) ? 1 : 0\n}\n",
                  "each operand of '&&' must be a boolean (e.g. a comparison), not f32", 3, 16);
}

TEST(FrontErrors, FloatModulo) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) % 2\n}\n",
                  "'%' needs integer operands; the operands here are f32 and i32", 3, 15);
}

TEST(FrontErrors, DimensionOfUnknownShape) {
  EXPECT_TC_ERROR(
      "# sizes: N=3\ndef f(float(N) A) -> (O, P) {\n  P(i) = A(i) where i in 0:O.0\n  O(i) = A(i)\n}\n",
      "the shape of 'O' is not known here: no earlier statement defines it", 3, 28);
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) where i in 0:A.1\n}\n",
                  "'A' has 1 dimensions, so 'A.1' does not exist", 3, 28);
}

// ---- where clauses ----

TEST(FrontErrors, WhereRangeTwice) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) where i in 0:2, i in 0:3\n}\n",
                  "index 'i' has two where ranges", 3, 31);
}

TEST(FrontErrors, WhereRangeEmpty) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) where i in 2:N-1\n}\n",
                  "the range 2:2 of index 'i' is empty", 3, 21);
}

TEST(FrontErrors, WhereBoundNotASizeExpression) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N, N) A) -> (O) {\n  O(i) +=! A(i, k) where k in i:N\n}\n",
                  "range bounds must be size expressions (integers, sizes, T.d), but 'i' is not a size", 3,
                  31);
  EXPECT_TC_ERROR(
      "# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) where i in 0:2.5\n}\n",
      "range bounds must be size expressions (integers, sizes, T.d); found a floating-point number", 3, 28);
}

TEST(FrontErrors, WhereVariableUnused) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) where j in 0:2\n}\n",
                  "the where clause constrains 'j', which this statement does not use", 3, 3);
}

TEST(FrontErrors, WhereLetRefersToItself) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) * x where x = x + 1\n}\n",
                  "where-bound value 'x' refers to itself", 3, 29);
}

// ---- range inference ----

TEST(FrontErrors, WritingAnInput) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  A(i) = 1.0\n  O(i) = A(i)\n}\n",
                  "cannot write 'A': it is an input, and inputs are immutable", 3, 3);
}

TEST(FrontErrors, CannotInferUnconstrainedIndex) {
  EXPECT_TC_ERROR(
      "# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i, j) = A(i)\n}\n",
      "cannot infer the range of index 'j': it appears only on the left-hand side and 'O' has no known "
      "shape; give it with 'where j in lo:hi'",
      3, 3);
}

TEST(FrontErrors, GuardedReadsInferAShiftedRange) {
  // Guarded reads bound `i` only as a fallback; here that gives 1:4, so the
  // output would have an unwritten element and the user must say so.
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = i > 0 ? A(i - 1) : 0.0\n}\n",
                  "index 'i' is inferred to range over 1:4, so 'O' would have unwritten elements below 1", 3,
                  10);
}

TEST(FrontErrors, CannotInferFromTwoUnknowns) {
  EXPECT_TC_ERROR(
      "# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) +=! A(i + k)\n}\n",
      "cannot infer the range of index 'i': every read it indexes also uses another index of unknown range",
      3, 14);
}

TEST(FrontErrors, CannotInferFromNonAffine) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i * i)\n}\n",
                  "cannot infer the range of index 'i': it is only used in non-affine index expressions", 3,
                  12);
}

TEST(FrontErrors, EmptyInferredRange) {
  EXPECT_TC_ERROR("# sizes: N=1\ndef f(float(N) A) -> (O) {\n  O(i) = A(2 * i + 1)\n}\n",
                  "no value of index 'i' keeps A(((2 * i) + 1)) in bounds (dimension 0 of 'A' has size 1)", 3,
                  10);
}

TEST(FrontErrors, ConflictingInferredRanges) {
  EXPECT_TC_ERROR("# sizes: N=3 M=9\ndef f(float(N) A, float(M) B) -> (O) {\n  O(i) = A(i) + B(i - 5)\n}\n",
                  "no value of index 'i' keeps every read in bounds", 3, 17);
}

TEST(FrontErrors, ReductionWithoutOperator) {
  EXPECT_TC_ERROR(
      "# sizes: N=3\ndef f(float(N, N) A) -> (O) {\n  O(i) = A(i, k)\n}\n",
      "index 'k' appears only on the right-hand side, so it is reduced, but 'O' is assigned with '='", 3, 15);
}

TEST(FrontErrors, SelfReadAtAnotherPoint) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i)\n  O(i) = O(2 - i)\n}\n",
                  "'O' is read at a point other than the one being written", 4, 10);
}

TEST(FrontErrors, SelfReadInReduction) {
  EXPECT_TC_ERROR(
      "# sizes: N=3\ndef f(float(N, N) A) -> (O) {\n  O(i) = A(i, 0)\n  O(i) +=! O(i) * A(i, k)\n}\n",
      "a reduction into 'O' cannot also read 'O'", 4, 12);
}

TEST(FrontErrors, ReadOutOfBoundsWithGivenRange) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) where i in 0:5\n}\n",
                  "read A(i) is out of bounds: index 0 takes values 0..4 but 'A' has size 3 there", 3, 10);
}

TEST(FrontErrors, ReadOutOfBoundsAfterInference) {
  // TC's "preconditions" example: i and j come from B and D; C is too small.
  EXPECT_TC_ERROR(
      "# sizes: I=4 J=5\ndef f(float(I) B, float(I) C, float(J) D) -> (A) {\n  A(i, j) = B(i) * C(i + j) * "
      "D(j)\n}\n",
      "read C((i + j)) is out of bounds: index 0 takes values 0..7 but 'C' has size 4 there", 3, 20);
}

TEST(FrontErrors, FloatIndex) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A, float(N) B) -> (O) {\n  O(i) = A(B(i))\n}\n",
                  "index 0 of 'A' has type f32; tensor indices must be integers (cast with int32(...))", 3,
                  12);
}

TEST(FrontErrors, WriteOutOfBounds) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (float(N) O) {\n  O(i) = 1.0 where i in 0:N+1\n}\n",
                  "'O' is written out of bounds: index 'i' ranges over 0:4 but dimension 0 has size 3", 3, 3);
}

TEST(FrontErrors, WriteRankMismatch) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N, N) A) -> (O) {\n  O(i, j) = A(i, j)\n  O(i) = A(i, 0)\n}\n",
                  "'O' has 2 dimensions but this statement writes it with 1", 4, 3);
}

TEST(FrontErrors, OutputNeverWritten) {
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A) -> (O, P) {\n  O(i) = A(i)\n}\n",
                  "output 'P' is never written", 2, 26);
}

TEST(FrontErrors, InferredRangeNotFromZero) {
  EXPECT_TC_ERROR(
      "# sizes: N=8\ndef f(float(N) A) -> (O) {\n  O(i) = A(i - 2)\n}\n",
      "index 'i' is inferred to range over 2:10, so 'O' would have unwritten elements below 2; give the "
      "range with 'where i in 2:10' to accept that",
      3, 12);
}

TEST(FrontErrors, RangeBelowZero) {
  EXPECT_TC_ERROR("# sizes: N=8\ndef f(float(N) A) -> (O) {\n  O(i) = 1.0 where i in -1:3\n}\n",
                  "index 'i' ranges over -1:3, so 'O' would be written below index 0", 3, 3);
}

}  // namespace
}  // namespace tessel::front

namespace tessel::front {
namespace {

TEST(FrontErrors, ExpressionTooDeep) {
  std::string deep = "# sizes: N=3\ndef f(float(N) A) -> (B) {\n  B(i) = " + std::string(5000, '(') + "A(i)" +
                     std::string(5000, ')') + "\n}\n";
  auto f = testing::failureOf(deep);
  ASSERT_TRUE(f.thrown);
  EXPECT_NE(f.reason.find("nested more than 1000 levels"), std::string::npos) << f.reason;
  // The 10,000-character line is shown as a window around the column.
  EXPECT_NE(f.rendered.find("..."), std::string::npos);
  EXPECT_LT(f.rendered.size(), 600u);
  std::string chain = "# sizes: N=3\ndef f(float(N) A) -> (B) {\n  B(i) = A(i)";
  for (int i = 0; i < 3000; ++i) chain += " + A(i)";
  auto g = testing::failureOf(chain + "\n}\n");
  ASSERT_TRUE(g.thrown);
  EXPECT_NE(g.reason.find("nested more than 1000 levels"), std::string::npos) << g.reason;
}

TEST(FrontErrors, BinaryGarbageIsEscaped) {
  auto f = testing::failureOf(std::string("def f\x01 garbage", 15));
  ASSERT_TRUE(f.thrown);
  EXPECT_NE(f.reason.find("unexpected character '\\x01'"), std::string::npos) << f.reason;
  EXPECT_EQ(f.rendered.find('\x01'), std::string::npos);
}

TEST(FrontErrors, TensorTooLarge) {
  auto f =
      testing::failureOf("# sizes: N=2000000000\ndef f(float(N, N, N) A) -> (B) {\n  B(i) = A(i, 0, 0)\n}\n");
  ASSERT_TRUE(f.thrown);
  EXPECT_NE(f.reason.find("tensor 'A' has more than 2^34 elements"), std::string::npos) << f.reason;
}

}  // namespace
}  // namespace tessel::front
