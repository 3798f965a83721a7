// The scheme search: what it enumerates is correct (sampled across the
// ranking, checked against the interpreter), and a search measures, decides
// and caches.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "../front/FrontTestUtil.h"
#include "../support/RowPrograms.h"
#include "driver/SchemeChoice.h"
#include "target/DetectHost.h"
#include "tune/SchemeSearch.h"

namespace tessel::tune {
namespace {

using microkernel::classesFrom;
using microkernel::familiesFor;
using microkernel::MicroKernelTable;
using microkernel::modelledTable;
using microkernel::rankedSchemes;
using microkernel::SchemeCandidate;

driver::Machine thisMachine() { return machineFor(target::detectHost()); }

// TTILE layers (paper 002 Fig. 8) in NHWC at reduced channel counts.
std::string layer(int k, int c, int h, int r, int stride) {
  std::string in = std::to_string(stride * (h - 1) + r);
  std::string sub = stride == 1 ? "" : std::to_string(stride) + " * ";
  return "# sizes: N=1 HI=" + in + " WI=" + in + " CI=" + std::to_string(c) + " K=" + std::to_string(k) +
         " R=" + std::to_string(r) +
         "\n"
         "def conv(float(N, HI, WI, CI) I, float(R, R, CI, K) Wt) -> (O) {\n"
         "  O(n, h, w, k) +=! I(n, " +
         sub + "h + r, " + sub +
         "w + s, c) * Wt(r, s, c, k)\n"
         "    where h in 0:" +
         std::to_string(h) + ", w in 0:" + std::to_string(h) + "\n}\n";
}

bool hasVectorUnit() { return !target::vectorIsa(target::detectHost()).empty(); }

// Every scheme the search ranks for the program's contraction contains
// `text`, and a spread of them match the interpreter.
void expectRankedWithAndCorrect(const std::string& tc, const target::Hardware& host,
                                const std::string& text) {
  te::Program p = front::testing::lowerText(tc);
  std::string why;
  std::vector<SchemeCandidate> ranked =
      rankedSchemes(*microkernel::recognizeContraction(p, 0).contraction, host,
                    modelledTable(microkernel::vectorIsaNamed(target::vectorIsa(host))), why);
  ASSERT_FALSE(ranked.empty()) << why;
  for (const auto& c : ranked) EXPECT_NE(c.scheme.find(text), std::string::npos) << c.scheme;
  for (size_t i = 0; i < ranked.size(); i += std::max<size_t>(1, ranked.size() / 4)) {
    driver::CompileOptions o;
    o.scheme.text = ranked[i].scheme;
    testing::CheckedProgram c = testing::compileAndCheck(tc, o);
    EXPECT_TRUE(c.check.pass) << ranked[i].scheme << "\n" << c.check.failures;
  }
}

TEST(SchemeSearch, SchemesAcrossTheRankingMatchTheInterpreter) {
  if (!hasVectorUnit()) GTEST_SKIP() << "no vector unit";
  target::Hardware host = target::detectHost();
  MicroKernelTable table = modelledTable(microkernel::vectorIsaNamed(target::vectorIsa(host)));
  // Yolo9000-12 (34 rows: compositions), ResNet18-4 (stride 2), Yolo9000-13 (1x1), a depthwise layer, a
  // padded one.
  const std::string depthwise =
      "# sizes: N=1 HI=30 WI=30 CH=32\n"
      "def dw(float(N, HI, WI, CH) I, float(3, 3, CH) Wt) -> (O) {\n"
      "  O(n, h, w, c) +=! I(n, h + r, w + s, c) * Wt(r, s, c) where h in 0:HI - 2, w in 0:WI - 2\n}\n";
  // ResNet-18's 3x3 layers as the network runs them: zero padding 1 (a guarded read), 13 rows.
  const std::string padded =
      "# sizes: N=1 H=13 W=13 C=8 K=32\n"
      "def conv(float(N, H, W, C) I, float(3, 3, C, K) Wt) -> (O) {\n"
      "  O(n, h, w, k) +=! (h + r - 1 >= 0 && h + r - 1 < H && w + s - 1 >= 0 && w + s - 1 < W\n"
      "      ? I(n, h + r - 1, w + s - 1, c) : 0) * Wt(r, s, c, k) where h in 0:H, w in 0:W\n}\n";
  for (const std::string& tc :
       {layer(32, 8, 34, 3, 1), layer(32, 8, 14, 3, 2), layer(48, 16, 17, 1, 1), depthwise, padded}) {
    te::Program p = front::testing::lowerText(tc);
    microkernel::Recognition r = microkernel::recognizeContraction(p, 0);
    ASSERT_TRUE(r.contraction) << r.whyNot;
    std::string why;
    std::vector<SchemeCandidate> ranked = rankedSchemes(*r.contraction, host, table, why);
    ASSERT_GT(ranked.size(), 10u) << why;
    for (size_t i = 1; i < ranked.size(); ++i) EXPECT_LE(ranked[i - 1].rankCost(), ranked[i].rankCost());
    // The best modelled, then a spread over the rest.
    size_t stride = std::max<size_t>(1, ranked.size() / 6);
    for (size_t i = 0; i < ranked.size(); i += (i < 3 ? 1 : stride)) {
      driver::CompileOptions o;
      o.scheme.text = ranked[i].scheme;
      testing::CheckedProgram c = testing::compileAndCheck(tc, o);
      EXPECT_TRUE(c.check.pass) << ranked[i].scheme << "\n" << c.check.failures;
    }
  }
}

TEST(SchemeSearch, MatmulsComposeTheirRows) {
  target::Hardware host = target::detectHost();
  if (target::vectorIsa(host).empty()) GTEST_SKIP() << "no vector unit";
  te::Program p = front::testing::lowerText(
      "# sizes: M=37 N=128 K=128\n"
      "def mm(float(M, K) A, float(K, N) B) -> (C) {\n  C(m, n) +=! A(m, k) * B(k, n)\n}\n");
  std::string why;
  std::vector<SchemeCandidate> ranked =
      rankedSchemes(*microkernel::recognizeContraction(p, 0).contraction, host,
                    modelledTable(microkernel::vectorIsaNamed("avx512")), why);
  ASSERT_FALSE(ranked.empty()) << why;
  bool composed = false;
  for (const auto& c : ranked) composed = composed || c.scheme.find("lambda_m") != std::string::npos;
  EXPECT_TRUE(composed);  // 37 is prime: only compositions cover it with tiles of 4 or more
}

TEST(SchemeSearch, AStridedOperandIsLaidOutToVectorize) {
  target::Hardware host = target::detectHost();
  if (target::vectorIsa(host).empty()) GTEST_SKIP() << "no vector unit";
  // "NT": B is read along its rows, strided along n, the only dimension the output is contiguous along.
  const std::string tc =
      "# sizes: M=21 N=48 K=9\n"
      "def mm(float(M, K) A, float(N, K) B) -> (C) {\n  C(m, n) +=! A(m, k) * B(n, k)\n}\n";
  expectRankedWithAndCorrect(tc, host, "L_B(");
}

TEST(SchemeSearch, AnOutputStridedAlongTheVectorDimensionIsLaidOut) {
  if (!hasVectorUnit()) GTEST_SKIP() << "no vector unit";
  // NCHW and padded: k vectorizes once O is written as NHWC and Wt blocked by k.
  const std::string tc =
      "# sizes: N=1 C=8 H=7 W=7 K=32\n"
      "def conv(float(N, C, H, W) I, float(K, C, 3, 3) Wt) -> (O) {\n"
      "  O(n, k, h, w) +=! (h + kh - 1 >= 0 && h + kh - 1 < H && w + kw - 1 >= 0 && w + kw - 1 < W\n"
      "      ? I(n, c, h + kh - 1, w + kw - 1) : 0) * Wt(k, c, kh, kw) where n in 0:N, h in 0:H, w in "
      "0:W\n}\n";
  target::Hardware host = target::detectHost();
  te::Program p = front::testing::lowerText(tc);
  std::string why;
  std::vector<SchemeCandidate> ranked =
      rankedSchemes(*microkernel::recognizeContraction(p, 0).contraction, host,
                    modelledTable(microkernel::vectorIsaNamed(target::vectorIsa(host))), why);
  std::vector<std::string> laidOut;
  for (const auto& c : ranked)
    if (c.scheme.rfind("L_O(n, h, w, k), ", 0) == 0) laidOut.push_back(c.scheme);
  ASSERT_FALSE(laidOut.empty()) << why;
  for (size_t i = 0; i < laidOut.size(); i += std::max<size_t>(1, laidOut.size() / 3)) {
    std::string last = laidOut[i].substr(laidOut[i].rfind(", ") + 2);
    EXPECT_TRUE(last == "V_k" || (last.rfind("V_{", 0) == 0 && last.find(",k}") != std::string::npos))
        << laidOut[i];
    driver::CompileOptions o;
    o.scheme.text = laidOut[i];
    testing::CheckedProgram c = testing::compileAndCheck(tc, o);
    EXPECT_TRUE(c.check.pass) << laidOut[i] << "\n" << c.check.failures;
  }
}

// Rows long enough to vectorize as they are: a convolution still gets the
// schedules that write its output laid out (vectors along w are unaligned
// loads, one per register-tile row; along k, weights every row shares), a
// matmul does not.
TEST(SchemeSearch, AConvolutionsLongRowsAreLaidOutTooAMatmulsAreNot) {
  if (!hasVectorUnit()) GTEST_SKIP() << "no vector unit";
  target::Hardware host = target::detectHost();
  MicroKernelTable table = modelledTable(microkernel::vectorIsaNamed(target::vectorIsa(host)));
  auto laidOut = [&](const std::string& tc, const std::string& prefix) {
    te::Program p = front::testing::lowerText(tc);
    std::string why;
    std::vector<std::string> found;
    for (const auto& c :
         rankedSchemes(*microkernel::recognizeContraction(p, 0).contraction, host, table, why))
      if (c.scheme.rfind(prefix, 0) == 0) found.push_back(c.scheme);
    return found;
  };
  const std::string conv =
      "# sizes: N=1 C=4 H=5 W=18 K=16\n"
      "def conv(float(N, C, H, W) I, float(K, C, 3, 3) Wt) -> (O) {\n"
      "  O(n, k, h, w) +=! I(n, c, h + kh, w + kw) * Wt(k, c, kh, kw) where h in 0:H - 2, w in 0:W - 2\n}\n";
  std::vector<std::string> convs = laidOut(conv, "L_O(n, h, w, k), ");
  ASSERT_FALSE(convs.empty());
  driver::CompileOptions o;
  o.scheme.text = convs.front();
  testing::CheckedProgram c = testing::compileAndCheck(conv, o);
  EXPECT_TRUE(c.check.pass) << convs.front() << "\n" << c.check.failures;
  const std::string matmul =
      "# sizes: M=16 N=32 K=8\n"
      "def mm(float(K, M) A, float(K, N) B) -> (C) {\n  C(m, n) +=! A(k, m) * B(k, n)\n}\n";
  EXPECT_TRUE(laidOut(matmul, "L_C(").empty());
}

TEST(SchemeSearch, PartialVectorsCoverTheEndOfTheVectorDimension) {
  target::Hardware host = target::detectHost();
  if (target::vectorIsa(host) != "avx512") GTEST_SKIP() << "no AVX-512 here";
  // N = 44: no whole number of vectors; tiles of partial vectors (AVX-512 masks) end it.
  const std::string tc =
      "# sizes: M=9 N=44 K=7\n"
      "def mm(float(M, K) A, float(K, N) B) -> (C) {\n  C(m, n) +=! A(m, k) * B(k, n)\n}\n";
  expectRankedWithAndCorrect(tc, host, "V_{");
}

TEST(SchemeSearch, NothingToVectorizeIsSaid) {
  // C is contiguous along m only, and A strided along it by 2 rows: no layout makes that contiguous.
  te::Program p = front::testing::lowerText(
      "# sizes: K=4\n"
      "def f(float(32, K) A, float(K) B) -> (C) {\n  C(m) +=! A(2 * m, k) * B(k) where m in 0:16\n}\n");
  std::string why;
  EXPECT_TRUE(rankedSchemes(*microkernel::recognizeContraction(p, 0).contraction, target::detectHost(),
                            modelledTable(microkernel::vectorIsaNamed("avx512")), why)
                  .empty());
  EXPECT_NE(why.find("no output dimension"), std::string::npos) << why;
}

TEST(SchemeSearch, MeasuresDecidesAndCaches) {
  if (!hasVectorUnit()) GTEST_SKIP() << "no vector unit";
  std::string tc = layer(32, 4, 10, 3, 1);
  driver::CompileOptions o;
  o.scheme.text = "O: search";
  o.schemeBudget = 2;
  o.schemeThreads = 1;
  o.schemeClasses = driver::CompileOptions::SchemeClasses::Model;
  SchemeSearchOptions s;
  s.budget = 2;
  s.threads = 1;
  s.minSeconds = 0.001;
  s.useCache = false;
  s.measureMicroKernels = false;
  SchemeSearchResult r = searchScheme(front::testing::lowerText(tc), o, thisMachine(), s);
  EXPECT_EQ(r.measured, 2u);
  EXPECT_GT(r.baselineMs, 0);
  EXPECT_LE(r.bestMs, r.baselineMs);
  EXPECT_TRUE(r.scheme.empty() || r.scheme.rfind("O: ", 0) == 0) << r.scheme;
  // Through the compiler: the search's decision, then from the cache.
  testing::CheckedProgram first = testing::compileAndCheck(tc, o);
  EXPECT_TRUE(first.check.pass) << first.check.failures;
  std::vector<Remark> decided = first.program.remarks.find(kSchemeSearch);
  ASSERT_FALSE(decided.empty()) << first.explained();
  // Measured again, it may choose otherwise; what it chose is what was compiled.
  EXPECT_EQ(decided[0].value("scheme").empty(), first.program.microKernelSchemes.empty())
      << first.explained();
  testing::CheckedProgram second = testing::compileAndCheck(tc, o);
  decided = second.program.remarks.find(kSchemeSearch);
  ASSERT_FALSE(decided.empty()) << second.explained();
  EXPECT_EQ(decided[0].value("cached"), "true") << second.explained();
  EXPECT_EQ(second.program.cSource, first.program.cSource);
  // A program without a contraction keeps the compiler's own code.
  driver::CompileOptions none;
  none.scheme.text = "search";
  SchemeSearchResult nothing = searchScheme(
      front::testing::lowerText("# sizes: N=8\ndef f(float(N) A) -> (B) {\n  B(i) = A(i) * 2\n}\n"), none,
      thisMachine(), s);
  EXPECT_EQ(nothing.scheme, "");
  EXPECT_NE(nothing.why.find("no contraction"), std::string::npos) << nothing.why;
  EXPECT_TRUE(driver::asksForSearch(" search "));
  EXPECT_TRUE(driver::asksForSearch("O:search"));
  EXPECT_FALSE(driver::asksForSearch("R_search"));
}

TEST(SchemeSearch, AContractionUsesTheFamiliesUnrollingItsWindows) {
  auto families = [](const std::string& tc) {
    te::Program p = front::testing::lowerText(tc);
    return familiesFor(*microkernel::recognizeContraction(p, 0).contraction);
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(families("# sizes: M=4 N=16 K=8\ndef mm(float(M, K) A, float(K, N) B) -> (C) {\n"
                     "  C(m, n) +=! A(m, k) * B(k, n)\n}\n"),
            (Names{"A"}));
  EXPECT_EQ(families(layer(16, 4, 6, 3, 1)), (Names{"A", "B", "C", "D"}));
  EXPECT_EQ(families("# sizes: H=8 W=6 C=4 K=16\n"
                     "def conv(float(H, W, C) I, float(3, C, K) Wt) -> (O) {\n"
                     "  O(h, w, k) +=! I(h + r, w, c) * Wt(r, c, k) where h in 0:H - 2\n}\n"),
            (Names{"A", "B", "C"}));
}

// A measured table whose classes (2 vectors x 5 or 6 rows, as on an AVX2
// machine) cannot cover 7 rows: the kernels within a lower share of their
// family's best do, and those schemes are correct; 12 rows keep the classes.
TEST(SchemeSearch, NarrowMeasuredClassesWidenToCoverAwkwardExtents) {
  if (!hasVectorUnit()) GTEST_SKIP() << "no vector unit";
  target::Hardware host = target::detectHost();
  MicroKernelTable table;
  table.isa = target::vectorIsa(host);
  table.source = "measured";
  table.kernels = {{"A", 2, 3, 50, 0}, {"A", 2, 4, 60, 0}, {"A", 2, 5, 100, 0}, {"A", 2, 6, 98, 0}};
  table.classes = classesFrom(table.kernels);
  int lanes = microkernel::vectorIsaNamed(table.isa).lanes;
  auto matmul = [&](int m) {
    return "# sizes: M=" + std::to_string(m) + " N=" + std::to_string(2 * lanes) +
           " K=9\ndef mm(float(M, K) A, float(K, N) B) -> (C) {\n  C(m, n) +=! A(m, k) * B(k, n)\n}\n";
  };
  auto rank = [&](const std::string& tc, std::string& used) {
    te::Program p = front::testing::lowerText(tc);
    std::string why;
    return rankedSchemes(*microkernel::recognizeContraction(p, 0).contraction, host, table, why, &used);
  };
  std::string used;
  std::vector<SchemeCandidate> twelve = rank(matmul(12), used);
  EXPECT_FALSE(twelve.empty());
  EXPECT_EQ(used, "measured classes");
  std::vector<SchemeCandidate> seven = rank(matmul(7), used);
  ASSERT_FALSE(seven.empty()) << used;
  EXPECT_NE(used.find("within 50% of their family's best"), std::string::npos) << used;
  for (size_t i = 0; i < seven.size(); i += std::max<size_t>(1, seven.size() / 3)) {
    driver::CompileOptions o;
    o.scheme.text = seven[i].scheme;
    testing::CheckedProgram c = testing::compileAndCheck(matmul(7), o);
    EXPECT_TRUE(c.check.pass) << seven[i].scheme << "\n" << c.check.failures;
  }
}

// Without a table of this machine, the search measures the families its
// contraction uses first and stores them; the next search reuses them, and
// a search told not to measure leaves the machine's table alone. A decision
// cached from other classes is not reused.
TEST(SchemeSearch, MeasuresTheMachinesMicroKernelsOnce) {
  if (!hasVectorUnit()) GTEST_SKIP() << "no vector unit";
  std::string dir = ::testing::TempDir() + "tessel-search-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  const char* previous = std::getenv("TESSEL_CACHE_DIR");
  std::string saved = previous ? previous : "";
  ::setenv("TESSEL_CACHE_DIR", dir.c_str(), 1);
  int lanes = microkernel::vectorIsaNamed(target::vectorIsa(target::detectHost())).lanes;
  te::Program p = front::testing::lowerText("# sizes: M=4 N=" + std::to_string(lanes) +
                                            " K=8\ndef mm(float(M, K) A, float(K, N) B) -> (C) {\n"
                                            "  C(m, n) +=! A(m, k) * B(k, n)\n}\n");
  driver::CompileOptions o;
  o.scheme.text = "search";
  SchemeSearchOptions s;
  s.budget = 1;
  s.threads = 1;
  s.minSeconds = 0.001;
  s.measureMicroKernels = false;
  SchemeSearchResult modelled = searchScheme(p, o, thisMachine(), s);
  EXPECT_TRUE(modelled.familiesMeasured.empty());
  EXPECT_FALSE(modelled.fromCache);
  EXPECT_FALSE(storedTable(target::detectHost()));
  s.measureMicroKernels = true;
  s.microbench.maxAlpha = 1;
  s.microbench.maxBeta = 2;
  s.microbench.reduction = 8;
  s.microbench.minSeconds = 0.001;
  SchemeSearchResult first = searchScheme(p, o, thisMachine(), s);
  EXPECT_EQ(first.familiesMeasured, std::vector<std::string>{"A"});
  std::optional<MicroKernelTable> stored = storedTable(target::detectHost());
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->kernels.size(), 2u);  // 1 vector x 1 and 2 rows
  EXPECT_FALSE(first.fromCache);
  EXPECT_NE(first.why.find("from measured classes"), std::string::npos) << first.why;
  SchemeSearchResult second = searchScheme(p, o, thisMachine(), s);
  EXPECT_TRUE(second.familiesMeasured.empty());
  EXPECT_TRUE(second.fromCache) << second.why;
  if (previous)
    ::setenv("TESSEL_CACHE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("TESSEL_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessel::tune
