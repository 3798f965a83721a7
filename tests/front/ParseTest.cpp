// Lexer, parser and module API of the TC front end.
#include <gtest/gtest.h>

#include "FrontTestUtil.h"
#include "front/Frontend.h"

namespace tessel::front {
namespace {

using namespace testing;

const char* kTwoDefs = R"TC(# Two defs.
#
# sizes: M=4 K=3 N=5
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
def cast(float(M, 7) A) -> (int32(M, Q) O) {
    O(m, q) = int32(A(m, q))
}
)TC";

TEST(FrontParse, DefNamesInFileOrder) {
  auto m = parse({"two.tc", kTwoDefs});
  EXPECT_EQ(defNames(*m), (std::vector<std::string>{"matmul", "cast"}));
}

TEST(FrontParse, SizeNamesInOrderOfFirstAppearance) {
  auto m = parse({"two.tc", kTwoDefs});
  EXPECT_EQ(sizeNames(*m, "matmul"), (std::vector<std::string>{"M", "K", "N"}));
  // literal dimensions are not sizes; typed outputs contribute theirs
  EXPECT_EQ(sizeNames(*m, "cast"), (std::vector<std::string>{"M", "Q"}));
}

TEST(FrontParse, SizeNamesNeedAnEntryWhenSeveralDefs) {
  auto m = parse({"two.tc", kTwoDefs});
  try {
    sizeNames(*m, "");
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.reason(),
              "the file defines several defs (matmul, cast); name the one to compile (--entry NAME on the "
              "command line)");
    EXPECT_EQ(std::string(e.what()), "two.tc: error: " + e.reason());
  }
}

TEST(FrontParse, UnknownEntry) {
  auto m = parse({"two.tc", kTwoDefs});
  try {
    lower(*m, "conv", {});
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.reason(), "no def named 'conv' (the file defines matmul, cast)");
  }
}

TEST(FrontParse, DefaultSizesFromLeadingComments) {
  auto sizes = defaultSizes({"", kTwoDefs});
  EXPECT_EQ(sizes, (std::map<std::string, int64_t>{{"M", 4}, {"K", 3}, {"N", 5}}));
  // several lines, commas, and a blank line inside the block
  auto more = defaultSizes({"", "# sizes: A=1, B=2\n\n  #sizes: C=30\ndef f() -> (O) {}\n# sizes: D=4\n"});
  EXPECT_EQ(more, (std::map<std::string, int64_t>{{"A", 1}, {"B", 2}, {"C", 30}}));
  EXPECT_TRUE(defaultSizes({"", "def f() -> (O) {}\n"}).empty());
}

TEST(FrontParse, DefaultSizesMalformed) {
  try {
    defaultSizes({"s.tc", "# header\n# sizes: M=4 N=x\n"});
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.reason(), "expected a positive integer value for size 'N'");
    EXPECT_EQ(e.loc().line, 2);
    EXPECT_EQ(e.loc().col, 16);
    EXPECT_EQ(e.render(), "s.tc:2:16: error: " + e.reason() + "\n  # sizes: M=4 N=x\n                 ^");
  }
}

TEST(FrontParse, RenderedErrorShowsFileLineAndCaret) {
  try {
    parse({"bad.tc", "def f(float(N) A) -> (O) {\n  O(i) = A(i) @ 2\n}\n"});
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.render(),
              "bad.tc:2:15: error: unexpected character '@'\n    O(i) = A(i) @ 2\n                ^");
  }
}

TEST(FrontParse, LexErrors) {
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = A(i) & 1\n}\n",
                  "unexpected character '&' (did you mean '&&'?)", 2, 15);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = A(i) * 2h\n}\n", "malformed number '2h'", 2, 17);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = A(i) * 99999999999\n}\n",
                  "integer literal 99999999999 does not fit in int32", 2, 17);
}

