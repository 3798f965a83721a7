// The pipeline as data: its order is checked as it is built, a stage runs
// only when its condition holds, and dumps and timings follow its names.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/RunTool.h"
#include "driver/Compile.h"
#include "driver/Pipeline.h"
#include "target/DetectHost.h"

namespace tessel::driver {
namespace {

ProgramPass unchanged() {
  return [](const te::Program& p, ProgramPassContext&) { return p; };
}
SchedulePass same() {
  return [](const isl::schedule& s, PassContext&) { return s; };
}

TEST(Pipeline, StagesMustReadWhatTheStageBeforeWrites) {
  Pipeline p("test");
  p.programPass({"a", "nothing"}, unchanged());
  // A schedule-tree pass before extraction reads a tree nobody wrote.
  try {
    p.schedulePass({"b", "nothing"}, same());
    ADD_FAILURE() << "a schedule-tree pass was accepted before extraction";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("stage 'b' reads schedule tree but the stage before it writes te"),
              std::string::npos)
        << e.what();
  }
  p.extract({"extract", "x"},
            [](isl::ctx, const te::Program&) -> poly::Scop { throw std::logic_error("unused"); });
  // After extraction the program is fixed (the Scop points into it).
  EXPECT_THROW(p.programPass({"late", "x"}, unchanged()), InternalError);
  EXPECT_THROW(p.schedulePass({"a", "a name taken"}, same()), InternalError);
  EXPECT_THROW(p.schedulePass({"c", "x", {"d"}}, same()), InternalError);  // d is not before it
  p.scheduler({"s", "x", {"a"}}, same());
  EXPECT_THROW(p.scheduler({"s2", "a second scheduler"}, same()), InternalError);
  EXPECT_EQ(p.names(), (std::vector<std::string>{"a", "extract", "s"}));
  EXPECT_TRUE(p.hasScheduler());
}

TEST(Pipeline, TheCpuPipelineRunsFromTheProgramToC) {
  Pipeline p = cpuPipeline();
  ASSERT_FALSE(p.stages().empty());
  EXPECT_EQ(p.stages().front().input, Ir::Program);
  EXPECT_EQ(p.stages().back().output, Ir::C);
  std::string text = p.describe();
  for (const auto& name : p.names()) EXPECT_NE(text.find(" " + name + " "), std::string::npos) << name;
}

// docs/passes.md has a section per stage, under its pipeline name.
TEST(Pipeline, EveryStageHasASectionInDocsPasses) {
  std::string doc = testing::readText(testing::sourcePath("docs/passes.md"));
  for (const auto& name : cpuPipeline().names())
    EXPECT_NE(doc.find("\n## " + name + "\n"), std::string::npos)
        << "docs/passes.md lacks '## " << name << "'";
}

// Stages whose condition does not hold do not run (nor take time), but can
// still be dumped: the IR as it is at that point.
TEST(Pipeline, StagesRunOnlyWhenTheirConditionHolds) {
  te::Program p =
      front::testing::lowerText("# sizes: N=37\ndef f(float(N) A) -> (B) {\n  B(i) = A(i) * 2\n}\n");
  CompileOptions o;
  o.vectorize = false;
  o.fusion = Fusion::Min;
  o.dumpAfter = "vectorize";
  CompiledProgram cp = testing::compileFor(p, o);
  std::vector<std::string> ran;
  for (const auto& [name, seconds] : cp.passSeconds) ran.push_back(name);
  for (const char* skipped :
       {"basteln-group", "fuse-outer", "basteln", "coalesce", "vectorize", "register-tile"})
    EXPECT_EQ(std::count(ran.begin(), ran.end(), skipped), 0) << skipped;
  for (const char* run : {"widen-accumulators", "extract", "schedule", "tile", "ast", "lir", "emit-c"})
    EXPECT_EQ(std::count(ran.begin(), ran.end(), run), 1) << run;
  EXPECT_NE(cp.dump.find("for "), std::string::npos) << cp.dump;  // the loop IR after lir
}

// A search measures kernels: compilation itself refuses to, and says where it runs.
TEST(Pipeline, CompilationDoesNotSearch) {
  te::Program p = front::testing::lowerText(
      "# sizes: M=8 N=16 K=4\ndef mm(float(M,K) A, float(K,N) B) -> (C) {\n  C(m, n) +=! A(m, k) * B(k, "
      "n)\n}\n");
  CompileOptions o;
  o.scheme.text = "search";
  try {
    compile(p, o, modelledMachine(target::detectHost()));
    ADD_FAILURE() << "compile searched";
  } catch (const UserError& e) {
    EXPECT_NE(e.render().find("tune::compileTuned"), std::string::npos) << e.render();
  }
}

}  // namespace
}  // namespace tessel::driver
