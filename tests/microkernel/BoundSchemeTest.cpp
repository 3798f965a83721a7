// Contractions recognized for micro-kernels, and schemes checked against them.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "microkernel/BoundScheme.h"
#include "microkernel/SchemeCodegen.h"

namespace tessel::microkernel {
namespace {

constexpr const char* kConvNhwc =
    "# sizes: N=1 HI=36 WI=36 C=256 K=512 R=3 S=3\n"
    "def conv(float(N, HI, WI, C) I, float(R, S, C, K) Wt) -> (O) {\n"
    "  O(n, h, w, k) +=! I(n, h + r, w + s, c) * Wt(r, s, c, k)\n"
    "    where h in 0:HI - R + 1, w in 0:WI - S + 1\n}\n";

Contraction contractionOf(const te::Program& p, int stage = 0) {
  Recognition r = recognizeContraction(p, stage);
  EXPECT_TRUE(r.contraction) << r.whyNot;
  return *r.contraction;
}

std::string whyNot(const std::string& tc) {
  return recognizeContraction(front::testing::lowerText(tc), 0).whyNot;
}

std::string bindError(const Contraction& c, const std::string& scheme, const std::string& isa = "avx512") {
  try {
    bindScheme(c, parseScheme(scheme, "--scheme"), vectorIsaNamed(isa));
  } catch (const UserError& e) {
    return e.render();
  }
  return "";
}

TEST(Contraction, ConvolutionDimensionsStridesAndOffsets) {
  te::Program p = front::testing::lowerText(kConvNhwc);
  Contraction c = contractionOf(p);
  EXPECT_EQ(c.dimNames(), "n, h, w, k, r, s, c");
  EXPECT_EQ(c.dim("h")->extent, 34);
  EXPECT_FALSE(c.dim("k")->reduction);
  EXPECT_TRUE(c.dim("c")->reduction);
  EXPECT_EQ(c.output.stride("k"), 1);
  EXPECT_EQ(c.output.stride("h"), 34 * 512);
  EXPECT_EQ(c.lhs.tensor, "I");
  EXPECT_EQ(c.lhs.stride("k"), 0);
  EXPECT_EQ(c.lhs.stride("w"), 256);
  EXPECT_EQ(c.lhs.stride("s"), 256);
  EXPECT_EQ(c.rhs.stride("k"), 1);
  EXPECT_EQ(c.lhs.offset({{"h", 1}, {"r", 2}}), 3 * 36 * 256);
  EXPECT_DOUBLE_EQ(c.flops(), 2.0 * 34 * 34 * 512 * 9 * 256);
}

TEST(Contraction, WhatIsNotOne) {
  EXPECT_EQ(whyNot("# sizes: N=4\ndef f(float(N) A) -> (B) {\n B(i) = A(i) * 2\n}\n"),
            "it is not an f32 sum reduction");
  EXPECT_EQ(whyNot("# sizes: N=4\ndef f(float(N,N) A) -> (B) {\n B(i) +=! A(i,j) * 2\n}\n"),
            "its right-hand side is not a product of two f32 tensor reads");
  EXPECT_EQ(whyNot("# sizes: N=4\ndef f(float(N,N) A) -> (B) {\n B(i) +=! A(i,j) + A(j,i)\n}\n"),
            "its right-hand side is not a product of two tensor reads");
  EXPECT_EQ(whyNot("# sizes: N=4\ndef f(float(N,N) A) -> (B) {\n B(i) +=! A(i,i) * A(j,i)\n}\n"),
            "A uses i in two subscripts");
  EXPECT_EQ(whyNot("# sizes: N=4\ndef f(double(N,N) A) -> (B) {\n B(i) +=! A(i,j) * A(j,i)\n}\n"),
            "it is not an f32 sum reduction");
  EXPECT_EQ(
      whyNot("# sizes: N=4\ndef f(float(N,N) A, int32(N) X) -> (B) {\n B(i) +=! A(i,X(j)) * A(j,i)\n}\n"),
      "a subscript of A is not affine");
}

constexpr const char* kConvSame =
    "# sizes: N=1 H=7 W=13 C=16 K=32 R=3\n"
    "def conv(float(N, H, W, C) I, float(R, R, C, K) Wt) -> (O) {\n"
    "  O(n, h, w, k) +=! (h + r - 1 >= 0 && h + r - 1 < H && w + s - 1 >= 0 && w + s - 1 < W\n"
    "      ? I(n, h + r - 1, w + s - 1, c) : 0) * Wt(r, s, c, k)\n"
    "    where h in 0:H, w in 0:W\n}\n";

TEST(Contraction, AGuardThatIsExactlyTheBoundsIsZeroPadding) {
  Contraction c = contractionOf(front::testing::lowerText(kConvSame));
  EXPECT_TRUE(c.lhs.padded());
  EXPECT_FALSE(c.rhs.padded());
  EXPECT_EQ(c.lhs.padBefore, (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(c.lhs.padAfter, (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(c.lhs.layoutShape(), (std::vector<int64_t>{1, 9, 15, 16}));
  EXPECT_EQ(c.lhs.stride("w"), 16);
  EXPECT_EQ(c.lhs.stride("h"), 15 * 16);
  // (h, r, w, s) = (0, 0, 0, 0) reads I(0, -1, -1, 0): the border's first element.
  EXPECT_EQ(c.lhs.offset({}), 0);
  EXPECT_EQ(c.lhs.offset({{"h", 1}, {"r", 1}, {"w", 2}}), (2 * 15 + 2) * 16);

  // The guard written the other way round, on the right operand, and with
  // a bound the domain never reaches, is the same padding.
  Contraction swapped = contractionOf(front::testing::lowerText(
      "# sizes: H=5 K=3\n"
      "def f(float(K) Wt, float(H) I) -> (O) {\n"
      "  O(h) +=! Wt(r) * (0 <= h + r - 1 && H > h + r - 1 && h + r - 1 > -5 ? I(h + r - 1) : 0)\n"
      "    where h in 0:H\n}\n"));
  EXPECT_EQ(swapped.rhs.padBefore, std::vector<int64_t>{1});
  EXPECT_EQ(swapped.rhs.padAfter, std::vector<int64_t>{1});
  // Scaled bounds (2h + 2r - 2 >= 0) too.
  Contraction scaled = contractionOf(front::testing::lowerText(
      "# sizes: H=5 K=3\n"
      "def f(float(H) I, float(K) Wt) -> (O) {\n"
      "  O(h) +=! (2 * h + 2 * r - 2 >= 0 && h + r < H + 1 ? I(h + r - 1) : 0) * Wt(r)\n"
      "    where h in 0:H\n}\n"));
  EXPECT_EQ(scaled.lhs.padBefore, std::vector<int64_t>{1});
}

TEST(Contraction, GuardsThatAreNotZeroPaddingAreRefused) {
  auto guarded = [](const std::string& guard, const std::string& otherwise = "0") {
    return whyNot("# sizes: H=5 K=3\ndef f(float(H) I, float(K) Wt) -> (O) {\n  O(h) +=! (" + guard +
                  " ? I(h + r - 1) : " + otherwise + ") * Wt(r)\n    where h in 0:H\n}\n");
  };
  EXPECT_EQ(
      guarded("h + r - 1 >= 1 && h + r - 1 < H"),
      "the guard of I is not exactly the bounds of its subscript #0 (only zero padding is in the class)");
  EXPECT_EQ(
      guarded("h + r - 1 >= 0 && h + r - 1 < H - 1"),
      "the guard of I is not exactly the bounds of its subscript #0 (only zero padding is in the class)");
  EXPECT_EQ(guarded("h + r - 1 >= 0 && h < H"),
            "the guard of I bounds something other than one of its subscripts");
  EXPECT_EQ(guarded("h + r - 1 >= 0 || h + r - 1 < H"),
            "the guard of I is not a conjunction of affine comparisons");
  EXPECT_EQ(guarded("h + r - 1 >= 0 && h + r - 1 < H", "1"),
            "its right-hand side is not a product of two f32 tensor reads");
  // Half a guard: the read still leaves I on the other side.
  EXPECT_EQ(
      guarded("h + r - 1 >= 0"),
      "the guard of I is not exactly the bounds of its subscript #0 (only zero padding is in the class)");
}

TEST(BoundScheme, APaddedOperandIsReadFromItsZeroBorderedCopy) {
  Contraction c = contractionOf(front::testing::lowerText(kConvSame));
  const std::string loops = "R_n, R_h, R_w, R_r, R_s, R_c, U_{2,k}, V_k";
  BoundScheme b = bindScheme(c, parseScheme(loops, "x"), vectorIsaNamed("avx512"));
  EXPECT_EQ(b.layouts, std::vector<std::string>{"I"});  // laid out without an L_I
  EXPECT_EQ(layoutText(b.contraction->lhs),
            "I[#0:1][#1:9][#2:15][#3:16] with a zero border of 0+0, 1+1, 1+1, 0+0");
  // An L_I reorders the padded copy.
  BoundScheme nchw =
      bindScheme(c, parseScheme("L_I(#0, c, #1, #2), " + loops, "x"), vectorIsaNamed("avx512"));
  EXPECT_EQ(nchw.layouts, std::vector<std::string>{"I"});
  EXPECT_EQ(nchw.contraction->lhs.stride("c"), 9 * 15);
  EXPECT_EQ(nchw.contraction->lhs.stride("w"), 1);
  EXPECT_NE(
      bindError(c, "R_n, R_h, R_w, P_I, R_r, R_s, R_c, U_{2,k}, V_k")
          .find("1:16: error: bad scheme: P_I: I is read through its zero-padded copy (its guard), which is "
                "not packed"),
      std::string::npos)
      << bindError(c, "R_n, R_h, R_w, P_I, R_r, R_s, R_c, U_{2,k}, V_k");
  // A lone loop variable that runs past its tensor is padded too, and then not split.
  Contraction lone =
      contractionOf(front::testing::lowerText("# sizes: H=5 K=3\n"
                                              "def f(float(H) I, float(K, 2) Wt) -> (O) {\n"
                                              "  O(k, h) +=! (h < H ? I(h) : 0) * Wt(k, j)\n"
                                              "    where h in 0:H + 3\n}\n"));
  EXPECT_EQ(lone.lhs.padAfter, std::vector<int64_t>{3});
  EXPECT_NE(bindError(lone, "L_I(h/4, h%4), R_k, R_h")
                .find("L_I: subscript #0 of I reads zero padding (its guard); a "
                      "padded subscript cannot be split into blocks"),
            std::string::npos)
      << bindError(lone, "L_I(h/4, h%4), R_k, R_h");
}

TEST(BoundScheme, ExtentsTripsAndRegisterTile) {
  te::Program p = front::testing::lowerText(kConvNhwc);
  Contraction c = contractionOf(p);
  BoundScheme b =
      bindScheme(c,
                 parseScheme("R_n, T_{16,k}, lambda_h b.[(2,11),(1,12)], T_{17,w}, T_{3,s}, T_{3,r}, "
                             "T_{2,w}, T_{256,c}, U_{b,h}, U_{2,k}, V_k",
                             "x"),
                 vectorIsaNamed("avx512"));
  EXPECT_EQ(b.registerTileStart, 8u);
  EXPECT_EQ(b.extentsFrom(0, {}).at("h"), 34);
  EXPECT_EQ(b.extentsFrom(3, {{"b", 11}}).at("h"), 11);
  EXPECT_EQ(b.extentsFrom(3, {{"b", 11}}).at("w"), 34);
  EXPECT_EQ(b.trips(0, {}), 1);
  EXPECT_EQ(b.allBindings().size(), 2u);
  RegisterTileShape tile = b.registerTile({{"b", 12}});
  EXPECT_EQ(tile.accumulators.size(), 24u);
  EXPECT_EQ(tile.steps.size(), 1u);
  EXPECT_EQ(tile.vectorDim, "k");
  EXPECT_EQ(tile.accumulators[1].at("k"), 16);
  EXPECT_EQ(tile.accumulators[2].at("h"), 1);
  // The weights (2 vectors) stay in registers and the input is broadcast,
  // into a register since each broadcast feeds two multiply-adds.
  EXPECT_FALSE(keepsLeftOperand(c, tile));
  EXPECT_EQ(registersNeeded(c, tile, vectorIsaNamed("avx512")), 27);
  EXPECT_EQ(registersNeeded(c, tile, vectorIsaNamed("avx2")), 27);
}

TEST(BoundScheme, EveryRuleBrokenIsLocatedAndExplained) {
  te::Program p = front::testing::lowerText(kConvNhwc);
  Contraction c = contractionOf(p);
  const std::string tail = ", R_c, T_{3,r}, T_{3,s}";
  auto has = [](const std::string& error, const std::string& text) {
    EXPECT_NE(error.find(text), std::string::npos) << error;
  };
  has(bindError(c, "R_n, R_x"),
      "1:6: error: bad scheme: 'x' is not a dimension of the contraction (n, h, w, k, r, s, c)");
  EXPECT_EQ(bindError(c, "R_n, R_h, R_w, R_k" + tail), "");
  has(bindError(c, "R_n, R_h, R_w, R_k, U_{2,c}, T_{3,r}, T_{3,s}, T_{128,c}"),
      "T_{3,r} is inside the register tile: U and V specifiers must come last");
  has(bindError(c, "R_n, R_h, R_w, V_k, R_k" + tail), "V must be the innermost specifier");
  has(bindError(c, "R_n, R_h, R_w, R_k, T_{3,r}, T_{3,s}, T_{16,c}, V_c"),
      "V_c vectorizes a reduction dimension");
  has(bindError(c, "R_n, R_h, R_w, R_k" + tail + ", V_h"), "V_h needs the output O contiguous along h");
  has(bindError(c, "R_n, R_h, R_w, R_k" + tail + ", V_k", ""), "V needs a vector instruction set");
  has(bindError(c, "R_n, R_h, R_w, R_k" + tail + ", V_{17,k}"),
      "V_{17,k} asks for 17 lanes; a avx512 vector has 16");
  has(bindError(c, "R_n, R_h, R_w, R_k" + tail + ", V_{8,k}", "avx2"), "");
  has(bindError(c, "R_n, R_h, R_w, R_k" + tail + ", V_{4,k}", "avx2"),
      "V_{4,k}: a vector of 4 lanes out of 8 needs AVX-512's masked loads and stores");
  has(bindError(c, "R_n, R_h, R_w, R_k" + tail + ", V_{a,k}"), "'a' is not bound by an enclosing lambda");
  has(bindError(c, "T_{2,h}, R_h, R_n, R_w, R_k" + tail), "R_h must be the outermost specifier along h");
  has(bindError(c, "R_n, R_h, R_w, R_k, R_c, T_{3,r}, T_{3,s}, U_{a,k}"),
      "'a' is not bound by an enclosing lambda");
  has(bindError(c, "R_n, lambda_h a.[(1,10),(2,12)], lambda_w a.[(1,10),(2,12)], R_k" + tail),
      "the lambda parameter 'a' is already bound");
  has(bindError(c, "R_n, R_h, T_{4,w}, R_k" + tail), "the scheme covers 4 along w, whose extent is 34");
  has(bindError(c, "R_n, R_h, R_k" + tail),
      "the scheme covers 1 along w, whose extent is 34 (add R_w or T_{34,w})");
  has(bindError(c, "R_n, R_h, R_w, R_k, R_c, T_{3,r}, T_{2,s}"),
      "the scheme covers 2 along s, whose extent is 3");
  has(bindError(c, "R_n, R_h, R_w, R_k, T_{3,r}, T_{3,s}, R_c, U_{3,c}"),
      "the specifiers inside R_c cover 3 along c, which does not divide its extent 256");
  EXPECT_EQ(bindError(c, "R_n, lambda_h a.[(1,10),(2,12)], R_w, R_k" + tail + ", U_{a,h}"), "");
  has(bindError(c, "R_n, lambda_h a.[(2,11),(1,12)], R_w, T_{32,k}" + tail + ", U_{a,k}"),
      "the lambda's loops cover different extents along k (352 and 384)");
  has(bindError(c, "R_n, R_h, R_w, R_k" + tail + ", U_{17,h}, U_{2,k}, V_k"),
      "the register tile needs 37 registers (34 accumulators, 2 kept operand values, 1 streamed); avx512 has "
      "32");
  // r unrolled over 17 rows of h: the input rows h + r that several steps read stay in registers.
  has(bindError(c, "R_n, R_w, R_k, R_c, T_{3,s}, T_{2,h}, U_{3,r}, U_{17,h}, U_{1,k}, V_k"),
      "the register tile needs 35 registers (17 accumulators, 1 kept operand values, 17 streamed values "
      "shared by unrolled steps); avx512 has 32");
  EXPECT_EQ(bindError(c, "R_n, R_w, R_k, R_c, T_{3,s}, T_{2,h}, T_{3,r}, U_{17,h}, U_{1,k}, V_k"), "");
  // One vector wide, each broadcast feeds one multiply-add: its memory operand.
  has(bindError(c, "R_n, R_h, R_w, R_k" + tail + ", U_{34,w}, U_{1,k}, V_k"),
      "the register tile needs 35 registers (34 accumulators, 1 kept operand values); avx512 has 32");
  has(bindError(c, "R_n, R_h, R_w, R_k" + tail + ", U_{17,h}, U_{1,k}, V_k", "avx2"),
      "the register tile needs 19 registers (17 accumulators, 1 kept operand values, 1 streamed); avx2 has "
      "16");
  has(bindError(c, "R_n, R_h, R_w, R_k, T_{128,c}, U_{3,r}, U_{3,s}, U_{2,c}, U_{17,w}, U_{2,k}"),
      "the register tile unrolls 612 multiply-adds per step; at most 512");
}

TEST(BoundScheme, PackingsAreTakenOutOfTheLoopsAndChecked) {
  te::Program p = front::testing::lowerText(kConvNhwc);
  Contraction c = contractionOf(p);
  BoundScheme b = bindScheme(c,
                             parseScheme("R_n, T_{16,k}, P_Wt, R_h, R_w, P_I, T_{3,r}, T_{3,s}, T_{256,c}, "
                                         "U_{2,k}, V_k",
                                         "x"),
                             vectorIsaNamed("avx512"));
  ASSERT_EQ(b.packings.size(), 2u);
  EXPECT_EQ(b.packings[0].tensor, "Wt");
  EXPECT_EQ(b.packings[0].before, 2u);
  EXPECT_EQ(b.packings[1].before, 4u);
  EXPECT_EQ(b.scheme.specs.size(), 9u);
  EXPECT_EQ(toString(b.original).substr(0, 19), "R_n, T_{16,k}, P_Wt");
  const std::string loops = "R_n, R_h, R_w, R_k, R_c, T_{3,r}, T_{3,s}";
  auto has = [&](const std::string& scheme, const std::string& text) {
    std::string e = bindError(c, scheme);
    EXPECT_NE(e.find(text), std::string::npos) << e;
  };
  has("P_O, " + loops, "P_O packs the output; only the operands (I, Wt) can be packed");
  has("P_X, " + loops, "'X' is not an operand of the contraction (I, Wt)");
  has("P_I, R_n, P_I, R_h, R_w, R_k, R_c, T_{3,r}, T_{3,s}", "I is packed twice");
  has("R_n, R_h, R_w, R_k, R_c, T_{3,r}, P_I, T_{3,s}",
      "P_I must come before the reduction loops right above the register tile");
  has("P_Wt", "a scheme needs loops, not only P");
  EXPECT_EQ(bindError(c, "P_I, " + loops), "");  // the whole input, 1.3 MiB

  Contraction big = contractionOf(front::testing::lowerText(
      "# sizes: M=8192 N=16 K=4096\n"
      "def mm(float(M, K) A, float(K, N) B) -> (C) {\n  C(m, n) +=! A(m, k) * B(k, n)\n}\n"));
  std::string e = bindError(big, "P_A, R_m, R_n, R_k");
  EXPECT_NE(e.find("P_A would copy 134217728 bytes per thread; at most 64 MiB"), std::string::npos) << e;
  EXPECT_EQ(bindError(big, "R_m, P_A, R_n, R_k"), "");
  Contraction backwards = contractionOf(front::testing::lowerText(
      "# sizes: N=8\n"
      "def f(float(N, N) A, float(N) B) -> (C) {\n  C(i) +=! A(7 - i, j) * B(j)\n}\n"));
  e = bindError(backwards, "P_A, R_i, R_j");
  EXPECT_NE(e.find("P_A: A is read backwards along i"), std::string::npos) << e;
}

TEST(BoundScheme, LayoutsChangeTheOperandsStridesAndOffsets) {
  te::Program p = front::testing::lowerText(kConvNhwc);
  Contraction c = contractionOf(p);
  BoundScheme b = bindScheme(c,
                             parseScheme("R_n, R_k, R_h, R_w, L_Wt(k/64, r, s, c, k%64), T_{3,r}, T_{3,s}, "
                                         "T_{256,c}, U_{4,k}, V_k",
                                         "x"),
                             vectorIsaNamed("avx512"));
  EXPECT_EQ(b.layouts, std::vector<std::string>{"Wt"});
  EXPECT_EQ(b.scheme.specs.size(), 9u);
  const TensorAccess& wt = b.contraction->rhs;
  EXPECT_EQ(wt.layoutShape(), (std::vector<int64_t>{8, 3, 3, 256, 64}));
  EXPECT_EQ(wt.stride("k"), 1);
  EXPECT_EQ(wt.stride("c"), 64);
  EXPECT_EQ(wt.stride("s"), 256 * 64);
  // k = 70: block 1, place 6.
  EXPECT_EQ(wt.offset({{"k", 70}, {"c", 2}}), 3 * 3 * 256 * 64 + 2 * 64 + 6);
  EXPECT_EQ(c.rhs.stride("c"), 512);                // the program's own layout is untouched
  EXPECT_EQ(registerTileSpans(b, "k").size(), 8u);  // tiles of 64 at 0, 64, ..., 448
}

TEST(BoundScheme, LayoutMistakesAreLocatedAndExplained) {
  te::Program p = front::testing::lowerText(kConvNhwc);
  Contraction c = contractionOf(p);
  const std::string loops = "R_n, R_k, R_h, R_w, T_{3,r}, T_{3,s}, T_{256,c}, U_{2,k}, V_k";
  auto has = [&](const std::string& layout, const std::string& text) {
    std::string e = bindError(c, layout + ", " + loops);
    EXPECT_NE(e.find(text), std::string::npos) << layout << "\n" << e;
  };
  EXPECT_EQ(bindError(c, "L_Wt(k/32, r, s, c, k%32), " + loops), "");
  EXPECT_EQ(bindError(c, "L_I(#0, c, #1, #2), " + loops), "");  // NHWC read as NCHW
  has("L_O(n, h, k/24, w, k%24)",
      "L_O splits k into blocks of 24, but a register tile covers k 0..31, across a block boundary");
  has("L_O(n, h, w)", "L_O must list subscript #3 of O");
  has("L_X(k)", "'X' is not an operand of the contraction (I, Wt)");
  has("L_Wt(r, s, c)", "L_Wt must list subscript #3 of Wt");
  has("L_Wt(r, s, c, k/16)", "must list subscript #3 of Wt both as its block number (/b) and as its place");
  has("L_Wt(r, s, c, k, k%16)", "1:18: error: bad scheme: L_Wt: subscript #3 appears twice");
  has("L_Wt(k/16, r, s, c, k%32)", "subscript #3 is split by 16 and by 32");
  has("L_Wt(r, s, c, #4)", "#4 is not a subscript position of Wt (it has 4)");
  has("L_I(n, h, w, c)", "1:8: error: bad scheme: L_I: no subscript of I is the loop variable 'h' alone");
  has("L_I(n, #1/4, #2, c, #1%4)", "only a subscript that is one loop variable can be split into blocks");
  has("L_Wt(k/24, r, s, c, k%24)",
      "L_Wt splits k into blocks of 24, but a register tile covers k 0..31, across a block boundary");
  has("L_Wt(r, s, c, k), L_Wt(r, s, c, k)", "Wt is laid out twice");
  has("L_Wt(r, s, k, c)", "V_k needs Wt contiguous or invariant along k (its stride there is 256)");
  std::string e =
      bindError(c, "L_Wt(r, s, c, k), R_n, R_k, R_h, R_w, P_Wt, T_{3,r}, T_{3,s}, T_{256,c}, V_k");
  EXPECT_NE(e.find("Wt is both packed (P_Wt) and laid out (L_Wt)"), std::string::npos) << e;
}

TEST(BoundScheme, TheOutputCanBeWrittenInALayoutOfItsOwn) {
  // NCHW: only w is contiguous in the output; written as NHWC, k vectorizes.
  Contraction c =
      contractionOf(front::testing::lowerText("# sizes: N=1 C=8 H=7 W=7 K=32\n"
                                              "def conv(float(N, C, H, W) I, float(K, C, 3, 3) Wt) -> (O) {\n"
                                              "  O(n, k, h, w) +=! I(n, c, h + kh, w + kw) * Wt(k, c, kh, "
                                              "kw) where h in 0:H - 2, w in 0:W - 2\n}\n"));
  const std::string loops = "R_n, R_h, R_w, R_c, R_kh, R_kw, U_{2,k}, V_k";
  EXPECT_NE(
      bindError(c, "L_Wt(k/32, c, kh, kw, k%32), " + loops)
          .find("1:71: error: bad scheme: V_k needs the output O contiguous along k (its stride there is 25; "
                "an L_O with k last writes it so)"),
      std::string::npos)
      << bindError(c, "L_Wt(k/32, c, kh, kw, k%32), " + loops);
  BoundScheme b = bindScheme(c, parseScheme("L_O(n, h, w, k), L_Wt(k/32, c, kh, kw, k%32), " + loops, "x"),
                             vectorIsaNamed("avx512"));
  EXPECT_TRUE(b.outputLaidOut());
  EXPECT_EQ(b.contraction->output.stride("k"), 1);
  EXPECT_EQ(b.contraction->output.stride("w"), 32);
  EXPECT_EQ(layoutText(b.contraction->output), "O[#0:1][#2:5][#3:5][#1:32]");
  EXPECT_FALSE(bindScheme(c, parseScheme("L_O(n, k, h, w), R_n, R_k, R_h, R_c, R_kh, R_kw, V_{5,w}", "x"),
                          vectorIsaNamed("avx512"))
                   .layouts.empty());
}

TEST(BoundScheme, VectorAccessesMustBeContiguousOrInvariant) {
  te::Program p = front::testing::lowerText(
      "# sizes: N=1 C=8 K=16 HI=9 WI=33\n"
      "def conv(float(N, C, HI, WI) I, float(K, C, 3, 3) Wt) -> (O) {\n"
      "  O(n, k, h, w) +=! I(n, c, 2 * h + r, 2 * w + s) * Wt(k, c, r, s)\n"
      "    where h in 0:(HI - 3) / 2 + 1, w in 0:(WI - 3) / 2 + 1\n}\n");
  Contraction c = contractionOf(p);
  EXPECT_NE(bindError(c, "R_n, R_k, R_h, R_c, R_r, R_s, V_w")
                .find("V_w needs I contiguous or invariant along w "
                      "(its stride there is 2)"),
            std::string::npos);
}

}  // namespace
}  // namespace tessel::microkernel
