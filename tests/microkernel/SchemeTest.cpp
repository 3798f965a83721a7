// The scheme language (paper 002 §1.3): parsing, printing, located errors.
#include <gtest/gtest.h>

#include "microkernel/Scheme.h"

namespace tessel::microkernel {
namespace {

std::string errorOf(const std::string& text) {
  try {
    parseScheme(text, "--scheme");
  } catch (const UserError& e) {
    return e.render();
  }
  return "";
}

TEST(Scheme, ParsesThePapersConvolutionScheme) {
  Scheme s = parseScheme(
      "[T_{16,k}, T_{1,h}, λseq_h b.[(2,11),(1,12)], T_{17,w}, T_{3,s}, T_{3,r}, T_{2,w}, T_{256,c}, "
      "U_{b,h}, "
      "U_{2,k}, V_k]",
      "--scheme");
  ASSERT_EQ(s.specs.size(), 11u);
  EXPECT_EQ(s.specs[2].kind, SpecKind::Seq);
  EXPECT_EQ(s.specs[2].dim, "h");
  EXPECT_EQ(s.specs[2].param, "b");
  EXPECT_EQ(s.specs[2].branches, (std::vector<std::pair<int64_t, int64_t>>{{2, 11}, {1, 12}}));
  EXPECT_EQ(s.specs[8].kind, SpecKind::U);
  EXPECT_EQ(s.specs[8].factor.param, "b");
  EXPECT_EQ(s.specs[10].kind, SpecKind::V);
  EXPECT_EQ(toString(s),
            "T_{16,k}, T_{1,h}, lambda_h b.[(2,11),(1,12)], T_{17,w}, T_{3,s}, T_{3,r}, T_{2,w}, T_{256,c}, "
            "U_{b,h}, U_{2,k}, V_k");
}

TEST(Scheme, PackingSpecifiersNameATensor) {
  Scheme s = parseScheme("T_{4,k}, P_B, R_m, P_{A}, T_{64,k}, U_{6,m}, V_n", "x");
  ASSERT_EQ(s.specs.size(), 7u);
  EXPECT_EQ(s.specs[1].kind, SpecKind::P);
  EXPECT_EQ(s.specs[1].dim, "B");
  EXPECT_EQ(toString(s), "T_{4,k}, P_B, R_m, P_A, T_{64,k}, U_{6,m}, V_n");
}

TEST(Scheme, LayoutSpecifiersListTheOperandsDimensions) {
  Scheme s = parseScheme("L_{Wt}(k/64, r, #2, c, k % 64), R_k, V_k", "x");
  ASSERT_EQ(s.specs.size(), 3u);
  EXPECT_EQ(s.specs[0].kind, SpecKind::L);
  EXPECT_EQ(s.specs[0].dim, "Wt");
  ASSERT_EQ(s.specs[0].layout.size(), 5u);
  EXPECT_EQ(s.specs[0].layout[0].dim, "k");
  EXPECT_EQ(s.specs[0].layout[0].split, '/');
  EXPECT_EQ(s.specs[0].layout[0].block, 64);
  EXPECT_EQ(s.specs[0].layout[2].position, 2);
  EXPECT_EQ(s.specs[0].layout[2].split, 0);
  EXPECT_EQ(s.specs[0].layout[4].split, '%');
  EXPECT_EQ(toString(s), "L_Wt(k/64, r, #2, c, k%64), R_k, V_k");
  EXPECT_EQ(toString(parseScheme(toString(s), "x")), toString(s));
  EXPECT_NE(errorOf("L_W(k/0)").find("1:7: error: bad scheme: a block size must be at least 1"),
            std::string::npos);
  EXPECT_NE(errorOf("L_W k").find("expected '(' to open the layout's list"), std::string::npos);
  EXPECT_NE(errorOf("L_W()").find("1:5: error: bad scheme: expected a subscript"), std::string::npos);
  EXPECT_NE(errorOf("L_W(#)").find("expected a subscript position after '#'"), std::string::npos);
  EXPECT_NE(errorOf("L_W(k, r").find("expected ')' to close the layout's list"), std::string::npos);
}

TEST(Scheme, PartialVectorsNameTheirLanes) {
  Scheme s = parseScheme("lambda_n v.[(2,16),(1,12)], R_k, V_{v,n}", "x");
  EXPECT_EQ(s.specs[2].kind, SpecKind::V);
  EXPECT_EQ(s.specs[2].factor.param, "v");
  EXPECT_EQ(toString(s), "lambda_n v.[(2,16),(1,12)], R_k, V_{v,n}");
  EXPECT_EQ(toString(parseScheme("R_n, V_{12,n}", "x")), "R_n, V_{12,n}");
  EXPECT_EQ(toString(parseScheme("R_n, V_n", "x")), "R_n, V_n");
  EXPECT_NE(errorOf("V_{0,n}").find("a loop factor must be at least 1"), std::string::npos);
  EXPECT_NE(errorOf("V_{4,}").find("1:6: error: bad scheme: expected a dimension"), std::string::npos);
}

TEST(Scheme, PrintedTextParsesBackToTheSameScheme) {
  std::string text = "R_j, lambda_i a.[(12,6),(8,7)], T_{64,k}, U_{a,i}, U_{2,j}, V_j";
  Scheme s = parseScheme(text, "x");
  EXPECT_EQ(toString(s), text);
  EXPECT_EQ(toString(parseScheme(toString(s), "x")), text);
  // Spaces, braces around a dimension and the other lambda spellings.
  EXPECT_EQ(toString(parseScheme(
                "  R_{j} ,seq_i a . [ (12 , 6) , (8,7) ] ,T_{ 64 , k },U_{a,i},U_{2,j},V_{j} ", "x")),
            text);
}

TEST(Scheme, ErrorsPointAtTheirColumn) {
  EXPECT_NE(errorOf("").find("the scheme is empty"), std::string::npos);
  EXPECT_NE(errorOf("[]").find("the scheme is empty"), std::string::npos);
  std::string e = errorOf("R_k, X_{2,h}");
  EXPECT_NE(e.find("--scheme:1:6: error: bad scheme: expected a specifier"), std::string::npos) << e;
  EXPECT_NE(e.find("  R_k, X_{2,h}\n       ^"), std::string::npos) << e;
  EXPECT_NE(errorOf("T_{0,h}").find("--scheme:1:4: error: bad scheme: a loop factor must be at least 1"),
            std::string::npos);
  EXPECT_NE(errorOf("T_{2 h}").find("1:6: error: bad scheme: expected ','"), std::string::npos);
  EXPECT_NE(errorOf("R_k V_k").find("1:5: error: bad scheme: expected ',' between specifiers"),
            std::string::npos);
  EXPECT_NE(errorOf("[R_k, V_k").find("expected ',' or ']'"), std::string::npos);
  EXPECT_NE(errorOf("[R_k] x").find("unexpected text after ']'"), std::string::npos);
  EXPECT_NE(errorOf("lambda_h b.[(2,11)]").find("1:1: error: bad scheme: a lambda needs at least two"),
            std::string::npos);
  EXPECT_NE(errorOf("lambda_h b.[(2,11),(1 12)]").find("expected ','"), std::string::npos);
  EXPECT_NE(errorOf("T_{99999999999,h}").find("a loop factor is too large"), std::string::npos);
  EXPECT_NE(errorOf("R_").find("expected a dimension"), std::string::npos);
  EXPECT_NE(errorOf("R_k,").find("expected a specifier"), std::string::npos);
}

TEST(Scheme, ATensorPrefixIsTheCallersAndErrorsStillPointIntoTheWholeText) {
  Scheme s = parseScheme("O: R_k, V_k", "--scheme", 2);
  EXPECT_EQ(toString(s), "R_k, V_k");
  try {
    parseScheme("O: R_k, Q_k", "--scheme", 2);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.loc().col, 9);
  }
}

}  // namespace
}  // namespace tessel::microkernel
