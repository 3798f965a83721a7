// Golden tests: TC programs and the te::Program text they lower to (shapes,
// types, casts, inferred ranges).
#include <gtest/gtest.h>

#include "FrontTestUtil.h"

namespace tessel::front {
namespace {

void expectLowersTo(const std::string& tc, const std::string& expected) {
  try {
    EXPECT_EQ(te::toString(testing::lowerText(tc)), expected);
  } catch (const UserError& e) {
    ADD_FAILURE() << e.render();
  }
}

TEST(FrontGolden, AccumulateIntoCallerOutput) {
  // TC: `+=` without `!` accumulates into the output's existing contents.
  expectLowersTo(R"TC(# sizes: R=3 C=4
def mv(float(R,C) A, float(C) B) -> (o) {
    o(i) += A(i,j) * B(j)
}
)TC",
                 R"TE(program mv
  input f32 A(3,4)
  input f32 B(4)
  output f32 o(3)
  o(i) += (A(i, j) * B(j))   {i in 0:3, j in 0:4}
)TE");
}

TEST(FrontGolden, ConcatInfersFromGuardedReads) {
  expectLowersTo(R"TC(# sizes: M=2 N=3
def concat(float(M, N) A, float(M, N) B) -> (O1) {
    O1(n, i, m) = i == 0 ? A(m, n) : B(m, n) where i in 0:2
}
)TC",
                 R"TE(program concat
  input f32 A(2,3)
  input f32 B(2,3)
  output f32 O1(3,2,2)
  O1(n, i, m) = ((i == 0) ? A(m, n) : B(m, n))   {i in 0:2, m in 0:2, n in 0:3}
)TE");
}

TEST(FrontGolden, ShortCircuitReadsBoundIndicesInEitherOrder) {
  // A read after `&&` bounds `i` like any read (as in TC); the ternary's
  // branch read, guarded by `i > 0`, does not narrow it.
  for (const char* cond : {"i > 0 && A(i) > 0", "A(i) > 0 && i > 0"}) {
    expectLowersTo(
        std::string("# sizes: N=8\ndef g(float(N) A, float(N) B) -> (C) {\n  C(i) = (") + cond +
            ") ? B(i - 1) : 0\n}\n",
        std::string("program g\n  input f32 A(8)\n  input f32 B(8)\n  output f32 C(8)\n  C(i) = ((") +
            (cond[0] == 'i' ? "(i > 0) && (A(i) > 0)" : "(A(i) > 0) && (i > 0)") +
            ") ? B((i - 1)) : 0)   {i in 0:8}\n");
  }
}

TEST(FrontGolden, WhereExistsBoundsIndices) {
  expectLowersTo(R"TC(# sizes: N=9
def constant_fill(float(N) A, float c) -> (B) {
    B(i) = c where exists A(i)
}
)TC",
                 R"TE(program constant_fill
  input f32 A(9)
  input f32 c()
  output f32 B(9)
  B(i) = c where exists A(i)   {i in 0:9}
)TE");
}

TEST(FrontGolden, Scalars) {
  expectLowersTo(R"TC(# sizes: N=5
def scalars(float(N) A, float alpha, int32 off) -> (S, O) {
    S +=! A(i) * alpha
    O(i) = A(i) * S + float(off) + N
}
)TC",
                 R"TE(program scalars
  input f32 A(5)
  input f32 alpha()
  input i32 off()
  output f32 S()
  output f32 O(5)
  S() +=! (A(i) * alpha)   {i in 0:5}
  O(i) = (((A(i) * S) + f32(off)) + 5)   {i in 0:5}
)TE");
}

TEST(FrontGolden, Temporaries) {
  expectLowersTo(R"TC(# sizes: N=5 M=4
def temporaries(float(N, M) A) -> (O) {
    rowMax(n) max=! A(n, m)
    e(n, m) = expf(A(n, m) - rowMax(n))
    O(n, m) = e(n, m) / rowMax(n)
}
)TC",
                 R"TE(program temporaries
  input f32 A(5,4)
  output f32 O(5,4)
  temp f32 rowMax(5)
  temp f32 e(5,4)
  rowMax(n) max=! A(n, m)   {m in 0:4, n in 0:5}
  e(n, m) = exp((A(n, m) - rowMax(n)))   {m in 0:4, n in 0:5}
  O(n, m) = (e(n, m) / rowMax(n))   {m in 0:4, n in 0:5}
)TE");
}

TEST(FrontGolden, Padded) {
  expectLowersTo(R"TC(# sizes: K=3 H=6 W=6 C=2
def padded(float(C, H, W) I, float(K, K) F) -> (float(C, H, W) O) {
    O(c, h, w) +=! (h + kh - 1 >= 0 && h + kh - 1 < H && w + kw - 1 >= 0 && w + kw - 1 < W) ? I(c, h + kh - 1, w + kw - 1) * F(kh, kw) : 0.0
        where kh in 0:K, kw in 0:K
}
)TC",
                 R"TE(program padded
  input f32 I(2,6,6)
  input f32 F(3,3)
  output f32 O(2,6,6)
  O(c, h, w) +=! (((((((h + kh) - 1) >= 0) && (((h + kh) - 1) < 6)) && (((w + kw) - 1) >= 0)) && (((w + kw) - 1) < 6)) ? (I(c, ((h + kh) - 1), ((w + kw) - 1)) * F(kh, kw)) : 0.0)   {c in 0:2, h in 0:6, kh in 0:3, kw in 0:3, w in 0:6}
)TE");
}

