#include "target/cpu/GraftMicroKernels.h"

#include <isl/schedule.h>
#include <isl/schedule_node.h>

#include <algorithm>
#include <map>
#include <set>
#include <variant>

#include "microkernel/BoundScheme.h"
#include "microkernel/Contraction.h"
#include "microkernel/Epilogue.h"
#include "microkernel/SchemeCodegen.h"
#include "schedule/Marks.h"

namespace tessel::target::cpu {

namespace {

using microkernel::Contraction;

const poly::Statement& updateStatement(const poly::Scop& scop, int stage) {
  for (const auto& s : scop.statements)
    if (s.stage == stage && s.kind == poly::StatementKind::Update) return s;
  throw InternalError("graft-microkernel", "contraction without an update statement");
}

// The statements the `targets` depend on, directly or not, themselves excluded.
std::set<std::string> ancestors(const poly::Scop& scop, const std::set<std::string>& targets) {
  std::multimap<std::string, std::string> into;  // sink -> source
  scop.deps.validity().foreach_map(
      [&](isl::map m) { into.emplace(m.range_tuple_id().name(), m.domain_tuple_id().name()); });
  std::set<std::string> found;
  std::vector<std::string> work(targets.begin(), targets.end());
  while (!work.empty()) {
    std::string s = work.back();
    work.pop_back();
    auto [begin, end] = into.equal_range(s);
    for (auto it = begin; it != end; ++it)
      if (!targets.count(it->second) && found.insert(it->second).second) work.push_back(it->second);
  }
  return found;
}

// Why the epilogue cannot be applied inside this scheme's micro-kernel, or "".
std::string whyNotFused(const microkernel::BoundScheme& b) {
  for (const auto& bindings : b.allBindings())
    for (size_t i = 0; i < b.accumulationStart(); ++i) {
      const microkernel::Specifier& s = b.scheme.specs[i];
      if (s.kind != microkernel::SpecKind::Seq && b.contraction->dim(s.dim)->reduction &&
          b.trips(i, bindings) > 1)
        return "the reduction loop " + microkernel::toString(s) +
               " runs outside the micro-kernel, so no tile is "
               "complete when it leaves the registers";
    }
  return "";
}

// `base`, or `base` with a number, that names no tensor of the program.
std::string unusedName(const te::Program& program, const std::string& base) {
  auto taken = [&](const std::string& n) {
    return std::any_of(program.tensors.begin(), program.tensors.end(),
                       [&](const te::TensorDecl& t) { return t.name == n; });
  };
  std::string name = base;
  for (int n = 2; taken(name); ++n) name = base + std::to_string(n);
  return name;
}

}  // namespace

isl::schedule graftMicroKernels(const poly::Scop& scop, const isl::schedule& schedule,
                                const GraftOptions& options, MicroKernelPlan& plan, Remarks& remarks) {
  if (options.scheme.empty()) return schedule;
  auto [tensor, start] = microkernel::splitSelection(options.scheme);
  microkernel::Scheme scheme = microkernel::parseScheme(options.scheme, options.origin, start);
  Contraction contraction = microkernel::selectContraction(*scop.program, tensor, options.origin);
  const te::Stage& stage = scop.program->stages[static_cast<size_t>(contraction.stage)];
  const poly::Statement& update = updateStatement(scop, contraction.stage);
  // Where the scheme cannot replace the contraction: the user's error, or
  // with the model's scheme the compiler's own code.
  auto refuse = [&](const UserError& why) {
    if (!options.optional) throw why;
    remarks.missed(update.name,
                   "graft-microkernel: the scheme does not graft here (" + why.reason() +
                       "); the compiler's own code instead",
                   {{"reason", why.reason()}, {"scheme", options.scheme}});
    return schedule;
  };
  for (auto read : stage.rhs->operands) {
    if (read->kind == te::ExprKind::Select) read = read->operands[1];  // a padded read
    if (scop.checkedReads.count(read.get()))
      return refuse(
          UserError(stage.loc, options.origin + ": the reads of " + read->name +
                                   " are not proven in range, and a scheme's code checks no bounds"));
  }
  std::variant<microkernel::BoundScheme, UserError> binding =
      microkernel::tryBindScheme(contraction, scheme, microkernel::vectorIsaNamed(options.vectorIsa));
  if (const auto* broken = std::get_if<UserError>(&binding)) return refuse(*broken);
  const microkernel::BoundScheme& bound = std::get<microkernel::BoundScheme>(binding);
  // The micro-kernel's statements: the update, and with a fused epilogue also
  // the contraction's initialization and the epilogue's statement.
  std::set<std::string> grafted = {update.name};
  std::string epilogueNote;
  Remarks::Values notes;  // the remark's values about the epilogue and the layouts
  // Every tile complete when it leaves the registers: the initialization to
  // zero is folded in (the accumulators start at zero), and so is an epilogue.
  std::string incomplete = whyNotFused(bound);
  bool foldsInit = false;
  if (incomplete.empty())
    for (const auto& s : scop.statements)
      if (s.stage == contraction.stage && s.kind == poly::StatementKind::Init) {
        grafted.insert(s.name);
        foldsInit = true;
      }
  microkernel::EpilogueRecognition ep = microkernel::recognizeEpilogue(*scop.program, contraction);
  if (!ep.epilogue) {
    epilogueNote = "; no epilogue fused (" + ep.whyNot + ")";
    notes.emplace_back("epilogue_fused", false);
    notes.emplace_back("epilogue_reason", ep.whyNot);
  }
  if (ep.epilogue) {
    notes.emplace_back("epilogue", ep.epilogue->output.tensor);
    notes.emplace_back("epilogue_fused", incomplete.empty());
    if (incomplete.empty()) {
      for (const auto& s : scop.statements)
        if (s.stage == ep.epilogue->stage) grafted.insert(s.name);
      epilogueNote = "; epilogue " + ep.epilogue->output.tensor +
                     " applied to each tile as it leaves the "
                     "registers, " +
                     contraction.output.tensor + " never stored";
    } else {
      epilogueNote = "; epilogue " + ep.epilogue->output.tensor + " not fused: " + incomplete;
      notes.emplace_back("epilogue_reason", incomplete);
      ep.epilogue.reset();
    }
  }

  // Before: what the grafted statements depend on; after: the rest. A
  // dependence the other way would need their instances interleaved.
  std::set<std::string> before = ancestors(scop, grafted);
  auto part = [&](const std::string& s) { return grafted.count(s) ? 1 : before.count(s) ? 0 : 2; };
  std::string interleaved;  // a statement that would have to run on both sides
  scop.deps.validity().foreach_map([&](isl::map m) {
    std::string source = m.domain_tuple_id().name(), sink = m.range_tuple_id().name();
    if (interleaved.empty() && part(source) > part(sink)) interleaved = sink;
  });
  if (!interleaved.empty())
    return refuse(UserError({}, options.origin + ": " + interleaved +
                                    " must run before the contraction and also after it; the contraction "
                                    "cannot be taken out of the schedule"));
  isl::union_set beforeDomain = isl::union_set::empty(scop.domain.ctx());
  isl::union_set afterDomain = beforeDomain;
  for (const auto& s : scop.statements) {
    if (part(s.name) == 0) beforeDomain = beforeDomain.unite(isl::union_set(s.domain));
    if (part(s.name) == 2) afterDomain = afterDomain.unite(isl::union_set(s.domain));
  }

  GraftedMicroKernel kernel;
  kernel.statement = update.name;
  kernel.output = contraction.output.tensor;
  kernel.mark = schedule::kMicroKernelMarkPrefix + std::to_string(plan.kernels.size());
  kernel.function = "tessel_" + kernel.mark;
  kernel.arguments = {ep.epilogue ? ep.epilogue->output.tensor : contraction.output.tensor,
                      contraction.lhs.tensor, contraction.rhs.tensor};
  if (ep.epilogue)
    for (const auto& t : ep.epilogue->tensors()) kernel.arguments.push_back(t);
  kernel.scheme = microkernel::toString(scheme);
  std::string readsLaidOut;  // the operands read in the scheme's layouts, by name
  for (size_t n = 0; n < bound.layouts.size(); ++n) {
    const std::string& tensor = bound.layouts[n];
    if (tensor == contraction.output.tensor) continue;
    const microkernel::TensorAccess& access =
        tensor == bound.contraction->lhs.tensor ? bound.contraction->lhs : bound.contraction->rhs;
    target::LaidOutOperand laid;
    laid.tensor = tensor;
    laid.buffer = unusedName(*scop.program, tensor + "_laid_out");
    laid.shape = access.layoutShape();
    laid.function = kernel.function + "_layout" + std::to_string(n);
    laid.source = microkernel::generateLayoutTransformC(access, laid.function);
    laid.layout = microkernel::layoutText(access);
    laid.input = scop.program->tensor(tensor).role == te::TensorRole::Input &&
                 (!options.declaredConstant || options.declaredConstant(tensor));
    std::replace(kernel.arguments.begin() + 1, kernel.arguments.begin() + 3, tensor, laid.buffer);
    epilogueNote += "; reads " + tensor + " as " + laid.layout +
                    (laid.input ? ", transformed apart from the kernel (its prepare entry)"
                                : ", transformed right before the micro-kernel, on every call");
    readsLaidOut += (readsLaidOut.empty() ? "" : " ") + tensor;
    notes.emplace_back("layout." + tensor, laid.layout);
    notes.emplace_back("prepared." + tensor, laid.input);
    kernel.layouts.push_back(std::move(laid));
  }
  if (!readsLaidOut.empty()) notes.emplace_back("reads_laid_out", readsLaidOut);
  if (bound.outputLaidOut()) {
    // The kernel writes its output (the epilogue's, when fused) in the
    // layout, and the result is copied back into the tensor after each call;
    // accumulators that do not start at zero are first copied in.
    microkernel::TensorAccess access = bound.contraction->output;
    if (ep.epilogue) {
      ep.epilogue->output.layout = access.layout;
      access.tensor = ep.epilogue->output.tensor;
    }
    target::LaidOutOperand laid;
    laid.tensor = access.tensor;
    laid.buffer = unusedName(*scop.program, access.tensor + "_laid_out");
    laid.shape = access.layoutShape();
    laid.function = kernel.function + "_layout_in";
    laid.backFunction = kernel.function + "_layout_back";
    laid.source = microkernel::generateLayoutTransformBackC(access, laid.backFunction);
    laid.output = true;
    laid.copiedIn = !foldsInit && !ep.epilogue;
    if (laid.copiedIn)
      laid.source = microkernel::generateLayoutTransformC(access, laid.function) + laid.source;
    laid.layout = microkernel::layoutText(access);
    kernel.arguments[0] = laid.buffer;
    epilogueNote += "; writes " + access.tensor + " as " + laid.layout +
                    (laid.copiedIn ? ", copied in and" : ",") +
                    " copied back after the micro-kernel, on every call";
    notes.emplace_back("writes_laid_out", access.tensor);
    notes.emplace_back("layout." + access.tensor, laid.layout);
    notes.emplace_back("copied_in", laid.copiedIn);
    kernel.layouts.push_back(std::move(laid));
  }
  microkernel::SchemeCodeOptions code;
  code.functionName = kernel.function;
  code.parallel = options.parallel;
  code.epilogue = ep.epilogue ? &*ep.epilogue : nullptr;
  code.startsAtZero = foldsInit;
  kernel.source = microkernel::generateSchemeC(bound, code);

  isl::schedule result = isl::schedule::from_domain(isl::union_set(update.domain));
  result = result.root().child(0).insert_mark(kernel.mark).schedule();
  auto sequence = [](isl::schedule a, isl::schedule b) {
    return isl::manage(isl_schedule_sequence(a.release(), b.release()));
  };
  auto restricted = [&schedule](const isl::union_set& domain) {
    return isl::manage(isl_schedule_intersect_domain(schedule.copy(), domain.copy()));
  };
  if (!beforeDomain.is_empty()) result = sequence(restricted(beforeDomain), result);
  if (!afterDomain.is_empty()) result = sequence(result, restricted(afterDomain));

  microkernel::RegisterTileShape tile = bound.registerTile(bound.allBindings().front());
  Remarks::Values values = {{"tensor", contraction.output.tensor},
                            {"dimensions", contraction.dims.size()},
                            {"dimension_names", contraction.dimNames()},
                            {"scheme", kernel.scheme},
                            {"function", kernel.function},
                            {"accumulators", tile.accumulators.size()},
                            {"steps", tile.steps.size()}};
  if (!options.vectorIsa.empty()) values.emplace_back("isa", options.vectorIsa);
  values.emplace_back("init_folded", foldsInit);
  values.insert(values.end(), notes.begin(), notes.end());
  remarks.applied(
      update.name,
      "graft-microkernel: " + update.name + " (" + contraction.output.tensor + ", " +
          std::to_string(contraction.dims.size()) + " dimensions: " + contraction.dimNames() +
          ") runs the scheme [" + kernel.scheme + "] as " + kernel.function + ": register tile of " +
          std::to_string(tile.accumulators.size()) + " accumulators x " + std::to_string(tile.steps.size()) +
          " unrolled steps" + (options.vectorIsa.empty() ? "" : " (" + options.vectorIsa + ")") +
          (foldsInit
               ? "; accumulators start at zero (" + contraction.output.tensor + "'s initialization folded in)"
               : "") +
          epilogueNote,
      std::move(values));
  plan.kernels.push_back(std::move(kernel));
  return result;
}

}  // namespace tessel::target::cpu
