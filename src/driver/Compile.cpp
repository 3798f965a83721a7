#include "driver/Compile.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "driver/SchemeChoice.h"
#include "poly/IslContext.h"
#include "poly/Print.h"
#include "schedule/CheckSchedule.h"

namespace tessel::driver {

namespace {

// The IR between stages while a pipeline runs. The Scop points into
// `program`, which no stage changes after extraction (Pipeline checks that).
struct PipelineState {
  te::Program program;
  std::optional<poly::Scop> scop;
  isl::schedule schedule;
  lir::GeneratedAst ast;
  lir::Kernel kernel;
  std::string c;
};

std::string dumpOf(Ir ir, const PipelineState& s) {
  switch (ir) {
    case Ir::Program:
      return te::toString(s.program);
    case Ir::ScheduleTree:
      return poly::scheduleToYaml(s.schedule);
    case Ir::Ast:
      return s.ast.root.to_C_str();
    case Ir::LoopIr:
      return lir::toString(s.kernel);
    case Ir::C:
      return s.c;
  }
  return "";
}

void checkStageName(const std::string& name, const Pipeline& pipeline,
                    const std::string& flag = "--dump-after") {
  if (name.empty() || pipeline.has(name)) return;
  std::string list;
  for (const auto& n : pipeline.names()) list += (list.empty() ? "" : ", ") + n;
  userError("unknown pass '" + name + "' for " + flag + " (passes: " + list + ")");
}

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// A tree from the user, as it is: it must parse and execute every instance
// once in an order the dependences allow.
isl::schedule givenTree(const poly::Scop& scop, isl::ctx ctx, const CompileOptions::ScheduleFile& file) {
  std::string unreadable =
      "cannot read a schedule tree from " + file.origin + " (expected isl YAML, as printed by --dump-after)";
  if (file.text.find_first_not_of(" \t\r\n") == std::string::npos) userError(unreadable);
  isl::schedule tree;
  try {
    tree = isl::schedule(ctx, file.text);
  } catch (const isl::exception&) {
    userError(unreadable);
  }
  schedule::checkSchedule(scop, tree, file.origin);
  return tree;
}

// A tree that replaces the scheduler's (--schedule) carries no decision
// (coincidence, marks) Tessel does not recompute itself; one given to a pass
// run alone keeps its marks, which the pass may read.
isl::schedule userSchedule(const poly::Scop& scop, isl::ctx ctx, const CompileOptions::ScheduleFile& file) {
  return schedule::recomputeCoincidence(scop, schedule::withoutMarks(givenTree(scop, ctx, file)));
}

CompiledProgram runPipeline(const Pipeline& pipeline, const te::Program& program,
                            const CompileOptions& options, const Machine& machine, const PassAlone* alone) {
  TESSEL_CHECK(!pipeline.stages().empty() && pipeline.stages().back().output == Ir::C, pipeline.target(),
               "a pipeline ends in emission");
  CompiledProgram out;
  out.program = program;
  const target::Hardware& hardware = machine.hardware;
  // Before the state, whose isl objects must go before their context does.
  poly::IslContext isl;
  PipelineState state;
  state.program = program;
  target::PromotionPlan promotions;
  target::MicroKernelPlan microKernels;
  ProgramPassContext programContext{options, hardware, isl.ctx(), out.remarks};
  LoopPassContext loopContext{options, hardware, out.remarks};
  std::optional<PassContext> treeContext;  // once extracted
  auto runStage = [&](const Pipeline::Stage& stage) {
    std::visit(
        Overloaded{
            [&](const ProgramPass& f) { state.program = f(state.program, programContext); },
            [&](const Extraction& f) {
              state.scop.emplace(f(isl.ctx(), state.program));
              state.schedule = state.scop->initialSchedule;
              treeContext.emplace(PassContext{*state.scop, options, hardware, out.remarks, out.warnings,
                                              promotions, microKernels});
            },
            [&](const SchedulePass& f) {
              state.schedule = stage.scheduler && options.schedule
                                   ? userSchedule(*state.scop, isl.ctx(), *options.schedule)
                                   : f(state.schedule, *treeContext);
            },
            [&](const AstGeneration& f) {
              // A user's tree can be well-formed yet unusable for code
              // generation (a band that drops instances): that is their
              // input's fault, not an internal error.
              if (!options.schedule) {
                state.ast = f(state.schedule, *treeContext);
                return;
              }
              try {
                state.ast = f(state.schedule, *treeContext);
              } catch (const isl::exception& e) {
                userError("the schedule in " + options.schedule->origin + " cannot be compiled: " + e.what());
              }
            },
            [&](const LoopLowering& f) { state.kernel = f(state.program, state.ast, *treeContext); },
            [&](const LoopPass& f) { state.kernel = f(state.kernel, loopContext); },
            [&](const Emission& f) { state.c = f(state.kernel); },
        },
        stage.run);
  };
  using Clock = std::chrono::steady_clock;
  try {
    bool beforeAlone = alone != nullptr;
    for (const auto& stage : pipeline.stages()) {
      bool isAlone = alone && stage.info.name == alone->pass;
      beforeAlone = beforeAlone && !isAlone;
      if (alone && alone->tree && stage.input == Ir::ScheduleTree && stage.output == Ir::ScheduleTree) {
        // The given tree replaces what the schedule-tree passes before it would make.
        if (beforeAlone) continue;
        if (isAlone) state.schedule = givenTree(*state.scop, isl.ctx(), *alone->tree);
      }
      bool runs = !stage.info.runs || stage.info.runs(options, hardware);
      if (isAlone && !runs)
        userError("the pass '" + stage.info.name + "' does not run with these options (it runs " +
                  stage.info.when + ")");
      if (runs) {
        out.remarks.setPass(stage.info.name);
        auto start = Clock::now();
        runStage(stage);
        out.passSeconds.emplace_back(stage.info.name,
                                     std::chrono::duration<double>(Clock::now() - start).count());
      }
      if (options.dumpAfter == stage.info.name) {
        out.dump = dumpOf(stage.output, state);
        // As soon as the stage has run, so that a later stage's failure does not hide it.
        if (options.dumpSink) options.dumpSink(out.dump);
      }
      if (isAlone) {
        out.dump = dumpOf(stage.output, state);
        return out;
      }
    }
    out.scheduleYaml = poly::scheduleToYaml(state.schedule);
    out.astC = state.ast.root.to_C_str();
  } catch (const isl::exception& e) {
    throw InternalError("isl", e.what());
  }
  out.kernel = std::move(state.kernel);
  out.cSource = std::move(state.c);
  for (const auto& k : microKernels.kernels) out.microKernelSchemes.push_back(k.output + ": " + k.scheme);
  return out;
}

CompiledProgram compileWith(const te::Program& program, const CompileOptions& options, const Machine& machine,
                            const TargetStrategy& strategy, const PassAlone* alone) {
  Pipeline pipeline = strategy.pipeline();
  if (alone) {
    std::vector<std::string> names = pipeline.names();
    auto stage = std::find(names.begin(), names.end(), alone->pass);
    if (stage == names.end()) checkStageName(alone->pass, pipeline, "--pass");
    const Pipeline::Stage& s = pipeline.stages()[static_cast<size_t>(stage - names.begin())];
    if (alone->tree && (s.input != Ir::ScheduleTree || s.output != Ir::ScheduleTree))
      userError("a tree given to '" + alone->pass + "' (" + irName(s.input) + " -> " + irName(s.output) +
                "): only schedule-tree passes read one");
  }
  checkStageName(options.dumpAfter, pipeline);
  checkConstantInputs(program, options.constantInputs, "--constant-inputs");
  if (options.schedule && !pipeline.hasScheduler())
    userError(std::string("the ") + strategy.name() + " target has no scheduler for --schedule to replace");
  if (options.scheduleConstraints && options.scheduler != CompileOptions::Scheduler::Tessel)
    userError(
        "--schedule-constraints steers Tessel's scheduler: add --scheduler tessel (isl's scheduler takes no "
        "constraints)");
  if (options.scheduleConstraints && options.schedule)
    userError("--schedule-constraints and --schedule do not go together: --schedule replaces the scheduler");
  if (options.schedule && options.inlineElementwise)
    userError(
        "--schedule and --inline on do not go together: inlining removes statements, so the tree's "
        "statements would not be the program's");
  if (asksForSearch(options.scheme.text))
    userError(options.scheme.origin +
              ": a scheme search measures kernels on this machine, which compilation "
              "does not: compile through tune::compileTuned (as the tessel command does)");
  if (!asksForModelChoice(options.scheme.text) && !asksForNoScheme(options.scheme.text))
    return runPipeline(pipeline, program, options, machine, alone);
  // The scheme's decision first in --explain, then the compilation's. Where
  // the model's scheme does not graft into this program's schedule (a
  // dependence on both sides of the contraction, reads not proven in range),
  // graft-microkernel leaves the tree to the compiler's own code and says so.
  Remarks decided;
  decided.setPass(kSchemeChoice);
  CompiledProgram out =
      runPipeline(pipeline, program, resolveModelChoice(program, options, machine, decided), machine, alone);
  out.remarks.prepend(decided);
  return out;
}

}  // namespace

CompiledProgram compile(const te::Program& program, const CompileOptions& options, const Machine& machine,
                        const TargetStrategy& strategy) {
  return compileWith(program, options, machine, strategy, nullptr);
}

PassAloneResult runPassAlone(const te::Program& program, const CompileOptions& options,
                             const Machine& machine, const PassAlone& alone, const TargetStrategy& strategy) {
  CompiledProgram compiled = compileWith(program, options, machine, strategy, &alone);
  PassAloneResult out{std::move(compiled.dump), {}};
  for (const Remark& r : compiled.remarks.find(alone.pass)) out.remarks.add(r);
  return out;
}

}  // namespace tessel::driver
