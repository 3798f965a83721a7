#include "schedule/MarkParallel.h"

namespace tessel::schedule {

namespace {

isl::schedule_node visit(isl::schedule_node node) {
  if (node.isa<isl::schedule_node_band>()) {
    auto band = node.as<isl::schedule_node_band>();
    if (band.n_member() > 0 && band.member_get_coincident(0)) {
      if (band.n_member() > 1) node = band.split(1);
      // Loops nested inside stay sequential: one level of parallelism is
      // enough for a CPU and avoids nested OpenMP regions.
      return node.insert_mark(kParallelMark);
    }
  }
  int n = static_cast<int>(node.n_children());
  for (int i = 0; i < n; ++i) node = visit(node.child(i)).parent();
  return node;
}

}  // namespace

isl::schedule markParallelLoops(const isl::schedule& schedule) { return visit(schedule.root()).schedule(); }

}  // namespace tessel::schedule
