// A target's whole lowering as data: every stage in order, from program
// passes (te -> te) through extraction, schedule-tree passes, AST generation,
// lowering to the loop IR and loop-IR passes to emission, each with its name,
// the IR it reads and writes, the stages it requires before it and when it
// runs. A target's strategy builds one (driver/CpuStrategy.cpp); compile()
// runs it; `tessel passes` prints it; --dump-after and --time-passes take
// their names from it. The order is checked as the pipeline is built.
#pragma once

#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "driver/Options.h"
#include "lir/AstToLir.h"
#include "lir/Lir.h"
#include "poly/Scop.h"
#include "support/Remarks.h"
#include "target/Hardware.h"
#include "target/MicroKernelPlan.h"
#include "target/Promotion.h"

namespace tessel::driver {

// The IR between two stages.
enum class Ir { Program, ScheduleTree, Ast, LoopIr, C };
const char* irName(Ir ir);  // "te", "schedule tree", "isl AST", "loop IR", "C"

// What a program pass (te -> te) may read, and where it explains its decisions.
struct ProgramPassContext {
  const CompileOptions& options;
  const target::Hardware& hardware;
  isl::ctx ctx;
  Remarks& remarks;
};

// What a schedule-tree pass, AST generation and lowering to the loop IR may
// read, and where they explain their decisions (printed by --explain).
struct PassContext {
  const poly::Scop& scop;
  const CompileOptions& options;
  const target::Hardware& hardware;
  Remarks& remarks;
  std::vector<std::string>& warnings;     // shown to the user whatever the flags
  target::PromotionPlan& promotions;      // what the promotion pass marked, for code generation
  target::MicroKernelPlan& microKernels;  // the contractions grafted as micro-kernels
};

// What a loop-IR pass may read, and where it explains its decisions.
struct LoopPassContext {
  const CompileOptions& options;
  const target::Hardware& hardware;
  Remarks& remarks;
};

using ProgramPass = std::function<te::Program(const te::Program&, ProgramPassContext&)>;
// te -> the Scop and its initial schedule tree (Scop::initialSchedule).
using Extraction = std::function<poly::Scop(isl::ctx, const te::Program&)>;
using SchedulePass = std::function<isl::schedule(const isl::schedule&, PassContext&)>;
using AstGeneration = std::function<lir::GeneratedAst(const isl::schedule&, PassContext&)>;
// The program is the one extracted (after the program passes).
using LoopLowering = std::function<lir::Kernel(const te::Program&, const lir::GeneratedAst&, PassContext&)>;
using LoopPass = std::function<lir::Kernel(const lir::Kernel&, LoopPassContext&)>;
using Emission = std::function<std::string(const lir::Kernel&)>;

// Whether a stage runs for these options on this machine.
using StageCondition = std::function<bool(const CompileOptions&, const target::Hardware&)>;

struct StageInfo {
  StageInfo(std::string name, std::string summary, std::vector<std::string> after = {}, std::string when = {},
            StageCondition runs = {})
      : name(std::move(name)),
        summary(std::move(summary)),
        after(std::move(after)),
        when(std::move(when)),
        runs(std::move(runs)) {}
  std::string name;                // its name in --dump-after, --time-passes, docs/passes.md
  std::string summary;             // one line: what it does
  std::vector<std::string> after;  // stages it requires before it
  std::string when;                // "" when it always runs; else the condition in words
  StageCondition runs;             // unset when it always runs
};

class Pipeline {
 public:
  using Run =
      std::variant<ProgramPass, Extraction, SchedulePass, AstGeneration, LoopLowering, LoopPass, Emission>;
  struct Stage {
    StageInfo info;
    Ir input, output;
    Run run;
    bool scheduler = false;  // replaced by a tree given with --schedule
  };

  explicit Pipeline(std::string target) : target_(std::move(target)) {}

  // Each adds a stage after the last one; an InternalError if the stage does
  // not read what the last one writes, if its name is taken, or if a stage it
  // requires is not already in the pipeline.
  Pipeline& programPass(StageInfo info, ProgramPass run);
  Pipeline& extract(StageInfo info, Extraction run);
  Pipeline& scheduler(StageInfo info, SchedulePass run);  // the pass --schedule replaces
  Pipeline& schedulePass(StageInfo info, SchedulePass run);
  Pipeline& generateAst(StageInfo info, AstGeneration run);
  Pipeline& lowerToLoops(StageInfo info, LoopLowering run);
  Pipeline& loopPass(StageInfo info, LoopPass run);
  Pipeline& emit(StageInfo info, Emission run);

  const std::string& target() const { return target_; }
  const std::vector<Stage>& stages() const { return stages_; }
  std::vector<std::string> names() const;
  bool has(const std::string& name) const;
  bool hasScheduler() const;
  // One line per stage: name, IR in -> out, what it does, when it runs, what it requires.
  std::string describe() const;

 private:
  Pipeline& add(StageInfo info, Ir input, Ir output, Run run, bool scheduler = false);
  std::string target_;
  std::vector<Stage> stages_;
};

}  // namespace tessel::driver