TEST(FrontParse, SyntaxErrors) {
  EXPECT_TC_ERROR("", "expected 'def' but the file has no definition", 1, 1);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = (A(i) + 1\n}\n", "expected ')' but found '}'", 3, 1);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = A(i)\n", "expected '}' to close def 'f'", 3, 1);
  EXPECT_TC_ERROR(
      "def f(float(N) A) -> (O) {\n  O(i) : A(i)\n}\n",
      "expected '=' or a reduction operator (+=, *=, min=, max=, optionally followed by '!') but found ':'",
      2, 8);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = A(i) +\n}\n", "expected an expression but found '}'",
                  3, 1);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = min(A(i), 1, 2)\n}\n",
                  "'min' takes 2 arguments but is given 3", 2, 10);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = i > 0 and 1\n}\n",
                  "expected '=' or a reduction operator", 2, 20);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = (i > 0 and i < 2) ? A(i) : 0\n}\n",
                  "expected ')' but found 'and' (TC writes logical and as '&&')", 2, 17);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = float A(i)\n}\n",
                  "expected '(' after type name 'float'", 2, 16);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = A.x\n}\n", "expected a dimension number after '.'", 2,
                  12);
}

TEST(FrontParse, SignatureErrors) {
  EXPECT_TC_ERROR("def f(float(N) A, int(3) S) -> (O) {\n}\n", "unknown type 'int'", 1, 19);
  EXPECT_TC_ERROR("def f(A) -> (O) {\n}\n", "input 'A' needs a type, e.g. float(N) A or float A", 1, 7);
  EXPECT_TC_ERROR("def f(float(N) float) -> (O) {\n}\n",
                  "'float' is a type name and cannot be used as an input name", 1, 16);
  EXPECT_TC_ERROR(
      "def f(float(N) A) -> (O) {\n  O(i) = A(i)\n}\ndef f(float(N) A) -> (O) {\n  O(i) = A(i)\n}\n",
      "def 'f' is defined twice", 4, 5);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  float(i) = A(i)\n}\n",
                  "'float' is a type name and cannot be used as a tensor name to start a statement", 2, 3);
}

TEST(FrontParse, UnsupportedConstructs) {
  EXPECT_TC_ERROR("def f(float(N) A) -> (O, P) {\n  O, P = g(A)\n}\n",
                  "unsupported: calling a def ('g'); Tessel compiles each def on its own", 2, 10);
  EXPECT_TC_ERROR("def f(float(N) A) -> (O) {\n  O(i) = A(i) <=> B(i)\n}\n",
                  "unsupported: '<=>' equivalence annotations are not supported by Tessel", 2, 15);
  EXPECT_TC_ERROR("# sizes: N=3\ndef f(float(N) A, float c) -> (O) {\n  O(i) = c where exists A(i) + 1\n}\n",
                  "'where exists' takes one tensor read, such as 'where exists A(i)'", 3, 30);
}

TEST(FrontParse, ReductionOperatorsLex) {
  // `min=!` is one token; `min(` is the binary min; `max==` is max followed by ==.
  auto p = lowerText(R"TC(# sizes: N=4 M=3
def f(float(N, M) A) -> (O, P, Q, R) {
    O(i) min=! A(i, j)
    P(i) max=! A(i, j)
    Q(i) *=! min(A(i, 0), 1.0)
    R(i) = max(A(i, 0), 2.0) == 2.0 ? 1 : 0
}
)TC");
  ASSERT_EQ(p.stages.size(), 4u);
  EXPECT_EQ(p.stages[0].reduction, te::Reduction::Min);
  EXPECT_TRUE(p.stages[0].init);
  EXPECT_EQ(p.stages[1].reduction, te::Reduction::Max);
  // `*=!` with nothing to reduce is a plain assignment (TC rule)
  EXPECT_EQ(p.stages[2].reduction, te::Reduction::None);
  EXPECT_FALSE(p.stages[2].init);
  EXPECT_EQ(te::toString(p.stages[3].rhs), "((max(A(i, 0), 2.0) == 2.0) ? 1 : 0)");
}

TEST(FrontParse, FileNameInLocations) {
  try {
    lower(*parse({"dir/k.tc", "def f(float(N) A) -> (O) {\n  O(i) = B(i)\n}\n"}), "", {{"N", 3}});
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.render(),
              "dir/k.tc:2:10: error: unknown tensor or function 'B'\n    O(i) = B(i)\n           ^");
  }
}

}  // namespace
}  // namespace tessel::front
