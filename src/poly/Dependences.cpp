#include "poly/Dependences.h"

namespace tessel::poly {

namespace {
isl::union_map dependence(const isl::union_map& sink, const isl::union_map& mustSource,
                          const isl::union_map& maySource, const isl::schedule& schedule) {
  isl::union_access_info info(sink);
  info = info.set_must_source(mustSource).set_may_source(maySource).set_schedule(schedule);
  return info.compute_flow().may_dependence();
}
}  // namespace

Dependences computeDependences(const Scop& scop) {
  isl::union_map none = isl::union_map::empty(scop.domain.ctx());
  Dependences d;
  // Writes kill earlier writes (must sources), so flow dependences are exact.
  d.flow = dependence(scop.reads, scop.writes, none, scop.initialSchedule);
  d.anti = dependence(scop.writes, none, scop.reads, scop.initialSchedule);
  d.output = dependence(scop.writes, none, scop.writes, scop.initialSchedule);
  return d;
}

}  // namespace tessel::poly
