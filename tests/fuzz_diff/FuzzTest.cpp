// The differential fuzzer itself: reproducible generation, the option matrix,
// failure detection in isolated processes, and minimization. Regression tests
// for bugs it finds go to FuzzRegressionTest.cpp.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../support/RowPrograms.h"
#include "fuzz/Fuzzer.h"
#include "fuzz/RandomConstraints.h"
#include "fuzz/RandomScheme.h"
#include "target/DetectHost.h"

namespace tessel::fuzz {
namespace {

TEST(Fuzz, GenerationIsReproducible) {
  for (int i = 0; i < 20; ++i) {
    uint64_t seed = programSeed(5, i);
    EXPECT_EQ(render(generateProgram(seed)), render(generateProgram(seed)));
  }
  EXPECT_NE(render(generateProgram(programSeed(5, 0))), render(generateProgram(programSeed(5, 1))));
}

TEST(Fuzz, GenerationCoversEveryElementTypeAndIndirectReads) {
  // Quotient indices: upsampling (i0 / 2), periodic (i1 % 3), and numerators
  // that go negative and truncate toward zero.
  const std::vector<std::string> features = {"(half(", "(double(", "(int32(",  "(float(", "int32(N", "(J(",
                                             "max=!",  "min=!",    "*=!",      "+=!",     "2 * i",   " + r0",
                                             "i0 / ",  "i0 % ",    " - 1) / ", " - 1) % "};
  std::map<std::string, int> seen;
  for (int i = 0; i < 300; ++i) {
    std::string text = render(generateProgram(programSeed(3, i)));
    for (const auto& feature : features)
      if (text.find(feature) != std::string::npos) ++seen[feature];
  }
  for (const auto& feature : features) EXPECT_GT(seen[feature], 0) << "no generated program has " << feature;
}

TEST(Fuzz, GenerationIncludesContractionsForTheMicroKernelPath) {
  int contractions = 0;
  for (int i = 0; i < 300; ++i) {
    te::Program p = front::testing::lowerText(render(generateProgram(programSeed(3, i))));
    if (!randomScheme(p, 1, "").empty()) ++contractions;
  }
  EXPECT_GT(contractions, 10);
}

// Programs whose exact result hangs on an ulp say nothing about the compiler:
// products of floats stay near 1, and integers cast from floats are never
// multiplied together (fuzz seeds 6031973878037822033, 15153418990505569392).
TEST(Fuzz, GeneratedProductsAreWellConditioned) {
  int products = 0;
  for (int i = 0; i < 500; ++i) {
    std::istringstream text(render(generateProgram(programSeed(11, i))));
    bool integerProgram = text.str().find("def fuzz(int32(") != std::string::npos;
    for (std::string line; std::getline(text, line);) {
      if (line.find(" *=! ") == std::string::npos) continue;
      ++products;
      EXPECT_EQ(line.find("*=! int32("), std::string::npos) << line;
      if (!integerProgram) {
        EXPECT_NE(line.find("*=! (1 + tanh("), std::string::npos) << line;
      }
    }
  }
  EXPECT_GT(products, 0);
}

TEST(Fuzz, MatrixCoversEveryFusionStrategyTilingThreadCountAndScheduler) {
  auto m = optionMatrix();
  EXPECT_EQ(m.size(), 19u);
  EXPECT_EQ(m.front().label, "fusion=min tiling=off vectorize=off threads=1");
  EXPECT_EQ(m[1].label, "fusion=min tiling=auto(tiny caches) threads=2");
  EXPECT_EQ(m[8].label, "fusion=max tiles=small promote=all stream-stores=always threads=2");
  EXPECT_EQ(m[11].label, "fusion=basteln redundancy=100% tiles=small stream-stores=always threads=2");
  EXPECT_EQ(m[12].label, "fusion=basteln inline=on tiling=auto(tiny caches) threads=2");
  EXPECT_EQ(m[13].label, "fusion=none tiling=auto(tiny caches) threads=2");
  EXPECT_EQ(m[14].label, "fusion=basteln scheme=random tiling=auto(tiny caches) threads=2");
  EXPECT_TRUE(m[14].randomScheme);
  EXPECT_EQ(m[15].label, "scheduler=tessel fusion=smart tiling=auto(tiny caches) threads=2");
  EXPECT_EQ(m[16].label,
            "scheduler=tessel fusion=basteln redundancy=100% tiles=small stream-stores=always threads=2");
  EXPECT_EQ(m[17].label, "scheduler=tessel constraints=auto fusion=smart tiling=auto(tiny caches) threads=2");
  EXPECT_TRUE(m[17].options.scheduleConstraints->automatic);
  EXPECT_EQ(m.back().label,
            "scheduler=tessel constraints=random fusion=smart tiling=auto(tiny caches) threads=2");
  EXPECT_TRUE(m.back().randomConstraints);
  EXPECT_EQ(m.back().options.scheduler, driver::CompileOptions::Scheduler::Tessel);
}

TEST(Fuzz, RandomSchemesAreValidAndMatchTheInterpreter) {
  const std::vector<std::string> programs = {
      "# sizes: M=12 N=32 K=6\ndef f(float(M, K) A, float(K, N) B, float(N) C) -> (Y) {\n"
      "  T(m, n) +=! A(m, k) * B(k, n)\n  Y(m, n) = max(T(m, n) + C(n), 0)\n}\n",
      "# sizes: H=7 W=6 CI=3 K=16\ndef f(float(H, W, CI) I, float(3, 2, CI, K) Wt) -> (O) {\n"
      "  O(h, w, k) +=! I(h + r, w + s, c) * Wt(r, s, c, k) where h in 0:H - 2, w in 0:W - 1\n}\n",
  };
  std::string isa = target::vectorIsa(target::detectHost());
  int laidOut = 0;
  for (const auto& tc : programs) {
    te::Program p = front::testing::lowerText(tc);
    std::set<std::string> seen;
    for (uint64_t seed = 0; seed < 16; ++seed) {
      std::string scheme = randomScheme(p, seed, isa);
      ASSERT_FALSE(scheme.empty());
      if (!seen.insert(scheme).second) continue;
      if (scheme.find("L_") != std::string::npos) ++laidOut;
      driver::CompileOptions o;
      o.scheme.text = scheme;
      testing::CheckedProgram r = testing::compileAndCheck(tc, o);
      EXPECT_TRUE(r.check.pass) << scheme << "\n" << r.check.failures;
    }
    EXPECT_GT(seen.size(), 4u);
  }
  EXPECT_GT(laidOut, 0);  // operands in other layouts: the prepare entries are checked too
  EXPECT_EQ(
      randomScheme(front::testing::lowerText("# sizes: N=4\ndef f(float(N) A) -> (B) {\n  B(i) = A(i)\n}\n"),
                   1, isa),
      "");
}

// Random constraint trees parse against their program, and Tessel's
// scheduler steered by them (backtracking, fallbacks) stays correct.
TEST(Fuzz, RandomConstraintTreesSteerTesselsSchedulerCorrectly) {
  Combination steered = optionMatrix().back();
  int steeredPrograms = 0;
  for (int i = 0; i < 4; ++i) {
    std::string text = render(generateProgram(programSeed(12, i)));
    te::Program p = front::testing::lowerText(text);
    std::string tree = randomConstraintTree(p, static_cast<uint64_t>(i));
    ASSERT_NE(tree.find("row {"), std::string::npos) << tree;
    for (const auto& r : checkProgram(text, {steered}, 120))
      EXPECT_EQ(r.verdict, Verdict::Pass) << r.combination << ": " << r.detail << "\n" << text;
    ++steeredPrograms;
  }
  EXPECT_EQ(steeredPrograms, 4);
}

TEST(Fuzz, GeneratedProgramsPass) {
  auto matrix = optionMatrix();
  for (int i = 0; i < 3; ++i) {
    std::string text = render(generateProgram(programSeed(11, i)));
    for (const auto& r : checkProgram(text, {matrix[static_cast<size_t>(i)]}, 120))
      EXPECT_EQ(r.verdict, Verdict::Pass) << r.combination << ": " << r.detail << "\n" << text;
  }
}

TEST(Fuzz, JobsDoNotChangeTheReport) {
  FuzzOptions o;
  o.seed = 21;
  o.count = 3;
  std::ostringstream quiet;
  FuzzReport one = runFuzz(o, quiet);
  o.jobs = 2;
  FuzzReport two = runFuzz(o, quiet);
  EXPECT_EQ(one.programs, 3);
  EXPECT_EQ(two.programs, one.programs);
  EXPECT_EQ(two.combinations, one.combinations);
  EXPECT_EQ(two.counts, one.counts);
  EXPECT_EQ(summarize(two, o).substr(summarize(two, o).find('\n')),
            summarize(one, o).substr(summarize(one, o).find('\n')));
}

// A long run can be split: --first picks up where another part stopped.
TEST(Fuzz, FirstStartsAtThatProgram) {
  FuzzOptions o;
  o.seed = 21;
  o.first = 2;
  o.count = 1;
  std::ostringstream quiet;
  FuzzReport r = runFuzz(o, quiet);
  EXPECT_EQ(r.programSeeds, std::vector<uint64_t>{programSeed(21, 2)});
  EXPECT_NE(summarize(r, o).find("1 programs (indices 2..2)"), std::string::npos) << summarize(r, o);
}

TEST(Fuzz, RejectionsMustBeLocated) {
  auto results = checkProgram("# sizes: N=3\ndef f(float(N) A) -> (B) {\n  B(i) = A(i) + Z(i)\n}\n",
                              {optionMatrix().front()}, 60);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].verdict, Verdict::Rejected);
  EXPECT_FALSE(isFailure(results[0].verdict));
}

TEST(Fuzz, MinimizationKeepsTheFailure) {
  // A "failure" the minimizer can shrink: a located rejection (unknown tensor
  // Z) in the last statement; the other statements and large sizes go away.
  ProgramModel m;
  m.sizes = {{"N0", 33}, {"N1", 17}};
  m.tensors = {{"I0", "float", {0, 1}, true, false},
               {"T1", "float", {0}, false, false},
               {"T2", "float", {0}, false, true}};
  m.statements = {{1, {"i0"}, "+=!", "I0(i0, r0)", {"i0 in 0:N0", "r0 in 0:N1"}, {0}},
                  {2, {"i0"}, "=", "Z(i0)", {"i0 in 0:N0"}, {}}};
  ProgramModel small = minimize(m, optionMatrix().front(), Verdict::Rejected, 60);
  EXPECT_EQ(small.statements.size(), 1u);
  EXPECT_EQ(small.sizes[0].value, 1);
  EXPECT_EQ(small.sizes[1].value, 1);
}

}  // namespace
}  // namespace tessel::fuzz
