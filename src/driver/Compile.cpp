#include "driver/Compile.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "backend/CEmitter.h"
#include "fuse/InlineElementwise.h"
#include "lir/AstToLir.h"
#include "lir/CoalesceLoops.h"
#include "lir/RegisterTile.h"
#include "lir/StreamStores.h"
#include "lir/Vectorize.h"
#include "poly/ExtractScop.h"
#include "poly/IslContext.h"
#include "poly/Print.h"
#include "schedule/CheckSchedule.h"
#include "target/DetectHost.h"
#include "te/WidenAccumulators.h"
#include "tune/SchemeSearch.h"

namespace tessel::driver {

std::string CompileOptions::toString() const {
  std::string s = "fusion=" + std::string(fusionName(fusion));
  if (fusion == Fusion::Basteln && bastelnRedundancy != CompileOptions{}.bastelnRedundancy)
    s += " redundancy=" + percentText(bastelnRedundancy);
  if (scheduler != Scheduler::Isl) s += std::string(" scheduler=") + schedulerName(scheduler);
  if (scheduleConstraints) s += " schedule-constraints=" + scheduleConstraints->origin;
  if (!dumpAfter.empty()) s += " dump-after=" + dumpAfter;
  if (schedule) s += " schedule=" + schedule->origin;
  s += autoTiling ? " tiling=auto" : " tiling=off";
  if (!vectorize) s += " vectorize=off";
  if (!registerTransposes) s += " transposes=off";
  if (inlineElementwise) s += " inline=on";
  if (!inlineElementwise && !recomputeCheap) s += " inline=off";
  if (promotion != Promotion::Auto) s += std::string(" promote=") + promotionName(promotion);
  if (streamingStores != StreamingStores::Auto)
    s += std::string(" stream-stores=") + streamingStoresName(streamingStores);
  if (!tiles.empty()) {
    std::string policy = tiles.toString();
    std::replace(policy.begin(), policy.end(), '\n', ';');
    s += " tiles=" + policy.substr(0, policy.size() - 1);
  }
  if (scheme.text != CompileOptions{}.scheme.text) s += " scheme=\"" + scheme.text + "\"";
  if (schemeBudget != CompileOptions{}.schemeBudget) s += " scheme-budget=" + std::to_string(schemeBudget);
  if (schemeClasses == SchemeClasses::Measure) s += " scheme-classes=measure";
  if (!constantInputs.empty()) s += " constant-inputs=" + constantInputs.toString();
  if (hardware) s += " hardware=" + hardware->name;
  if (scheduleTimeLimit != CompileOptions{}.scheduleTimeLimit)
    s += " schedule-time-limit=" + std::to_string(scheduleTimeLimit.count()) + "ms";
  if (fusionCheckTimeLimit != CompileOptions{}.fusionCheckTimeLimit)
    s += " fusion-check-time-limit=" + std::to_string(fusionCheckTimeLimit.count()) + "ms";
  return s;
}

bool CompileOptions::ConstantInputs::has(const std::string& input) const {
  return all || std::find(names.begin(), names.end(), input) != names.end();
}

std::string CompileOptions::ConstantInputs::toString() const {
  if (all) return "all";
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

CompileOptions::ConstantInputs parseConstantInputs(const std::string& text, const std::string& origin) {
  CompileOptions::ConstantInputs inputs;
  if (text == "all") {
    inputs.all = true;
    return inputs;
  }
  std::string name;
  for (char c : text + ",") {
    if (c != ',' && c != '+') {
      name += c;
      continue;
    }
    bool identifier =
        !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
        std::all_of(name.begin(), name.end(),
                    [](char x) { return std::isalnum(static_cast<unsigned char>(x)) || x == '_'; });
    if (!identifier)
      userError(origin + ": bad constant inputs '" + text +
                "' (expected 'all' or input names, as in 'Wt,B')");
    inputs.names.push_back(name);
    name.clear();
  }
  return inputs;
}

void checkConstantInputs(const te::Program& program, const CompileOptions::ConstantInputs& inputs,
                         const std::string& origin) {
  std::string names;
  for (const auto* t : program.inputs()) names += (names.empty() ? "" : ", ") + t->name;
  for (const auto& n : inputs.names) {
    auto all = program.inputs();
    if (std::none_of(all.begin(), all.end(), [&](const te::TensorDecl* t) { return t->name == n; }))
      userError(origin + ": '" + n + "' is not an input of " + program.name + " (" + names + ")");
  }
}

const char* fusionName(Fusion f) {
  switch (f) {
    case Fusion::None:
      return "none";
    case Fusion::Min:
      return "min";
    case Fusion::Smart:
      return "smart";
    case Fusion::Max:
      return "max";
    case Fusion::Basteln:
      return "basteln";
  }
  return "?";
}

Fusion parseFusion(const std::string& text) {
  for (auto f : {Fusion::None, Fusion::Min, Fusion::Smart, Fusion::Max, Fusion::Basteln})
    if (text == fusionName(f)) return f;
  userError("unknown fusion strategy '" + text + "' (expected none, min, smart, max or basteln)");
}

const char* schedulerName(CompileOptions::Scheduler s) {
  return s == CompileOptions::Scheduler::Tessel ? "tessel" : "isl";
}

CompileOptions::Scheduler parseScheduler(const std::string& text) {
  for (auto s : {CompileOptions::Scheduler::Isl, CompileOptions::Scheduler::Tessel})
    if (text == schedulerName(s)) return s;
  userError("unknown scheduler '" + text + "' (expected isl or tessel)");
}

schedule::FusionStrategy schedulerFusion(Fusion f) {
  switch (f) {
    case Fusion::None:
      return schedule::FusionStrategy::None;
    case Fusion::Min:
      return schedule::FusionStrategy::Min;
    case Fusion::Max:
      return schedule::FusionStrategy::Max;
    case Fusion::Basteln:  // Alg. 1 groups the nests (basteln-group)
      return schedule::FusionStrategy::Min;
    case Fusion::Smart:
      return schedule::FusionStrategy::Smart;
  }
  return schedule::FusionStrategy::Smart;
}

double parsePercent(const std::string& text, const std::string& what) {
  std::string digits = text;
  if (!digits.empty() && digits.back() == '%') digits.pop_back();
  size_t used = 0;
  double value = -1;
  try {
    value = std::stod(digits, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (digits.empty() || used != digits.size() || !(value >= 0 && value <= 100))
    userError("bad " + what + " '" + text + "' (expected a percentage from 0 to 100, such as 25%)");
  return value / 100;
}

std::string percentText(double share) {
  std::string s = std::to_string(share * 100);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s + "%";
}

const char* promotionName(CompileOptions::Promotion p) {
  switch (p) {
    case CompileOptions::Promotion::Auto:
      return "auto";
    case CompileOptions::Promotion::All:
      return "all";
    case CompileOptions::Promotion::Off:
      return "off";
  }
  return "?";
}

CompileOptions::Promotion parsePromotion(const std::string& text) {
  for (auto p :
       {CompileOptions::Promotion::Auto, CompileOptions::Promotion::All, CompileOptions::Promotion::Off})
    if (text == promotionName(p)) return p;
  userError("bad promotion '" + text + "' (expected auto, all or off)");
}

const char* streamingStoresName(CompileOptions::StreamingStores s) {
  switch (s) {
    case CompileOptions::StreamingStores::Auto:
      return "auto";
    case CompileOptions::StreamingStores::Always:
      return "always";
    case CompileOptions::StreamingStores::Off:
      return "off";
  }
  return "?";
}

CompileOptions::StreamingStores parseStreamingStores(const std::string& text) {
  using S = CompileOptions::StreamingStores;
  for (auto s : {S::Auto, S::Always, S::Off})
    if (text == streamingStoresName(s)) return s;
  userError("bad stream-stores '" + text + "' (expected auto, always or off)");
}

std::vector<std::string> passNames(const TargetStrategy& strategy) {
  std::vector<std::string> names = {"widen-accumulators", "inline", "extract"};
  for (const auto& p : strategy.schedulePasses()) names.push_back(p.name);
  names.insert(names.end(), {"ast", "lir", "coalesce", "vectorize", "register-tile", "stream-stores"});
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
// A tree from the user replaces the scheduler's: it must parse, execute every
// instance once in an order the dependences allow, and may carry no decision
// (coincidence, marks) Tessel does not recompute itself.
isl::schedule userSchedule(const poly::Scop& scop, isl::ctx ctx, const CompileOptions::ScheduleFile& file) {
  std::string unreadable =
      "cannot read a schedule tree from " + file.origin + " (expected isl YAML, as printed by --dump-after)";
  if (file.text.find_first_not_of(" \t\r\n") == std::string::npos) userError(unreadable);
  isl::schedule schedule;
  try {
    schedule = isl::schedule(ctx, file.text);
  } catch (const isl::exception&) {
    userError(unreadable);
  }
  schedule::checkSchedule(scop, schedule, file.origin);
  return schedule::recomputeCoincidence(scop, schedule::withoutMarks(schedule));
}

// A user's tree can be well-formed yet unusable for code generation (a band
// that drops instances): that is their input's fault, not an internal error.
lir::GeneratedAst astFor(const isl::schedule& schedule, const poly::Scop& scop,
                         const target::PromotionPlan& promotions, const CompileOptions& options) {
  if (!options.schedule) return lir::buildAst(schedule, scop, promotions);
  try {
    return lir::buildAst(schedule, scop, promotions);
  } catch (const isl::exception& e) {
    userError("the schedule in " + options.schedule->origin + " cannot be compiled: " + e.what());
  }
}

}  // namespace

std::optional<int64_t> streamingStoreThreshold(const CompileOptions& options,
                                               const target::Hardware& hardware) {
  if (!options.vectorize || options.streamingStores == CompileOptions::StreamingStores::Off ||
      target::vectorIsa(hardware).empty())
    return std::nullopt;
  return options.streamingStores == CompileOptions::StreamingStores::Always
             ? 0
             : target::totalCacheBytes(hardware);
}

namespace {

// The largest cache one core has to itself (0 when none is known): a
// temporary beyond it goes through shared caches or memory.
int64_t largestPrivateCacheBytes(const target::Hardware& hardware) {
  int64_t bytes = 0;
  for (const auto& level : hardware.memory)
    if (!level.managed && level.capacityBytes > 0 && level.name != "DRAM" && level.sharedBy <= 1)
      bytes = std::max(bytes, level.capacityBytes);
  return bytes;
}

}  // namespace

CompiledProgram compile(const te::Program& program, const CompileOptions& options,
                        const TargetStrategy& strategy) {
  checkPassName(options.dumpAfter, strategy);
  checkConstantInputs(program, options.constantInputs, "--constant-inputs");
  auto passes = strategy.schedulePasses();
  if (options.schedule &&
      std::none_of(passes.begin(), passes.end(), [](const SchedulePass& p) { return p.isScheduler; }))
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
  // The scheme's decision first in --explain, then the compilation's.
  auto compileExplained = [&program, &strategy](const CompileOptions& o, const std::string& decided) {
    CompiledProgram out = compile(program, o, strategy);
    out.explanation = decided + out.explanation;
    return out;
  };
  if (tune::asksForModelChoice(options.scheme.text) || tune::asksForNoScheme(options.scheme.text)) {
    std::string decided;
    CompileOptions chosen = tune::resolveModelChoice(program, options, decided);
    if (chosen.scheme.text.empty()) return compileExplained(chosen, decided);
    // The model's scheme may not graft into this program's schedule (a
    // dependence on both sides of the contraction, reads not proven in
    // range): then the compiler's own code, which the user did not opt out
    // of. The dumps wait until the attempt succeeds, so none prints twice.
    std::vector<std::string> dumps;
    CompileOptions attempt = chosen;
    if (options.dumpSink) attempt.dumpSink = [&dumps](const std::string& text) { dumps.push_back(text); };
    try {
      CompiledProgram out = compileExplained(attempt, decided);
      for (const auto& text : dumps) options.dumpSink(text);
      return out;
    } catch (const UserError& e) {
      decided += "scheme auto: the scheme does not graft here (" + e.reason() +
                 "); the compiler's own code instead\n";
    }
    chosen.scheme.text.clear();
    return compileExplained(chosen, decided);
  }
  if (tune::asksForSearch(options.scheme.text)) {
    tune::SchemeSearchOptions search;
    search.budget = options.schemeBudget;
    search.threads = options.schemeThreads;
    search.measureMicroKernels = options.schemeClasses == CompileOptions::SchemeClasses::Measure;
    std::string decided;
    CompileOptions chosen = tune::resolveSchemeSearch(program, options, search, decided);
    return compileExplained(chosen, decided);
  }
  CompiledProgram out;
  out.program = program;
  auto keepDump = [&out, &options](std::string text) {
    if (options.dumpSink) options.dumpSink(text);
    out.dump = std::move(text);
  };
  // Each stage's wall time goes to out.passSeconds (--time-passes).
  using Clock = std::chrono::steady_clock;
  auto record = [&out](const std::string& name, Clock::time_point start) {
    out.passSeconds.emplace_back(name, std::chrono::duration<double>(Clock::now() - start).count());
  };
  auto timed = [&record](const std::string& name, const auto& stage) {
    auto start = Clock::now();
    stage();
    record(name, start);
  };
  te::Program lowered = te::widenLowPrecisionAccumulators(program);
  if (options.dumpAfter == "widen-accumulators") keepDump(te::toString(lowered));
  poly::IslContext isl;
  try {
    fuse::InlineOptions inlining;
    inlining.readOnce = options.inlineElementwise;
    if (options.recomputeCheap && !options.schedule)
      inlining.recomputeAboveBytes =
          largestPrivateCacheBytes(options.hardware ? *options.hardware : target::detectHost());
    if (inlining.readOnce || inlining.recomputeAboveBytes > 0)
      timed("inline",
            [&] { lowered = fuse::inlineElementwise(isl.ctx(), lowered, inlining, out.explanation); });
    if (options.dumpAfter == "inline") keepDump(te::toString(lowered));
    auto extractStart = Clock::now();
    poly::Scop scop = poly::extractScop(isl.ctx(), lowered);
    record("extract", extractStart);
    isl::schedule schedule = scop.initialSchedule;
    if (options.dumpAfter == "extract") keepDump(poly::scheduleToYaml(schedule));
    target::Hardware host = options.hardware ? *options.hardware : target::detectHost();
    target::PromotionPlan promotions;
    target::MicroKernelPlan microKernels;
    PassContext context{scop, options, host, out.explanation, out.warnings, promotions, microKernels};
    for (const auto& pass : passes) {
      bool replaced = pass.isScheduler && options.schedule;
      timed(pass.name, [&] {
        schedule = replaced ? userSchedule(scop, isl.ctx(), *options.schedule) : pass.run(schedule, context);
      });
      if (options.dumpAfter == pass.name) keepDump(poly::scheduleToYaml(schedule));
    }
    out.scheduleYaml = poly::scheduleToYaml(schedule);
    lir::GeneratedAst ast;
    timed("ast", [&] { ast = astFor(schedule, scop, promotions, options); });
    out.astC = ast.root.to_C_str();
    if (options.dumpAfter == "ast") keepDump(out.astC);
    timed("lir", [&] { out.kernel = lir::astToLir(lowered, scop, ast, promotions, microKernels); });
    for (const auto& k : microKernels.kernels) out.microKernelSchemes.push_back(k.output + ": " + k.scheme);
    if (options.dumpAfter == "lir") keepDump(lir::toString(out.kernel));
    if (options.vectorize)
      timed("coalesce", [&] {
        out.kernel = lir::coalesceLoops(out.kernel, lir::f32Lanes(target::vectorIsa(host)), out.explanation);
      });
    if (options.dumpAfter == "coalesce") keepDump(lir::toString(out.kernel));
    if (options.vectorize)
      timed("vectorize",
            [&] { out.kernel = lir::vectorizeLoops(out.kernel, target::vectorIsa(host), out.explanation); });
    if (options.dumpAfter == "vectorize") keepDump(lir::toString(out.kernel));
    if (options.vectorize)
      timed("register-tile",
            [&] { out.kernel = lir::registerTile(out.kernel, out.kernel.vectorIsa, out.explanation); });
    if (options.dumpAfter == "register-tile") keepDump(lir::toString(out.kernel));
    if (std::optional<int64_t> threshold = streamingStoreThreshold(options, host))
      timed("stream-stores",
            [&] { out.kernel = lir::markStreamingStores(out.kernel, *threshold, out.explanation); });
    if (options.dumpAfter == "stream-stores") keepDump(lir::toString(out.kernel));
    timed("emit-c", [&] { out.cSource = backend::emitC(out.kernel); });
  } catch (const isl::exception& e) {
    throw InternalError("isl", e.what());
  }
  return out;
}

}  // namespace tessel::driver