TEST(FrontGolden, Dims) {
  expectLowersTo(R"TC(# sizes: N=5 M=4
def dims(float(N, M) A) -> (O, P) {
    O(i, j) = A(i, j) where j in 0:A.1 - 1
    P(i) +=! O(i, j) * s where s = 2.0, j in 1:O.1
}
)TC",
                 R"TE(program dims
  input f32 A(5,4)
  output f32 O(5,3)
  output f32 P(5)
  O(i, j) = A(i, j)   {i in 0:5, j in 0:3}
  P(i) +=! (O(i, j) * 2.0)   {i in 0:5, j in 1:3}
)TE");
}

TEST(FrontGolden, Reversed) {
  expectLowersTo(R"TC(# sizes: N=5
def reversed(float(N) A) -> (O) {
    O(i) = A(N - 1 - i)
}
)TC",
                 R"TE(program reversed
  input f32 A(5)
  output f32 O(5)
  O(i) = A(((5 - 1) - i))   {i in 0:5}
)TE");
}

TEST(FrontGolden, Types) {
  expectLowersTo(R"TC(# sizes: N=5
def types(half(N) A, uint8(N) U, bool(N) Mk) -> (O, int8(N) Q) {
    O(i) = Mk(i) ? A(i) : fmax(U(i), 1)
    Q(i) = int8(U(i) % 3 + 1)
}
)TC",
                 R"TE(program types
  input f16 A(5)
  input u8 U(5)
  input bool Mk(5)
  output f32 O(5)
  output i8 Q(5)
  O(i) = (Mk(i) ? A(i) : max(f32(U(i)), 1.0))   {i in 0:5}
  Q(i) = i8(((U(i) % 3) + 1))   {i in 0:5}
)TE");
}

TEST(FrontGolden, Lut) {
  expectLowersTo(R"TC(# sizes: N=5 R=8 B=2
def lut(float(B, R) LUT, int32(B, N) I) -> (O) {
    O(b, n) +=! LUT(I(b, n), r)
}
)TC",
                 R"TE(program lut
  input f32 LUT(2,8)
  input i32 I(2,5)
  output f32 O(2,5)
  O(b, n) +=! LUT(I(b, n), r)   {b in 0:2, n in 0:5, r in 0:8}
)TE");
}

TEST(FrontGolden, Ops) {
  expectLowersTo(R"TC(# sizes: N=5
def ops(float(N) A) -> (O) {
    O(i) = -A(i) * 2 + 3 / 4 - 1.5e2 * (i > 1 || !(i <= 2) ? 1 : -1) + min(i, 2) + pow(A(i), 2)
}
)TC",
                 R"TE(program ops
  input f32 A(5)
  output f32 O(5)
  O(i) = ((((((-A(i)) * 2) + (3 / 4)) - (150.0 * (((i > 1) || (!(i <= 2))) ? 1 : -1))) + min(i, 2)) + pow(A(i), 2))   {i in 0:5}
)TE");
}
TEST(FrontGolden, ConvolutionStrided) {
  expectLowersTo(R"TC(# sizes: N=2 C=3 H=11 W=13 M=4 KH=3 KW=2
def convolution_strided(float(N, C, H, W) I, float(M, C, KH, KW) W1, float(M) B) -> (O) {
    O(n, m, h, w) +=! I(n, c, 2 * h + kh, 3 * w + kw) * W1(m, c, kh, kw)
    O(n, m, h, w) = O(n, m, h, w) + B(m)
}
)TC",
                 R"TE(program convolution_strided
  input f32 I(2,3,11,13)
  input f32 W1(4,3,3,2)
  input f32 B(4)
  output f32 O(2,4,5,4)
  O(n, m, h, w) +=! (I(n, c, ((2 * h) + kh), ((3 * w) + kw)) * W1(m, c, kh, kw))   {c in 0:3, h in 0:5, kh in 0:3, kw in 0:2, m in 0:4, n in 0:2, w in 0:4}
  O(n, m, h, w) = (O(n, m, h, w) + B(m))   {h in 0:5, m in 0:4, n in 0:2, w in 0:4}
)TE");
}

TEST(FrontGolden, Softmax) {
  expectLowersTo(R"TC(# sizes: N=2 D=5
def softmax(float(N, D) I) -> (O, maxVal, expDistance, expSum) {
    maxVal(n) max=! I(n, d)
    expDistance(n, d) = exp(I(n, d) - maxVal(n))
    expSum(n) +=! expDistance(n, d)
    O(n, d) = expDistance(n, d) / expSum(n)
}
)TC",
                 R"TE(program softmax
  input f32 I(2,5)
  output f32 O(2,5)
  output f32 maxVal(2)
  output f32 expDistance(2,5)
  output f32 expSum(2)
  maxVal(n) max=! I(n, d)   {d in 0:5, n in 0:2}
  expDistance(n, d) = exp((I(n, d) - maxVal(n)))   {d in 0:5, n in 0:2}
  expSum(n) +=! expDistance(n, d)   {d in 0:5, n in 0:2}
  O(n, d) = (expDistance(n, d) / expSum(n))   {d in 0:5, n in 0:2}
)TE");
}

TEST(FrontGolden, FlipStride) {
  expectLowersTo(R"TC(# sizes: W=13
def flip_stride(float(W) A) -> (O) {
    O(i) +=! A(W - 1 - 3 * i - k) where k in 0:2
}
)TC",
                 R"TE(program flip_stride
  input f32 A(13)
  output f32 O(4)
  O(i) +=! A((((13 - 1) - (3 * i)) - k))   {i in 0:4, k in 0:2}
)TE");
}

}  // namespace
}  // namespace tessel::front
