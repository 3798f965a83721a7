// The reference interpreter on small programs with hand-computed results. The
// programs are built with the builder API and their ranges filled by hand, so
// these tests do not depend on range inference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/Interpreter.h"
#include "tessel/builder.h"

namespace tessel::runtime {
namespace {

using namespace te;
using namespace te::builder;

// What range inference would fill in for stage `i`.
void setRanges(Program& p, size_t i, std::map<std::string, Range> ranges,
               std::vector<std::string> reduce = {}) {
  p.stages.at(i).ranges = std::move(ranges);
  p.stages.at(i).reductionVars = std::move(reduce);
}

Buffer buffer(DType t, std::vector<int64_t> shape, std::vector<double> values) {
  Buffer b(t, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(b.size()), values.size());
  for (size_t i = 0; i < values.size(); ++i) b.set(static_cast<int64_t>(i), values[i]);
  return b;
}

std::vector<double> values(const Buffer& b) {
  std::vector<double> v;
  for (int64_t i = 0; i < b.size(); ++i) v.push_back(b.get(i));
  return v;
}

TEST(InterpreterTest, Matmul) {
  ProgramBuilder b("matmul");
  auto A = b.input("A", DType::F32, {3, 4});
  auto B = b.input("B", DType::F32, {4, 2});
  auto C = b.output("C", DType::F32, {3, 2});
  auto m = b.index("m"), n = b.index("n"), k = b.index("k");
  b.define(C(m, n), Reduction::Sum, true, A(m, k) * B(k, n));
  Program p = b.unchecked();
  setRanges(p, 0, {{"m", {0, 3}}, {"n", {0, 2}}, {"k", {0, 4}}}, {"k"});

  std::vector<double> a(12), bv(8);
  for (int i = 0; i < 12; ++i) a[i] = i - 5;
  for (int i = 0; i < 8; ++i) bv[i] = 0.5 * i + 1;
  auto out = interpret(p, {{"A", buffer(DType::F32, {3, 4}, a)}, {"B", buffer(DType::F32, {4, 2}, bv)}});
  ASSERT_EQ(out.size(), 1u);
  const Buffer& c = out.at("C");
  ASSERT_EQ(c.shape(), (std::vector<int64_t>{3, 2}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      double want = 0;
      for (int q = 0; q < 4; ++q) want += a[i * 4 + q] * bv[q * 2 + j];
      EXPECT_EQ(c.get(i * 2 + j), want) << i << "," << j;
    }
}

// O(i) op=[!] A(i, j) for one reduction kind; without init O starts at `start`.
std::vector<double> reduceRows(Reduction r, bool init, std::vector<double> a, double start = 0) {
  ProgramBuilder b("reduce");
  auto A = b.input("A", DType::F32, {2, 3});
  auto O = b.output("O", DType::F32, {2});
  auto i = b.index("i"), j = b.index("j");
  b.define(O(i), r, init, A(i, j));
  Program p = b.unchecked();
  setRanges(p, 0, {{"i", {0, 2}}, {"j", {0, 3}}}, {"j"});
  std::map<std::string, Buffer> in{{"A", buffer(DType::F32, {2, 3}, std::move(a))}};
  if (!init) in.emplace("O", buffer(DType::F32, {2}, {start, start}));
  return values(interpret(p, in).at("O"));
}

TEST(InterpreterTest, ReductionsWithInit) {
  std::vector<double> a{1, -2, 3, 4, 0.5, -6};
  EXPECT_EQ(reduceRows(Reduction::Sum, true, a), (std::vector<double>{2, -1.5}));
  EXPECT_EQ(reduceRows(Reduction::Prod, true, a), (std::vector<double>{-6, -12}));
  EXPECT_EQ(reduceRows(Reduction::Max, true, a), (std::vector<double>{3, 4}));
  EXPECT_EQ(reduceRows(Reduction::Min, true, a), (std::vector<double>{-2, -6}));
}

TEST(InterpreterTest, ReductionsWithoutInitStartFromCurrentValue) {
  std::vector<double> a{1, -2, 3, 4, 0.5, -6};
  EXPECT_EQ(reduceRows(Reduction::Sum, false, a, 10), (std::vector<double>{12, 8.5}));
  EXPECT_EQ(reduceRows(Reduction::Prod, false, a, 10), (std::vector<double>{-60, -120}));
  EXPECT_EQ(reduceRows(Reduction::Max, false, a, 3.5), (std::vector<double>{3.5, 4}));
  EXPECT_EQ(reduceRows(Reduction::Min, false, a, -3), (std::vector<double>{-3, -6}));
}

TEST(InterpreterTest, OutputsNotGivenStartAtZero) {
  ProgramBuilder b("acc");
  auto A = b.input("A", DType::F32, {3});
  auto O = b.output("O", DType::F32, {});
  auto j = b.index("j");
  b.define(O(), Reduction::Max, false, A(j));
  Program p = b.unchecked();
  setRanges(p, 0, {{"j", {0, 3}}}, {"j"});
  EXPECT_EQ(interpret(p, {{"A", buffer(DType::F32, {3}, {-1, -2, -3})}}).at("O").get(0), 0.0);
}

TEST(InterpreterTest, MaxMinPropagateNaN) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  auto mx = reduceRows(Reduction::Max, true, {1, nan, 3, 4, 5, 6});
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_EQ(mx[1], 6);
  auto mn = reduceRows(Reduction::Min, true, {1, 2, 3, 4, 5, nan});
  EXPECT_EQ(mn[0], 1);
  EXPECT_TRUE(std::isnan(mn[1]));
}

TEST(InterpreterTest, EmptyReductionGivesIdentity) {
  ProgramBuilder b("empty");
  auto A = b.input("A", DType::F32, {2, 3});
  auto O = b.output("O", DType::F32, {2});
  auto i = b.index("i"), j = b.index("j");
  b.define(O(i), Reduction::Max, true, A(i, j));
  Program p = b.unchecked();
  setRanges(p, 0, {{"i", {0, 2}}, {"j", {1, 1}}}, {"j"});
  auto o = interpret(p, {{"A", Buffer(DType::F32, {2, 3})}}).at("O");
  EXPECT_EQ(o.get(0), -std::numeric_limits<double>::infinity());
}

// f32 values are accumulated in double and rounded once, at the store.
TEST(InterpreterTest, FloatSumAccumulatesInDouble) {
  ProgramBuilder b("sum");
  auto A = b.input("A", DType::F32, {6});
  auto O = b.output("O", DType::F32, {});
  auto j = b.index("j");
  b.define(O(), Reduction::Sum, true, A(j));
  Program p = b.unchecked();
  setRanges(p, 0, {{"j", {0, 6}}}, {"j"});
  // In f32 arithmetic 1e8 + 1 == 1e8, so a float accumulator would give 0.
  auto o = interpret(p, {{"A", buffer(DType::F32, {6}, {1e8, 1, 1, 1, 1, -1e8})}}).at("O");
  EXPECT_EQ(o.get(0), 4.0);
}

// Elementwise O(i) = f(A(i), B(i)) on int32 tensors.
std::vector<double> int32Op(Value (*f)(const Value&, const Value&), std::vector<double> a,
                            std::vector<double> bv) {
  int64_t n = static_cast<int64_t>(a.size());
  ProgramBuilder b("iop");
  auto A = b.input("A", DType::I32, {n});
  auto B = b.input("B", DType::I32, {n});
  auto O = b.output("O", DType::I32, {n});
  auto i = b.index("i");
  b.define(O(i), f(A(i), B(i)));
  Program p = b.unchecked();
  setRanges(p, 0, {{"i", {0, n}}});
  return values(
      interpret(p, {{"A", buffer(DType::I32, {n}, a)}, {"B", buffer(DType::I32, {n}, bv)}}).at("O"));
}

TEST(InterpreterTest, Int32ArithmeticWraps) {
  const double kMax = 2147483647, kMin = -2147483648.0;
  auto add = [](const Value& a, const Value& b) { return a + b; };
  auto sub = [](const Value& a, const Value& b) { return a - b; };
  auto mul = [](const Value& a, const Value& b) { return a * b; };
  auto neg = [](const Value& a, const Value&) { return -a; };
  auto absf = [](const Value& a, const Value&) { return abs(a); };
  EXPECT_EQ(int32Op(add, {kMax, 5}, {1, 6}), (std::vector<double>{kMin, 11}));
  EXPECT_EQ(int32Op(sub, {kMin}, {1}), (std::vector<double>{kMax}));
  EXPECT_EQ(int32Op(mul, {65536, 46341, -3}, {65536, 46341, 7}),
            (std::vector<double>{0, -2147479015.0, -21}));
  EXPECT_EQ(int32Op(neg, {kMin, 3}, {0, 0}), (std::vector<double>{kMin, -3}));
  EXPECT_EQ(int32Op(absf, {kMin, -3}, {0, 0}), (std::vector<double>{kMin, 3}));
}

// Index arithmetic is folded into affine forms; it must still wrap like int32.
TEST(InterpreterTest, FoldedIndexArithmeticWraps) {
  ProgramBuilder b("fold");
  auto O = b.output("O", DType::I32, {3});
  auto P = b.output("P", DType::I32, {3});
  auto i = b.index("i");
  b.define(O(i), select(i + 2147483647 < 0 && i >= 0, 1, 0));
  b.define(P(i), i * 65536 * 65536 + (-i) * 3);
  Program p = b.unchecked();
  setRanges(p, 0, {{"i", {0, 3}}});
  setRanges(p, 1, {{"i", {0, 3}}});
  auto out = interpret(p, {});
  EXPECT_EQ(values(out.at("O")), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(values(out.at("P")), (std::vector<double>{0, -3, -6}));
}

TEST(InterpreterTest, Int32DivisionAndModuloByZeroGiveZero) {
  auto div = [](const Value& a, const Value& b) { return a / b; };
  auto mod = [](const Value& a, const Value& b) { return a % b; };
  const double kMin = -2147483648.0;
  EXPECT_EQ(int32Op(div, {7, -7, 5, kMin, 9}, {2, 2, 0, -1, -3}), (std::vector<double>{3, -3, 0, kMin, -3}));
  EXPECT_EQ(int32Op(mod, {7, -7, 5, kMin, 9}, {2, 2, 0, -1, -4}), (std::vector<double>{1, -1, 0, 0, 1}));
}

TEST(InterpreterTest, IntegerReductionsWrap) {
  ProgramBuilder b("isum");
  auto A = b.input("A", DType::I32, {3});
  auto S = b.output("S", DType::I32, {});
  auto P = b.output("P", DType::I32, {});
  auto j = b.index("j");
  b.define(S(), Reduction::Sum, true, A(j));
  b.define(P(), Reduction::Prod, true, A(j));
  Program p = b.unchecked();
  setRanges(p, 0, {{"j", {0, 3}}}, {"j"});
  setRanges(p, 1, {{"j", {0, 3}}}, {"j"});
  auto out = interpret(p, {{"A", buffer(DType::I32, {3}, {2147483647, 2147483647, 3})}});
  EXPECT_EQ(out.at("S").get(0), 1.0);  // 2*(2^31-1)+3 mod 2^32
  EXPECT_EQ(out.at("P").get(0), 3.0);  // (2^31-1)^2 = 1 mod 2^32, times 3
}

TEST(InterpreterTest, CastsToEveryDType) {
  std::vector<double> in{1.7, -1.7, 300.5, 200, 1.00390625, 65520, 0.25, -0.0};
  int64_t n = static_cast<int64_t>(in.size());
  ProgramBuilder b("casts");
  auto A = b.input("A", DType::F64, {n});
  auto i = b.index("i");
  std::vector<DType> types{DType::F32, DType::F64, DType::F16, DType::BF16,
                           DType::I32, DType::I8,  DType::U8,  DType::Bool};
  for (DType t : types) {
    auto O = b.output(std::string("O_") + dtypeName(t), t, {n});
    b.define(O(i), cast(t, A(i)));
  }
  Program p = b.unchecked();
  for (size_t s = 0; s < p.stages.size(); ++s) setRanges(p, s, {{"i", {0, n}}});
  auto out = interpret(p, {{"A", buffer(DType::F64, {n}, in)}});
  ASSERT_EQ(out.size(), types.size());
  for (DType t : types)
    for (int64_t k = 0; k < n; ++k)
      EXPECT_EQ(out.at(std::string("O_") + dtypeName(t)).get(k), roundToDType(in[k], t)) << dtypeName(t) << k;
  // Spot checks of the C semantics behind roundToDType.
  EXPECT_EQ(values(out.at("O_i32")), (std::vector<double>{1, -1, 300, 200, 1, 65520, 0, 0}));
  EXPECT_EQ(out.at("O_u8").get(2), 44);  // 300 mod 256
  EXPECT_EQ(out.at("O_i8").get(3), -56);
  EXPECT_EQ(out.at("O_bf16").get(4), 1.0);  // a tie, rounded to even
  EXPECT_TRUE(std::isinf(out.at("O_f16").get(5)));
  EXPECT_EQ(values(out.at("O_bool")), (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 0}));
}

TEST(InterpreterTest, StoreRoundsToOutputDType) {
  ProgramBuilder b("narrow");
  auto A = b.input("A", DType::F32, {4});
  auto H = b.output("H", DType::F16, {});
  auto I = b.output("I", DType::I32, {});
  auto j = b.index("j");
  b.define(H(), Reduction::Sum, true, A(j));
  b.define(I(), Reduction::Sum, true, A(j));  // int accumulation truncates each step
  Program p = b.unchecked();
  setRanges(p, 0, {{"j", {0, 4}}}, {"j"});
  setRanges(p, 1, {{"j", {0, 4}}}, {"j"});
  auto out = interpret(p, {{"A", buffer(DType::F32, {4}, {0.7, 0.7, 0.7, 1e-3})}});
  EXPECT_EQ(out.at("H").get(0),
            roundToDType(roundToDType(0.7, DType::F32) * 3 + roundToDType(1e-3, DType::F32), DType::F16));
  EXPECT_EQ(out.at("I").get(0), 0.0);
}

// Double evaluation would give 0.005f * 1000 = 4.99999988 and 0.333333343f * 3
// = 1.00000003; the kernel's f32 arithmetic gives 5 and 1. Operands of casts
// to integers and of comparisons are rounded to f32 first.
TEST(InterpreterTest, JumpsHappenWhereTheKernelsDo) {
  ProgramBuilder b("jumps");
  auto A = b.input("A", DType::F32, {2});
  auto Q = b.output("Q", DType::I32, {2});
  auto G = b.output("G", DType::F32, {2});
  auto F = b.output("F", DType::F32, {2});
  auto i = b.index("i");
  b.define(Q(i), cast(DType::I32, A(i) * 1000));
  b.define(G(i), select(A(i) * 3 > 1, 1.0f, 0.0f));
  b.define(F(i), floor(A(i) * 1000));
  Program p = b.unchecked();
  for (size_t s = 0; s < 3; ++s) setRanges(p, s, {{"i", {0, 2}}});
  auto out = interpret(p, {{"A", buffer(DType::F32, {2}, {0.005, 0.333333343})}});
  EXPECT_EQ(out.at("Q").get(0), 5);
  EXPECT_EQ(out.at("G").get(1), 0);
  EXPECT_EQ(out.at("F").get(0), 5);
}

TEST(InterpreterTest, SelectEvaluatesOnlyTheChosenBranch) {
  ProgramBuilder b("pad");
  auto A = b.input("A", DType::F32, {4});
  auto O = b.output("O", DType::F32, {6});
  auto P = b.output("P", DType::F32, {6});
  auto i = b.index("i");
  // Reads A(-1) and A(4) are out of bounds, in the branch not taken.
  b.define(O(i), select(i - 1 >= 0 && i - 1 < 4, A(i - 1), 0.0f));
  // Short-circuit && guards a read in the condition itself.
  b.define(P(i), select(i < 4 && A(i) > 0, 1.0f, -1.0f));
  Program p = b.unchecked();
  setRanges(p, 0, {{"i", {0, 6}}});
  setRanges(p, 1, {{"i", {0, 6}}});
  auto out = interpret(p, {{"A", buffer(DType::F32, {4}, {1, -2, 3, 4})}});
  EXPECT_EQ(values(out.at("O")), (std::vector<double>{0, 1, -2, 3, 4, 0}));
  EXPECT_EQ(values(out.at("P")), (std::vector<double>{1, -1, 1, 1, -1, -1}));
}

TEST(InterpreterTest, TemporariesAreNotReturned) {
  ProgramBuilder b("temp");
  auto A = b.input("A", DType::F32, {3});
  auto T = b.temporary("T", DType::F32, {3});
  auto O = b.output("O", DType::F32, {3});
  auto i = b.index("i");
  b.define(T(i), A(i) * 2);
  b.define(O(i), T(i) + 1);
  Program p = b.unchecked();
  setRanges(p, 0, {{"i", {0, 3}}});
  setRanges(p, 1, {{"i", {0, 3}}});
  auto out = interpret(p, {{"A", buffer(DType::F32, {3}, {1, 2, 3})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values(out.at("O")), (std::vector<double>{3, 5, 7}));
  EXPECT_THROW(interpret(p, {{"A", buffer(DType::F32, {3}, {1, 2, 3})}, {"T", Buffer(DType::F32, {3})}}),
               UserError);
}

Program gather() {
  ProgramBuilder b("gather");
  auto A = b.input("A", DType::F32, {4});
  auto Idx = b.input("Idx", DType::I32, {3});
  auto O = b.output("O", DType::F32, {3});
  auto i = b.index("i");
  b.define(O(i), A(Idx(i)) * 10);
  Program p = b.unchecked();
  setRanges(p, 0, {{"i", {0, 3}}});
  return p;
}

TEST(InterpreterTest, IndirectRead) {
  auto out = interpret(
      gather(), {{"A", buffer(DType::F32, {4}, {1, 2, 3, 4})}, {"Idx", buffer(DType::I32, {3}, {3, 0, 3})}});
  EXPECT_EQ(values(out.at("O")), (std::vector<double>{40, 10, 40}));
}

TEST(InterpreterTest, IndirectReadOutOfBoundsIsAUserError) {
  try {
    interpret(gather(),
              {{"A", buffer(DType::F32, {4}, {1, 2, 3, 4})}, {"Idx", buffer(DType::I32, {3}, {0, 4, 1})}});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("A(Idx(i))"), std::string::npos) << what;
    EXPECT_NE(what.find("i=1"), std::string::npos) << what;
  }
}

TEST(InterpreterTest, BadBuffersAreUserErrors) {
  Program p = gather();
  Buffer a = buffer(DType::F32, {4}, {1, 2, 3, 4});
  EXPECT_THROW(interpret(p, {{"A", a}}), UserError);                                              // missing
  EXPECT_THROW(interpret(p, {{"A", a}, {"Idx", Buffer(DType::F32, {3})}}), UserError);            // dtype
  EXPECT_THROW(interpret(p, {{"A", a}, {"Idx", Buffer(DType::I32, {4})}}), UserError);            // shape
  EXPECT_THROW(interpret(p, {{"A", a}, {"Idx", Buffer(DType::I32, {3})}, {"Z", a}}), UserError);  // unknown
}

TEST(InterpreterTest, WriteOutsideTheShapeIsAUserError) {
  ProgramBuilder b("oob");
  auto A = b.input("A", DType::F32, {4});
  auto O = b.output("O", DType::F32, {3});
  auto i = b.index("i");
  b.define(O(i), A(i));
  Program p = b.unchecked();
  setRanges(p, 0, {{"i", {0, 4}}});
  EXPECT_THROW(interpret(p, {{"A", Buffer(DType::F32, {4})}}), UserError);
}

TEST(InterpreterTest, StagesRunInSourceOrderAndSeeEarlierStores) {
  ProgramBuilder b("scan");
  auto A = b.input("A", DType::F32, {4});
  auto O = b.output("O", DType::F32, {4});
  auto i = b.index("i");
  b.define(O(i), A(i));
  b.define(O(i), O(i - 1) + A(i));  // i in 1:4: a running sum, point after point
  Program p = b.unchecked();
  setRanges(p, 0, {{"i", {0, 4}}});
  setRanges(p, 1, {{"i", {1, 4}}});
  auto out = interpret(p, {{"A", buffer(DType::F32, {4}, {1, 2, 3, 4})}});
  EXPECT_EQ(values(out.at("O")), (std::vector<double>{1, 3, 6, 10}));
}

TEST(InterpreterTest, MathFunctions) {
  ProgramBuilder b("math");
  auto A = b.input("A", DType::F64, {2});
  auto i = b.index("i");
  std::vector<std::pair<std::string, Value>> defs{
      {"exp", exp(A(i))},      {"log", log(A(i))},         {"sqrt", sqrt(A(i))},   {"rsqrt", rsqrt(A(i))},
      {"tanh", tanh(A(i))},    {"sigmoid", sigmoid(A(i))}, {"erf", erf(A(i))},     {"floor", floor(A(i))},
      {"ceil", ceil(A(i))},    {"pow", pow(A(i), 3)},      {"fmod", A(i) % 0.75f}, {"min", min(A(i), 1.5f)},
      {"max", max(A(i), 1.5f)}};
  for (auto& [name, v] : defs) b.define(b.output(name, DType::F64, {2})(i), v);
  Program p = b.unchecked();
  for (size_t s = 0; s < p.stages.size(); ++s) setRanges(p, s, {{"i", {0, 2}}});
  auto out = interpret(p, {{"A", buffer(DType::F64, {2}, {0.3, 2.5})}});
  for (double x : {0.3, 2.5}) {
    int k = x == 0.3 ? 0 : 1;
    EXPECT_DOUBLE_EQ(out.at("exp").get(k), std::exp(x));
    EXPECT_DOUBLE_EQ(out.at("log").get(k), std::log(x));
    EXPECT_DOUBLE_EQ(out.at("sqrt").get(k), std::sqrt(x));
    EXPECT_DOUBLE_EQ(out.at("rsqrt").get(k), 1 / std::sqrt(x));
    EXPECT_DOUBLE_EQ(out.at("tanh").get(k), std::tanh(x));
    EXPECT_DOUBLE_EQ(out.at("sigmoid").get(k), 1 / (1 + std::exp(-x)));
    EXPECT_DOUBLE_EQ(out.at("erf").get(k), std::erf(x));
    EXPECT_EQ(out.at("floor").get(k), std::floor(x));
    EXPECT_EQ(out.at("ceil").get(k), std::ceil(x));
    EXPECT_DOUBLE_EQ(out.at("pow").get(k), x * x * x);
    EXPECT_DOUBLE_EQ(out.at("fmod").get(k), std::fmod(x, 0.75));
    EXPECT_EQ(out.at("min").get(k), std::min(x, 1.5));
    EXPECT_EQ(out.at("max").get(k), std::max(x, 1.5));
  }
}

}  // namespace
}  // namespace tessel::runtime
