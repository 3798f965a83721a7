#include "schedule/MarkParallel.h"

#include <isl/set.h>

#include "schedule/TreeQueries.h"

namespace tessel::schedule {

namespace {

// Does member `m` of `band` take a single value over the band's instances?
// isl generates no loop for it (a size-1 dimension, a tile as large as its
// range), so a mark on it would have no loop to apply to.
bool degenerate(const isl::schedule_node_band& band, int m) {
  isl::union_map values = isl::union_map::from(isl::multi_union_pw_aff(band.get_partial_schedule().at(m)));
  isl::union_set range = values.intersect_domain(nodeDomain(band)).range();
  if (range.is_empty()) return true;
  return isl_set_is_singleton(range.as_set().get()) == isl_bool_true;
}

isl::schedule_node visit(isl::schedule_node node) {
  // A producer recomputed inside a tile runs in its tile's thread.
  if (node.isa<isl::schedule_node_band>() && queryable(node)) {
    auto band = node.as<isl::schedule_node_band>();
    int n = static_cast<int>(band.n_member());
    // The outermost member that has a loop; members before it have one value.
    int m = 0;
    while (m < n && degenerate(band, m)) ++m;
    if (m < n && band.member_get_coincident(m)) {
      isl::schedule_node at = m > 0 ? isl::schedule_node(band.split(m)).child(0) : isl::schedule_node(band);
      if (n - m > 1) at = at.as<isl::schedule_node_band>().split(1);
      // Loops nested inside stay sequential: one level of parallelism is
      // enough for a CPU and avoids nested OpenMP regions.
      at = at.insert_mark(kParallelMark);
      return m > 0 ? at.parent() : at;
    }
  }
  int n = static_cast<int>(node.n_children());
  for (int i = 0; i < n; ++i) node = visit(node.child(i)).parent();
  return node;
}

}  // namespace

isl::schedule markParallelLoops(const isl::schedule& schedule) { return visit(schedule.root()).schedule(); }

}  // namespace tessel::schedule
