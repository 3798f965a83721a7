// Elementwise inlining (paper 001 Alg. 5, --inline on): a temporary
// whose elements are each read once disappears into its reader; one that a
// stencil or a broadcast reads, or whose inputs change before its reader,
// stays. The cheap rule (the default, --inline cheap) recomputes a temporary
// of a few cheap operations on the inputs that is larger than the private
// caches, wherever it is read, within bounds on the reads per element. Every
// kernel is checked against the interpreter at awkward sizes.
#include <gtest/gtest.h>

#include "../support/RowPrograms.h"
#include "driver/Compile.h"
#include "target/DetectHost.h"

namespace tessel::fuse {
namespace {

using testing::CheckedProgram;
using testing::compileAndCheck;

driver::CompileOptions inlining() {
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  o.inlineElementwise = true;
  o.dumpAfter = "inline";
  return o;
}

// The inline pass's one remark of `kind` about `tensor` (one without values
// when there is not exactly one).
Remark inlineRemark(const CheckedProgram& c, RemarkKind kind, const std::string& tensor) {
  std::vector<Remark> found = c.program.remarks.find("inline", kind, tensor);
  return found.size() == 1 ? found.front() : Remark{};
}

bool hasTemporary(const CheckedProgram& c, const std::string& name) {
  for (const auto& t : c.program.kernel.temporaries)
    if (t.name == name) return true;
  return false;
}

// A chain of elementwise stages ends in a row sum: each element of A and B
// is read once, so both are inlined (B first reads A, then the sum reads B).
TEST(InlineElementwise, ChainIntoAReductionDisappears) {
  for (auto [n, d] : {std::pair{1, 1}, {7, 13}, {13, 127}}) {
    const std::string tc = "# sizes: N=" + std::to_string(n) + " D=" + std::to_string(d) +
                           "\n"
                           "def f(float(N,D) X, float(N,D) Y) -> (R) {\n"
                           "  A(n, d) = X(n, d) * 2\n"
                           "  B(n, d) = exp(A(n, d) - Y(n, d))\n"
                           "  R(n) +=! B(n, d)\n}\n";
    CheckedProgram c = compileAndCheck(tc, inlining());
    EXPECT_TRUE(c.check.pass) << n << "x" << d << "\n" << c.check.failures;
    Remark a = inlineRemark(c, RemarkKind::Applied, "A");
    EXPECT_EQ(a.value("readers"), "B") << c.explained();
    EXPECT_EQ(a.value("rule"), "read-once") << c.explained();
    Remark b = inlineRemark(c, RemarkKind::Applied, "B");
    EXPECT_EQ(b.value("readers"), "R") << c.explained();
    EXPECT_EQ(b.value("rule"), "read-once") << c.explained();
    EXPECT_EQ(c.program.dump.find("A("), std::string::npos) << c.program.dump;
    EXPECT_EQ(c.program.dump.find("B("), std::string::npos) << c.program.dump;
    EXPECT_FALSE(hasTemporary(c, "A") || hasTemporary(c, "B"));
  }
}

// A transposing reader that reads T once gets T's expression; one that
// reads it three times keeps T.
TEST(InlineElementwise, TransposedReaderGetsTheExpression) {
  const std::string tc =
      "# sizes: M=13 N=7\n"
      "def f(float(M,N) X) -> (O) {\n"
      "  T(m, n) = X(m, n) + 1\n"
      "  O(n, m) = T(m, n) * T(m, n) == 0 ? 1 : 2 * T(m, n)\n}\n";
  CheckedProgram twice = compileAndCheck(tc, inlining());
  EXPECT_TRUE(twice.check.pass) << twice.check.failures;
  EXPECT_EQ(inlineRemark(twice, RemarkKind::Missed, "T").value("reason"), "a reader reads it at 3 places")
      << twice.explained();
  const std::string once =
      "# sizes: M=13 N=7\n"
      "def f(float(M,N) X) -> (O) {\n"
      "  T(m, n) = X(m, n) + 1\n"
      "  O(n, m) = 2 * T(m, n)\n}\n";
  CheckedProgram c = compileAndCheck(once, inlining());
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_EQ(inlineRemark(c, RemarkKind::Applied, "T").value("readers"), "O") << c.explained();
}

// Inlining would recompute: a 3-tap stencil and a broadcast read each
// element several times, so their temporaries stay (basteln may still
// recompute them per tile).
TEST(InlineElementwise, StencilAndBroadcastReadersKeepTheirTemporaries) {
  const std::string tc =
      "# sizes: N=127 D=13\n"
      "def f(float(N) X, float(N,D) Y) -> (S, O) {\n"
      "  A(n) = X(n) * 0.5\n"
      "  S(n) = A(n) + A(n + 1) + A(n + 2) where n in 0:N-2\n"
      "  B(n) = X(n) + 3\n"
      "  O(n, d) = B(n) * Y(n, d)\n}\n";
  CheckedProgram c = compileAndCheck(tc, inlining());
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_EQ(inlineRemark(c, RemarkKind::Missed, "A").value("reason"), "a reader reads it at 3 places")
      << c.explained();
  EXPECT_EQ(inlineRemark(c, RemarkKind::Missed, "B").value("reason"), "some element is read more than once")
      << c.explained();
}

// Q changes between T's stage and T's reader: T's expression must be
// evaluated where T is, so T stays.
TEST(InlineElementwise, InputsChangingBeforeTheReaderKeepIt) {
  const std::string tc =
      "# sizes: N=13\n"
      "def f(float(N) X) -> (O) {\n"
      "  Q(n) = X(n) + 1\n"
      "  T(n) = Q(n) * 2\n"
      "  Q(n) = X(n) - 4\n"
      "  O(n) = T(n) + Q(n)\n}\n";
  CheckedProgram c = compileAndCheck(tc, inlining());
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_EQ(inlineRemark(c, RemarkKind::Missed, "T").value("reason"),
            "its expression reads Q, which changes before its last reader")
      << c.explained();
  EXPECT_EQ(inlineRemark(c, RemarkKind::Missed, "Q").value("reason"), "another stage writes it too")
      << c.explained();
}

// f16 arithmetic runs in f32 and rounds where it is stored: the inlined
// expression is rounded to T's type too (T - X*X is the rounding error).
TEST(InlineElementwise, HalfValuesAreRoundedAsTheStoreWould) {
  for (int n : {1, 7, 130}) {
    const std::string tc = "# sizes: N=" + std::to_string(n) +
                           "\n"
                           "def f(half(N) X) -> (O) {\n"
                           "  T(i) = X(i) * X(i)\n"
                           "  O(i) = T(i) - X(i) * X(i)\n}\n";
    CheckedProgram c = compileAndCheck(tc, inlining());
    EXPECT_TRUE(c.check.pass) << n << "\n" << c.check.failures;
    EXPECT_EQ(inlineRemark(c, RemarkKind::Applied, "T").value("readers"), "O") << c.explained();
  }
}

// Two readers of disjoint halves (the paper's case of several consumers):
// each element is still read once, so T goes into both.
TEST(InlineElementwise, DisjointReadersBothGetTheExpression) {
  const std::string halves =
      "# sizes: N=26 H=13\n"
      "def f(float(N) X, float(H) S) -> (A, B) {\n"
      "  T(i) = X(i) + 1\n"
      "  A(i) = T(i) * S(i)\n"
      "  B(i) = T(H + i) - S(i)\n}\n";
  CheckedProgram c = compileAndCheck(halves, inlining());
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_EQ(inlineRemark(c, RemarkKind::Applied, "T").value("readers"), "A, B") << c.explained();
}

// The host's ISA with a 4 KiB L2 (and 1 KiB L1): small programs pass the
// cheap rule's size bound.
target::Hardware smallCaches() {
  target::Hardware h = target::withCaches(target::detectHost(), 1024, 4096, 2);
  h.name = "small-caches";
  return h;
}

// Interpolate's premultiplied input: read three times per two elements by
// the downsampling and twice (once per channel at alpha) by the composite.
std::string premultiplied(int c, int h, int w, const std::string& producer) {
  return "# sizes: C=" + std::to_string(c) + " H=" + std::to_string(h) + " W=" + std::to_string(w) +
         "\n"
         "def f(float(C,H,W) I) -> (O) {\n"
         "  D0(c, h, w) = " +
         producer +
         "\n"
         "  D0x(c, h, w) = (D0(c, h, 2 * w) + 2 * D0(c, h, 2 * w + 1) + D0(c, h, 2 * w + 2)) / 4 "
         "where w in 0:(W - 1) / 2\n"
         "  O(c, h, w) = D0(c, h, w) + (1 - D0(C - 1, h, w)) * D0x(c, h, w / 2) where w in 0:2 * ((W - 1) / "
         "2)\n}\n";
}

TEST(InlineElementwise, CheapTemporariesBeyondTheCachesAreRecomputed) {
  const std::string premultiply = "c < C - 1 ? I(c, h, w) * I(C - 1, h, w) : I(C - 1, h, w)";
  for (auto [c, h, w] : {std::tuple{2, 1, 3}, {4, 7, 13}, {4, 13, 127}, {3, 5, 1031}}) {
    for (auto fusion : {driver::Fusion::Smart, driver::Fusion::Basteln}) {
      driver::CompileOptions o;
      o.fusion = fusion;
      o.dumpAfter = "inline";
      CheckedProgram k = compileAndCheck(premultiplied(c, h, w, premultiply), o, smallCaches());
      EXPECT_TRUE(k.check.pass) << c << "x" << h << "x" << w << "\n" << k.check.failures;
      if (c * h * w * 4 <= 4096) continue;  // fits in the L2: kept
      Remark d0 = inlineRemark(k, RemarkKind::Applied, "D0");
      EXPECT_EQ(d0.value("readers"), "D0x, O") << k.explained();
      EXPECT_EQ(d0.value("rule"), "cheap") << k.explained();
      EXPECT_TRUE(d0.has("reads_per_element")) << k.explained();
      EXPECT_EQ(k.program.dump.find("D0("), std::string::npos) << k.program.dump;
      EXPECT_FALSE(hasTemporary(k, "D0"));
    }
  }
}

// What the cheap rule leaves alone: a math function, a division, a read of a
// temporary, a temporary within the caches, one read once per tap and
// output channel (a convolution's input), and everything under --inline off.
TEST(InlineElementwise, CheapRuleKeepsWhatRecomputationWouldCost) {
  driver::CompileOptions o;
  o.dumpAfter = "inline";
  for (const char* producer : {"exp(I(c, h, w))", "I(c, h, w) / I(C - 1, h, w)", "I(c, h, w) + 1"}) {
    std::optional<target::Hardware> machine = smallCaches();
    if (std::string(producer) == "I(c, h, w) + 1") machine.reset();  // this machine's caches: it fits
    CheckedProgram c = compileAndCheck(premultiplied(4, 13, 127, producer), o, machine);
    EXPECT_TRUE(c.check.pass) << producer << "\n" << c.check.failures;
    EXPECT_NE(c.program.dump.find("D0("), std::string::npos) << producer << "\n" << c.program.dump;
  }
  const std::string chain =
      "# sizes: N=61 M=67\n"
      "def f(float(N,M) X) -> (O) {\n"
      "  E(n, m) = exp(X(n, m))\n"
      "  T(n, m) = E(n, m) * 2\n"
      "  O(n, m) = T(n, m) + T(n, m) * E(n, m)\n}\n";
  CheckedProgram c = compileAndCheck(chain, o, smallCaches());
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_NE(c.program.dump.find("T("), std::string::npos) << c.program.dump;
  const std::string conv =
      "# sizes: N=2 C=8 K=16 H=17 W=19\n"
      "def f(float(N,C,H,W) X, float(N,C,H,W) Y, float(K,C,3,3) Wt) -> (O) {\n"
      "  A(n, c, h, w) = X(n, c, h, w) + Y(n, c, h, w)\n"
      "  O(n, k, h, w) +=! A(n, c, h + r, w + s) * Wt(k, c, r, s) where h in 0:H - 2, w in 0:W - 2\n}\n";
  CheckedProgram convolution = compileAndCheck(conv, o, smallCaches());
  EXPECT_TRUE(convolution.check.pass) << convolution.check.failures;
  EXPECT_NE(convolution.program.dump.find("A("), std::string::npos) << convolution.program.dump;
  driver::CompileOptions off = o;
  off.recomputeCheap = false;
  CheckedProgram kept = compileAndCheck(premultiplied(4, 13, 127, "I(c, h, w) * 2"), off, smallCaches());
  EXPECT_TRUE(kept.check.pass) << kept.check.failures;
  EXPECT_TRUE(kept.program.remarks.find("inline").empty()) << kept.explained();
  // D0 keeps its statement (basteln may still recompute it in O's tiles).
  EXPECT_NE(kept.program.dump.find("D0("), std::string::npos) << kept.program.dump;
}

// The read-once rule is off unless asked for (the temporary fits in the caches).
TEST(InlineElementwise, OffByDefault) {
  const std::string tc =
      "# sizes: N=13\n"
      "def f(float(N) X) -> (O) {\n"
      "  T(n) = X(n) + 1\n"
      "  O(n) = T(n) * 2\n}\n";
  driver::CompileOptions plain;
  plain.fusion = driver::Fusion::Basteln;
  plain.dumpAfter = "inline";
  CheckedProgram c = compileAndCheck(tc, plain);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_TRUE(c.program.remarks.find("inline").empty()) << c.explained();
  EXPECT_NE(c.program.dump.find("T("), std::string::npos) << c.program.dump;
}

}  // namespace
}  // namespace tessel::fuse
