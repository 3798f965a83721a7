#include <gtest/gtest.h>

#include "runtime/Interpreter.h"
#include "tessel/builder.h"

namespace tessel::te {
namespace {

using namespace builder;

TEST(BuilderTest, MatmulProgram) {
  ProgramBuilder b("matmul");
  auto A = b.input("A", DType::F32, {64, 32});
  auto B = b.input("B", DType::F32, {32, 16});
  auto C = b.output("C", DType::F32);
  auto m = b.index("m"), n = b.index("n"), k = b.index("k");
  b.define(C(m, n), Reduction::Sum, true, A(m, k) * B(k, n));
  Program p = b.build();

  EXPECT_EQ(p.name, "matmul");
  ASSERT_EQ(p.stages.size(), 1u);
  const Stage& s = p.stages[0];
  EXPECT_EQ(s.output, "C");
  EXPECT_EQ(s.indices, (std::vector<std::string>{"m", "n"}));
  EXPECT_EQ(s.reduction, Reduction::Sum);
  EXPECT_TRUE(s.init);
  EXPECT_EQ(toString(s.rhs), "(A(m, k) * B(k, n))");
  EXPECT_EQ(s.reductionVars, (std::vector<std::string>{"k"}));
  EXPECT_EQ(s.ranges.at("k").hi, 32);
  const TensorDecl& c = p.tensor("C");
  EXPECT_TRUE(c.shapeKnown);
  EXPECT_EQ(c.shape, (std::vector<int64_t>{64, 16}));
  EXPECT_EQ(c.role, TensorRole::Output);
  EXPECT_NE(s.loc.file.find("BuilderTest.cpp"), std::string::npos);
}

TEST(BuilderTest, LiteralsAndOperators) {
  ProgramBuilder b("ops");
  auto A = b.input("A", DType::F16, {8});
  auto I = b.input("I", DType::I32, {8});
  auto i = b.index("i");
  EXPECT_EQ((A(i) * 2).type(), DType::F16);    // int literal: i32 constant
  EXPECT_EQ((A(i) + 1.5).type(), DType::F32);  // float literal: f32 constant (as in TC)
  EXPECT_EQ((I(i) + 1).type(), DType::I32);
  EXPECT_EQ((I(i) / 2).type(), DType::I32);
  EXPECT_EQ(literal(0.1, DType::F64).type(), DType::F64);
  EXPECT_EQ(Value(true).type(), DType::Bool);
  EXPECT_EQ(toString((i + 1) * 2 - I(i) % 3), "(((i + 1) * 2) - (I(i) % 3))");
  EXPECT_EQ(toString(-A(i) / 4.0f), "((-A(i)) / 4.0)");
  EXPECT_EQ(toString(!(i < 3) || (i >= 5 && i != 6) || i <= 1 || i > 7 || i == 2),
            "(((((!(i < 3)) || ((i >= 5) && (i != 6))) || (i <= 1)) || (i > 7)) || (i == 2))");
  EXPECT_EQ(toString(select(i < 4, A(i), 0)), "((i < 4) ? A(i) : 0)");
  EXPECT_EQ(toString(cast(DType::I8, exp(A(i)))), "i8(exp(A(i)))");
  EXPECT_EQ(toString(max(min(A(i), 1), pow(A(i), 2.0f))), "max(min(A(i), 1), pow(A(i), 2.0))");
  for (auto [v, name] : std::vector<std::pair<Value, std::string>>{{exp(A(i)), "exp"},
                                                                   {log(A(i)), "log"},
                                                                   {sqrt(A(i)), "sqrt"},
                                                                   {rsqrt(A(i)), "rsqrt"},
                                                                   {tanh(A(i)), "tanh"},
                                                                   {sigmoid(A(i)), "sigmoid"},
                                                                   {erf(A(i)), "erf"},
                                                                   {abs(A(i)), "abs"},
                                                                   {floor(A(i)), "floor"},
                                                                   {ceil(A(i)), "ceil"}})
    EXPECT_EQ(toString(v.expr()), name + "(A(i))");
}

TEST(BuilderTest, WhereAndTemporaries) {
  ProgramBuilder b("relu_head");
  auto A = b.input("A", DType::F32, {16, 4});
  auto T = b.temporary("T", DType::F32);
  auto O = b.output("O", DType::F32);
  auto m = b.index("m"), n = b.index("n");
  b.define(T(m, n), max(A(m, n), 0.0f));
  b.define(O(m, n), exp(T(m, n)) + 1.0f).where(m, 0, 8);
  Program p = b.build();
  EXPECT_EQ(p.stages[1].whereRanges.at("m").hi, 8);
  EXPECT_EQ(p.tensor("O").shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(p.tensor("T").role, TensorRole::Temporary);
  EXPECT_EQ(p.outputs().size(), 1u);
}

TEST(BuilderTest, ErrorsAreUserErrors) {
  ProgramBuilder b("bad");
  auto A = b.input("A", DType::F32, {4, 4});
  auto O = b.output("O", DType::F32);
  auto i = b.index("i"), j = b.index("j");
  EXPECT_THROW(A(i), UserError);                                               // rank
  EXPECT_THROW(A(i, A(i, j)), UserError);                                      // float index
  EXPECT_THROW(b.define(A(i, j), O(i, j)), UserError);                         // defining an input
  EXPECT_THROW(b.define(O(i + 1, j), A(i, j)), UserError);                     // lhs index not a variable
  EXPECT_THROW(b.define(A(i, j) + 1, A(i, j)), UserError);                     // lhs not an access
  EXPECT_THROW(b.define(O(i, j), Reduction::None, true, A(i, j)), UserError);  // '=!'
  EXPECT_THROW(b.input("A", DType::F32, {2}), UserError);                      // declared twice
  EXPECT_THROW(b.index("A"), UserError);                                       // index named like a tensor
  EXPECT_THROW(Value(3000000000LL), UserError);                                // literal beyond int32
  EXPECT_THROW(literal(300, DType::U8), UserError);
  ProgramBuilder other("other");
  auto X = other.input("X", DType::F32, {4});
  EXPECT_THROW(b.define(O(i, j), X(i)), UserError);  // tensor of another builder
  b.define(O(i, j), A(i, j));
  EXPECT_THROW(b.define(O(i), A(i, j)), UserError);  // rank fixed by the first definition
  EXPECT_THROW(b.define(O(i, j), O(i) + 1), UserError);
  EXPECT_THROW(b.define(O(i, j), A(j, i)).where(i, 0, 2).where(i, 0, 3), UserError);
}

TEST(BuilderTest, BuildReportsInferenceErrors) {
  ProgramBuilder b("unread");
  auto A = b.input("A", DType::F32, {4});
  b.output("O", DType::F32);  // never written
  b.temporary("T", DType::F32);
  (void)A;
  EXPECT_THROW(b.build(), UserError);
}

TEST(BuilderTest, BuiltProgramRunsInTheInterpreter) {
  ProgramBuilder b("softmax");
  auto X = b.input("X", DType::F32, {2, 3});
  auto Mx = b.temporary("Mx", DType::F32);
  auto E = b.temporary("E", DType::F32);
  auto S = b.temporary("S", DType::F32);
  auto Y = b.output("Y", DType::F32);
  auto r = b.index("r"), c = b.index("c");
  b.define(Mx(r), Reduction::Max, true, X(r, c));
  b.define(E(r, c), exp(X(r, c) - Mx(r)));
  b.define(S(r), Reduction::Sum, true, E(r, c));
  b.define(Y(r, c), E(r, c) / S(r));
  Program p = b.build();

  runtime::Buffer x(DType::F32, {2, 3});
  std::vector<double> xv{1, 2, 3, -1, 0, 5};
  for (int q = 0; q < 6; ++q) x.set(q, xv[q]);
  auto out = runtime::interpret(p, {{"X", x}});
  ASSERT_EQ(out.size(), 1u);
  for (int row = 0; row < 2; ++row) {
    double mx = std::max({xv[row * 3], xv[row * 3 + 1], xv[row * 3 + 2]}), sum = 0;
    for (int col = 0; col < 3; ++col) sum += std::exp(xv[row * 3 + col] - mx);
    for (int col = 0; col < 3; ++col)
      EXPECT_FLOAT_EQ(out.at("Y").get(row * 3 + col), std::exp(xv[row * 3 + col] - mx) / sum);
  }
}

}  // namespace
}  // namespace tessel::te

namespace tessel::te {
namespace {

TEST(BuilderTest, MathFunctionsByName) {
  using namespace builder;
  ProgramBuilder b("trig");
  auto A = b.input("A", DType::F32, {4});
  auto O = b.output("O", DType::F32);
  auto i = b.index("i");
  b.define(O(i), sin(A(i)) + cos(A(i)) + apply(UnaryOp::Log1p, A(i)) + apply(BinaryOp::Atan2, A(i), 2.0f));
  Program p = b.build();
  EXPECT_EQ(toString(p.stages[0].rhs), "(((sin(A(i)) + cos(A(i))) + log1p(A(i))) + atan2(A(i), 2.0))");
}

}  // namespace
}  // namespace tessel::te

namespace tessel::te {
namespace {

TEST(BuilderTest, NamesMustBeIdentifiers) {
  using namespace builder;
  ProgramBuilder b("ok_name");
  EXPECT_THROW(b.input("bad name", DType::F32, {2}), UserError);
  EXPECT_THROW(b.input("x-y", DType::F32, {2}), UserError);
  EXPECT_THROW(b.index("9i"), UserError);
  EXPECT_THROW(ProgramBuilder("has space"), UserError);
  EXPECT_NO_THROW(b.input("_fine2", DType::F32, {2}));
}

}  // namespace
}  // namespace tessel::te
