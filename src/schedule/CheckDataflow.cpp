#include "schedule/CheckDataflow.h"

#include <isl/union_map.h>

#include <sstream>

#include "schedule/FlattenSchedule.h"

namespace tessel::schedule {

namespace {

constexpr const char* kFinalRead = "final_read";

template <typename T>
std::string text(const T& value) {
  std::ostringstream os;
  os << value;
  std::string s = os.str();
  return s.size() > 400 ? s.substr(0, 400) + " ..." : s;
}

size_t timeLength(const isl::union_map& executions) {
  size_t n = 0;
  executions.foreach_map([&](isl::map m) { n = m.range_tuple_dim(); });
  return n;
}

// Every element of the program's outputs.
isl::union_set outputElements(const poly::Scop& scop) {
  isl::union_set outputs = isl::union_set::empty(scop.domain.ctx());
  for (const te::TensorDecl* t : scop.program->outputs()) {
    std::ostringstream os;
    os << "{ " << t->name << "[";
    for (size_t i = 0; i < t->shape.size(); ++i) os << (i ? ", " : "") << "i" << i;
    os << "] }";
    outputs = outputs.unite(isl::union_set(scop.domain.ctx(), os.str()));
  }
  return scop.writes.range().intersect(outputs);
}

// Where each read of each execution gets its value, stated per instance:
// source instance -> reading instance, and reading instance -> elements that
// no execution wrote before. A virtual final_read instance, after everything,
// reads the outputs.
struct InstanceFlow {
  isl::union_map sources;
  isl::union_map noSource;
};

InstanceFlow instanceFlow(const poly::Scop& scop, isl::union_map executions) {
  isl::ctx ctx = scop.domain.ctx();
  size_t n = timeLength(executions);
  std::ostringstream t, later, final;
  for (size_t i = 0; i < n; ++i) t << (i ? ", " : "") << "t" << i;
  // Real executions get a leading 0, the final read a leading 1.
  executions = executions.apply_range(
      isl::union_map(ctx, "{ [" + t.str() + "] -> [0" + (n ? ", " : "") + t.str() + "] }"));
  final << "{ " << kFinalRead << "[] -> [1";
  for (size_t i = 0; i < n; ++i) final << ", 0";
  final << "] }";
  executions = executions.unite(isl::union_map(ctx, final.str()));
  isl::union_map finalReads = isl::union_map::from_domain_and_range(
      isl::union_set(ctx, std::string("{ ") + kFinalRead + "[] }"), outputElements(scop));
  // Accesses of executions [instance -> time].
  isl::union_map toInstance = executions.domain_map();
  isl::union_map reads = toInstance.apply_range(scop.reads.unite(finalReads));
  isl::union_map writes = toInstance.apply_range(scop.writes);
  isl::union_flow flow = isl::union_access_info(reads)
                             .set_must_source(writes)
                             .set_schedule_map(executions.range_map())
                             .compute_flow();
  InstanceFlow f;
  f.sources = flow.may_dependence().apply_domain(toInstance).apply_range(toInstance);
  f.noSource = flow.may_no_source().apply_domain(toInstance);
  return f;
}

}  // namespace

std::string dataflowViolation(const poly::Scop& scop, const isl::schedule& schedule) {
  isl::union_map executions = flattenSchedule(schedule);
  isl::union_set executed = executions.domain();
  if (!scop.domain.is_subset(executed))
    return "never executes these statement instances: " + text(scop.domain.subtract(executed));
  if (!executed.is_subset(scop.domain))
    return "executes instances that are not in the program: " + text(executed.subtract(scop.domain));
  isl::union_map earlier = isl::manage(isl_union_map_lex_lt_union_map(executions.copy(), executions.copy()));
  isl::union_set repeated = earlier.intersect(executed.identity()).domain();
  isl::union_set repeatedOutputs =
      scop.writes.intersect_domain(repeated).intersect_range(outputElements(scop)).domain();
  if (!repeatedOutputs.is_empty())
    return "runs these instances more than once although they write outputs: " + text(repeatedOutputs);
  InstanceFlow expected = instanceFlow(scop, flattenSchedule(scop.initialSchedule));
  InstanceFlow actual = instanceFlow(scop, executions);
  isl::union_map wrongSource = actual.sources.subtract(expected.sources);
  if (!wrongSource.is_empty())
    return "lets reads see other writes than in program order (source -> reader, " + std::string(kFinalRead) +
           " = the outputs' final values): " + text(wrongSource);
  isl::union_map unwritten = actual.noSource.subtract(expected.noSource);
  if (!unwritten.is_empty())
    return "runs reads before the writes they need (reader -> element): " + text(unwritten);
  return "";
}

}  // namespace tessel::schedule
