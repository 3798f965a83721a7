// `tessel bench --options`: every compile option is read, a tiling policy
// keeps its spaces and commas, and every mistake is located in the text.
#include <gtest/gtest.h>

#include "driver/OptionList.h"
#include "tessel/error.h"

namespace tessel::driver {
namespace {

TEST(OptionList, NothingGivenKeepsTheDefaults) {
  driver::CompileOptions o = parseOptionList("");
  EXPECT_EQ(o.fusion, driver::Fusion::Basteln);
  EXPECT_TRUE(o.autoTiling);
  EXPECT_TRUE(o.vectorize);
  EXPECT_EQ(o.promotion, driver::CompileOptions::Promotion::Auto);
  EXPECT_TRUE(o.tiles.empty());
  EXPECT_TRUE(parseOptionList(" , ").tiles.empty());
}

TEST(OptionList, EveryOptionIsRead) {
  driver::CompileOptions o = parseOptionList(
      "fusion=min, tiling=off vectorize=off promote=all stream-stores=always tiles=S_1: 64@L2/32@L1, *, "
      "16@L1; S_2: 8@L1 ");
  EXPECT_EQ(o.fusion, driver::Fusion::Min);
  EXPECT_EQ(o.streamingStores, driver::CompileOptions::StreamingStores::Always);
  EXPECT_EQ(o.promotion, driver::CompileOptions::Promotion::All);
  EXPECT_FALSE(o.autoTiling);
  EXPECT_FALSE(o.vectorize);
  ASSERT_EQ(o.tiles.statements.size(), 2u);
  ASSERT_EQ(o.tiles.statements[0].dims.size(), 3u);
  EXPECT_EQ(o.tiles.statements[0].dims[0].levels.size(), 2u);
  EXPECT_TRUE(o.tiles.statements[0].dims[1].levels.empty());  // '*'
  EXPECT_EQ(o.tiles.statements[1].dims.size(), 1u);
  EXPECT_EQ(parseOptionList("fusion=max").fusion, driver::Fusion::Max);
  EXPECT_EQ(parseOptionList("scheduler=tessel fusion=max").scheduler,
            driver::CompileOptions::Scheduler::Tessel);
  driver::CompileOptions steered = parseOptionList("scheduler=tessel constraints=auto transposes=off");
  ASSERT_TRUE(steered.scheduleConstraints.has_value());
  EXPECT_TRUE(steered.scheduleConstraints->automatic);
  EXPECT_FALSE(steered.registerTransposes);
  EXPECT_TRUE(parseOptionList("").registerTransposes);
  driver::CompileOptions searched = parseOptionList("scheme=search scheme-budget=12");
  EXPECT_EQ(searched.scheme.text, "search");
  EXPECT_EQ(searched.schemeBudget, 12);
  EXPECT_EQ(searched.schemeClasses, driver::CompileOptions::SchemeClasses::Model);
  EXPECT_EQ(parseOptionList("scheme=search scheme-classes=measure").schemeClasses,
            driver::CompileOptions::SchemeClasses::Measure);
  EXPECT_EQ(parseOptionList("scheme=none fusion=min").scheme.text, "none");
  EXPECT_EQ(parseOptionList("scheme=auto").scheme.text, "auto");
  EXPECT_EQ(parseOptionList("").scheme.text, "auto");
  EXPECT_TRUE(parseOptionList("constant-inputs=all").constantInputs.all);
  EXPECT_EQ(parseOptionList("constant-inputs=Wt+B fusion=min").constantInputs.names,
            (std::vector<std::string>{"Wt", "B"}));
  // A whole scheme runs to the next option, like a policy.
  driver::CompileOptions given = parseOptionList("scheme=L_B(k/16, n, k%16), R_k, R_n, V_k fusion=min");
  EXPECT_EQ(given.scheme.text, "L_B(k/16, n, k%16), R_k, R_n, V_k");
  EXPECT_EQ(given.scheme.origin, "--options");
  EXPECT_EQ(given.fusion, driver::Fusion::Min);
  EXPECT_TRUE(parseOptionList("tiling=auto").autoTiling);
  EXPECT_TRUE(parseOptionList("inline=on").inlineElementwise);
  EXPECT_FALSE(parseOptionList("inline=off").inlineElementwise);
  EXPECT_FALSE(parseOptionList("inline=off").recomputeCheap);
  EXPECT_FALSE(parseOptionList("inline=cheap").inlineElementwise);
  EXPECT_TRUE(parseOptionList("inline=cheap").recomputeCheap);
}

TEST(OptionList, APolicyRunsToTheNextOption) {
  driver::CompileOptions o = parseOptionList("tiles=S_1: 4@L1, 2@L1, fusion=max");
  EXPECT_EQ(o.fusion, driver::Fusion::Max);
  ASSERT_EQ(o.tiles.statements.size(), 1u);
  ASSERT_EQ(o.tiles.statements[0].dims.size(), 2u);
  // Positions point into the option text, for the errors the compiler finds later.
  const tile::StatementTiling& s = o.tiles.statements[0];
  EXPECT_EQ(s.loc.file, "--options");
  EXPECT_EQ(s.loc.line, 1);
  EXPECT_EQ(s.loc.col, 7);
  EXPECT_EQ(s.dims[1].levels[0].loc.col, 18);
}

struct BadOptions {
  const char* text;
  int line;
  int col;
  const char* reason;
};

TEST(OptionList, MistakesAreLocated) {
  const BadOptions cases[] = {
      {"fusion", 1, 1, "expected KEY=VALUE, not 'fusion'"},
      {"fusion=min unroll=4", 1, 12, "unknown option 'unroll' (keys: fusion, basteln-redundancy, scheduler"},
      {"fusion=most", 1, 8, "bad fusion 'most' (expected none, min, smart, max or basteln)"},
      {"fusion=min scheduler=pluto", 1, 22, "bad scheduler 'pluto' (expected isl or tessel)"},
      {"fusion=", 1, 8, "bad fusion ''"},
      {"tiling=on", 1, 8, "bad tiling 'on' (expected auto or off)"},
      {"fusion=min vectorize=yes", 1, 22, "bad vectorize 'yes' (expected on or off)"},
      {"tiling=off promote=on", 1, 20, "bad promote 'on' (expected auto, all or off)"},
      {"stream-stores=never", 1, 15, "bad stream-stores 'never' (expected auto, always or off)"},
      {"fusion=basteln inline=yes", 1, 23, "bad inline 'yes' (expected on, cheap or off)"},
      {"fusion=basteln redundancy=150%", 1, 27,
       "bad basteln-redundancy '150%' (expected a percentage from 0 to 100"},
      {"fusion=min fusion=max", 1, 12, "fusion is given twice"},
      {"tiles=", 1, 7, "empty tiling policy"},
      {"fusion=max tiles=S_1: 4@L1, 4x@L1", 1, 30, "expected '@'"},
      {"tiles=S_1: 4@L1\nS_1: 2@L1", 2, 1, "tiled twice"},
      {"tiling=off,\n fusion=min tiles=Q: 4@L1", 2, 19, "expected a statement name"},
      {"tiles=@/nonexistent/policy.tiles", 1, 7, "cannot open '/nonexistent/policy.tiles'"},
      {"scheme=R_m, Q_k", 1, 13, "bad scheme: expected a specifier"},
      {"fusion=min scheme=O: R_m, L_A(m/0)", 1, 33, "a block size must be at least 1"},
      {"fusion=min constant-inputs=W+", 1, 28, "bad constant-inputs 'W+'"},
      {"scheme=search scheme-budget=0", 1, 29, "bad scheme-budget '0' (expected a count from 1 to 100000)"},
      {"scheme=search scheme-classes=guess", 1, 30, "bad scheme-classes 'guess' (expected model or measure)"},
      {"transposes=on", 1, 12, "bad transposes 'on' (expected registers or off)"},
      {"scheduler=tessel constraints=mine", 1, 30, "cannot open 'mine'"},
      {"scheduler=tessel constraints=@/nonexistent/tree", 1, 30, "cannot open '/nonexistent/tree'"},
  };
  for (const BadOptions& c : cases) {
    try {
      parseOptionList(c.text);
      ADD_FAILURE() << "no error for: " << c.text;
    } catch (const UserError& e) {
      EXPECT_EQ(e.loc().file, "--options") << c.text;
      EXPECT_EQ(e.loc().line, c.line) << c.text << "\n" << e.render();
      EXPECT_EQ(e.loc().col, c.col) << c.text << "\n" << e.render();
      EXPECT_NE(e.reason().find(c.reason), std::string::npos) << c.text << "\n" << e.render();
      EXPECT_TRUE(e.hasSourceLine()) << c.text;  // rendered with the text and a caret
    }
  }
}

TEST(OptionList, CompilerErrorsInThePolicyGetTheirLine) {
  std::string text = "fusion=min tiles=S_1: 4@L9";
  UserError later({"--options", 1, 23}, "unknown buffer 'L9'");
  UserError shown = withOptionListLine(later, text);
  EXPECT_TRUE(shown.hasSourceLine());
  EXPECT_NE(shown.render().find(text), std::string::npos) << shown.render();
  UserError elsewhere({"mm.tc", 1, 1}, "bad");
  EXPECT_FALSE(withOptionListLine(elsewhere, text).hasSourceLine());
}

}  // namespace
}  // namespace tessel::driver
