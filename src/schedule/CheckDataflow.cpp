#include "schedule/CheckDataflow.h"

#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/space.h>
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

// The universe of each tensor that `accesses` (instance -> element) touches.
isl::union_set tensorsOf(const isl::union_map& accesses) { return accesses.range().universe(); }

// The accesses the check follows: reads of the instances whose order may
// have changed (`focus`), every read of the tensors those instances write,
// the final values of the outputs they write, and every write to the tensors
// those reads see.
struct Accesses {
  isl::union_map reads;       // instance -> element
  isl::union_map writes;      // instance -> element
  isl::union_set finalReads;  // output elements whose final values count
};

Accesses followed(const poly::Scop& scop, const isl::union_set& focus) {
  isl::union_set written = tensorsOf(scop.writes.intersect_domain(focus));
  isl::union_set outputs = scop.outputElements();
  Accesses a;
  // Inputs have no writer: their reads always see the caller's values.
  isl::union_set computed = tensorsOf(scop.writes);
  a.reads =
      scop.reads.intersect_domain(focus).intersect_range(computed).unite(scop.reads.intersect_range(written));
  a.finalReads = scop.writes.range().intersect(written).intersect(outputs);
  a.writes = scop.writes.intersect_range(tensorsOf(a.reads).unite(a.finalReads.universe()));
  return a;
}

// Where each followed read gets its value, stated per instance: source
// instance -> reading instance, and reading instance -> elements no write
// reached. A final_read instance after everything reads the final values.
struct InstanceFlow {
  isl::union_map sources;
  isl::union_map noSource;
};

isl::union_map finalReadAccesses(isl::ctx ctx, const Accesses& a) {
  return isl::union_map::from_domain_and_range(isl::union_set(ctx, std::string("{ ") + kFinalRead + "[] }"),
                                               a.finalReads);
}

// In program order: the initial schedule, then the final read.
InstanceFlow programFlow(const poly::Scop& scop, const Accesses& a) {
  isl::ctx ctx = scop.domain.ctx();
  isl::schedule last =
      isl::schedule::from_domain(isl::union_set(ctx, std::string("{ ") + kFinalRead + "[] }"));
  isl::schedule order = isl::manage(isl_schedule_sequence(scop.initialSchedule.copy(), last.release()));
  isl::union_flow flow = isl::union_access_info(a.reads.unite(finalReadAccesses(ctx, a)))
                             .set_must_source(a.writes)
                             .set_schedule(order)
                             .compute_flow();
  return {flow.may_dependence(), flow.may_no_source()};
}

// In the tree's order. An execution is named by its statement and time
// (S_at[t]); that needs each statement's time to tell its instances apart,
// which bands of full rank do. Otherwise executions are [instance -> time]
// pairs, which isl's dataflow handles much more slowly.
InstanceFlow treeFlow(const poly::Scop& scop, const Accesses& a, isl::union_map executions) {
  isl::ctx ctx = scop.domain.ctx();
  size_t n = timeLength(executions);
  std::ostringstream t, final;
  for (size_t i = 0; i < n; ++i) t << (i ? ", " : "") << "t" << i;
  // Real executions get a leading 0, the final read a leading 1.
  executions = executions.apply_range(
      isl::union_map(ctx, "{ [" + t.str() + "] -> [0" + (n ? ", " : "") + t.str() + "] }"));
  final << "{ " << kFinalRead << "[] -> [1";
  for (size_t i = 0; i < n; ++i) final << ", 0";
  final << "] }";
  executions = executions.unite(isl::union_map(ctx, final.str())).coalesce();
  // execution -> instance, and execution -> time.
  isl::union_map toInstance, toTime;
  if (executions.is_injective()) {
    toInstance = isl::union_map::empty(ctx);
    toTime = isl::union_map::empty(ctx);
    executions.foreach_map([&](isl::map m) {
      std::string name = isl::manage(isl_map_get_tuple_id(m.get(), isl_dim_in)).name() + "_at";
      isl::map named = isl::manage(isl_map_set_tuple_name(m.copy(), isl_dim_out, name.c_str()));
      toInstance = toInstance.unite(isl::union_map(named).reverse());
      isl::map time = isl::manage(isl_map_reset_tuple_id(
          isl_map_identity(isl_space_map_from_set(isl_set_get_space(named.range().get()))), isl_dim_out));
      toTime = toTime.unite(isl::union_map(time.intersect_domain(named.range())));
    });
  } else {
    toInstance = executions.domain_map();
    toTime = executions.range_map();
  }
  isl::union_flow flow =
      isl::union_access_info(toInstance.apply_range(a.reads.unite(finalReadAccesses(ctx, a))))
          .set_must_source(toInstance.apply_range(a.writes))
          .set_schedule_map(toTime)
          .compute_flow();
  InstanceFlow f;
  f.sources = flow.may_dependence().apply_domain(toInstance).apply_range(toInstance);
  f.noSource = flow.may_no_source().apply_domain(toInstance);
  return f;
}

}  // namespace

std::string dataflowViolation(const poly::Scop& scop, const isl::schedule& schedule,
                              const std::optional<isl::union_set>& focus) {
  isl::union_map executions = flattenSchedule(schedule);
  isl::union_set executed = executions.domain();
  // Instances whose values never reach an executed instance or an output
  // need not run (a corner of an intermediate that no tile reads).
  isl::union_set skipped = scop.domain.subtract(executed);
  isl::union_set needed = scop.deps.flow.intersect_domain(skipped).subtract_range(skipped).domain().unite(
      scop.writes.intersect_domain(skipped).intersect_range(scop.outputElements()).domain());
  if (!needed.is_empty()) return "never executes these statement instances: " + text(needed);
  if (!executed.is_subset(scop.domain))
    return "executes instances that are not in the program: " + text(executed.subtract(scop.domain));
  isl::union_map earlier = isl::manage(isl_union_map_lex_lt_union_map(executions.copy(), executions.copy()));
  isl::union_set repeated = earlier.intersect(executed.identity()).domain();
  Accesses all = followed(scop, scop.domain);
  isl::union_set repeatedOutputs =
      scop.writes.intersect_domain(repeated).intersect_range(all.finalReads).domain();
  if (!repeatedOutputs.is_empty())
    return "runs these instances more than once although they write outputs: " + text(repeatedOutputs);
  Accesses a = focus ? followed(scop, *focus) : all;
  InstanceFlow expected = programFlow(scop, a);
  InstanceFlow actual = treeFlow(scop, a, executions);
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
