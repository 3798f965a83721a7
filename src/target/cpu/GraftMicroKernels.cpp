#include "target/cpu/GraftMicroKernels.h"

#include <isl/schedule.h>
#include <isl/schedule_node.h>

#include <cctype>
#include <map>
#include <set>

#include "microkernel/BoundScheme.h"
#include "microkernel/Contraction.h"
#include "microkernel/SchemeCodegen.h"

namespace tessel::target::cpu {

namespace {

using microkernel::Contraction;

const poly::Statement& updateStatement(const poly::Scop& scop, int stage) {
  for (const auto& s : scop.statements)
    if (s.stage == stage && s.kind == poly::StatementKind::Update) return s;
  throw InternalError("graft-microkernel", "contraction without an update statement");
}

// The statements `target` depends on, directly or not.
std::set<std::string> ancestors(const poly::Scop& scop, const std::string& target) {
  std::multimap<std::string, std::string> into;  // sink -> source
  scop.deps.validity().foreach_map(
      [&](isl::map m) { into.emplace(m.range_tuple_id().name(), m.domain_tuple_id().name()); });
  std::set<std::string> found;
  std::vector<std::string> work = {target};
  while (!work.empty()) {
    std::string s = work.back();
    work.pop_back();
    auto [begin, end] = into.equal_range(s);
    for (auto it = begin; it != end; ++it)
      if (it->second != target && found.insert(it->second).second) work.push_back(it->second);
  }
  return found;
}

}  // namespace

isl::schedule graftMicroKernels(const poly::Scop& scop, const isl::schedule& schedule,
                                const GraftOptions& options, MicroKernelPlan& plan, std::string& explain) {
  if (options.scheme.empty()) return schedule;
  auto [tensor, start] = microkernel::splitSelection(options.scheme);
  microkernel::Scheme scheme = microkernel::parseScheme(options.scheme, options.origin, start);
  Contraction contraction = microkernel::selectContraction(*scop.program, tensor, options.origin);
  const te::Stage& stage = scop.program->stages[static_cast<size_t>(contraction.stage)];
  for (const auto& read : stage.rhs->operands)
    if (scop.checkedReads.count(read.get()))
      userError(stage.loc, options.origin + ": the reads of " + read->name +
                               " are not proven in range, and a scheme's code checks no bounds");
  microkernel::BoundScheme bound =
      microkernel::bindScheme(contraction, scheme, microkernel::vectorIsaNamed(options.vectorIsa));
  const poly::Statement& update = updateStatement(scop, contraction.stage);

  // Before: what the update depends on; after: the rest. A dependence the
  // other way would need instances of the update interleaved with them.
  std::set<std::string> before = ancestors(scop, update.name);
  auto part = [&](const std::string& s) { return s == update.name ? 1 : before.count(s) ? 0 : 2; };
  scop.deps.validity().foreach_map([&](isl::map m) {
    std::string source = m.domain_tuple_id().name(), sink = m.range_tuple_id().name();
    if (part(source) > part(sink))
      userError(options.origin + ": " + sink + " must run before the contraction and also after it; the " +
                "contraction cannot be taken out of the schedule");
  });
  isl::union_set beforeDomain = isl::union_set::empty(scop.domain.ctx());
  isl::union_set afterDomain = beforeDomain;
  for (const auto& s : scop.statements) {
    if (part(s.name) == 0) beforeDomain = beforeDomain.unite(isl::union_set(s.domain));
    if (part(s.name) == 2) afterDomain = afterDomain.unite(isl::union_set(s.domain));
  }

  GraftedMicroKernel kernel;
  kernel.statement = update.name;
  kernel.mark = target::kMicroKernelMarkPrefix + std::to_string(plan.kernels.size());
  kernel.function = "tessel_" + kernel.mark;
  kernel.output = contraction.output.tensor;
  kernel.lhs = contraction.lhs.tensor;
  kernel.rhs = contraction.rhs.tensor;
  kernel.scheme = microkernel::toString(scheme);
  microkernel::SchemeCodeOptions code;
  code.functionName = kernel.function;
  code.parallel = options.parallel;
  kernel.source = microkernel::generateSchemeC(bound, code);

  isl::schedule grafted = isl::schedule::from_domain(isl::union_set(update.domain));
  grafted = grafted.root().child(0).insert_mark(kernel.mark).schedule();
  auto sequence = [](isl::schedule a, isl::schedule b) {
    return isl::manage(isl_schedule_sequence(a.release(), b.release()));
  };
  auto restricted = [&schedule](const isl::union_set& domain) {
    return isl::manage(isl_schedule_intersect_domain(schedule.copy(), domain.copy()));
  };
  if (!beforeDomain.is_empty()) grafted = sequence(restricted(beforeDomain), grafted);
  if (!afterDomain.is_empty()) grafted = sequence(grafted, restricted(afterDomain));

  microkernel::RegisterTileShape tile = bound.registerTile(bound.allBindings().front());
  explain += "graft-microkernel: " + update.name + " (" + contraction.output.tensor + ", " +
             std::to_string(contraction.dims.size()) + " dimensions: " + contraction.dimNames() +
             ") runs the scheme [" + kernel.scheme + "] as " + kernel.function + ": register tile of " +
             std::to_string(tile.accumulators.size()) + " accumulators x " +
             std::to_string(tile.steps.size()) + " unrolled steps" +
             (options.vectorIsa.empty() ? "" : " (" + options.vectorIsa + ")") + "\n";
  plan.kernels.push_back(std::move(kernel));
  return grafted;
}

}  // namespace tessel::target::cpu
