#include "driver/Compile.h"

#include "backend/CEmitter.h"
#include "lir/AstToLir.h"
#include "poly/Dependences.h"
#include "poly/ExtractScop.h"
#include "poly/IslContext.h"
#include "poly/Print.h"
#include "schedule/CheckSchedule.h"
#include "te/WidenAccumulators.h"

namespace tessel::driver {

std::string CompileOptions::toString() const {
  std::string s = "fusion=" + std::string(schedule::fusionStrategyName(fusion));
  if (!dumpAfter.empty()) s += " dump-after=" + dumpAfter;
  if (!scheduleOrigin.empty()) s += " schedule=" + scheduleOrigin;
  return s;
}

std::vector<std::string> passNames(const TargetStrategy& strategy) {
  std::vector<std::string> names = {"widen-accumulators", "extract"};
  for (const auto& p : strategy.schedulePasses()) names.push_back(p.name);
  names.insert(names.end(), {"ast", "lir"});
  return names;
}

namespace {
void checkPassName(const std::string& name, const TargetStrategy& strategy) {
  if (name.empty()) return;
  auto names = passNames(strategy);
  for (const auto& n : names)
    if (n == name) return;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  userError("unknown pass '" + name + "' for --dump-after (passes: " + list + ")");
}
isl::schedule loadSchedule(isl::ctx ctx, const CompileOptions& options) {
  std::string unreadable = "cannot read a schedule tree from " + options.scheduleOrigin +
                           " (expected isl YAML, as printed by --dump-after)";
  if (options.scheduleText.find_first_not_of(" \t\r\n") == std::string::npos) userError(unreadable);
  try {
    return isl::schedule(ctx, options.scheduleText);
  } catch (const isl::exception&) {
    userError(unreadable);
  }
}

}  // namespace

CompiledProgram compile(const te::Program& program, const CompileOptions& options,
                        const TargetStrategy& strategy) {
  checkPassName(options.dumpAfter, strategy);
  CompiledProgram out;
  out.program = program;
  te::Program lowered = te::widenLowPrecisionAccumulators(program);
  if (options.dumpAfter == "widen-accumulators") out.dump = te::toString(lowered);
  poly::IslContext isl;
  try {
    poly::Scop scop = poly::extractScop(isl.ctx(), lowered);
    scop.deps = poly::computeDependences(scop);
    isl::schedule schedule = scop.initialSchedule;
    if (options.dumpAfter == "extract") out.dump = poly::scheduleToYaml(schedule);
    for (const auto& pass : strategy.schedulePasses()) {
      if (pass.name == "schedule" && !options.scheduleOrigin.empty()) {
        schedule = loadSchedule(isl.ctx(), options);
        schedule::checkSchedule(scop, schedule, options.scheduleOrigin);
        schedule = schedule::recomputeCoincidence(scop, schedule::withoutMarks(schedule));
      } else {
        schedule = pass.run(scop, schedule, options);
      }
      if (options.dumpAfter == pass.name) out.dump = poly::scheduleToYaml(schedule);
    }
    out.scheduleYaml = poly::scheduleToYaml(schedule);
    isl::ast_node ast = lir::buildAst(schedule);
    out.astC = ast.to_C_str();
    if (options.dumpAfter == "ast") out.dump = out.astC;
    out.kernel = lir::astToLir(lowered, scop, ast);
    if (options.dumpAfter == "lir") out.dump = lir::toString(out.kernel);
    out.cSource = backend::emitC(out.kernel);
  } catch (const isl::exception& e) {
    // A tree from the user can be well-formed yet unusable for code
    // generation (a band dropping instances, a parametric context): that is
    // their input's fault, not an internal error.
    if (!options.scheduleOrigin.empty())
      userError("the schedule in " + options.scheduleOrigin + " cannot be compiled: " + e.what());
    throw InternalError("isl", e.what());
  }
  return out;
}

}  // namespace tessel::driver
