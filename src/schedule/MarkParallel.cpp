#include "schedule/MarkParallel.h"

#include <isl/set.h>

#include <cmath>
#include <optional>
#include <sstream>
#include <string>

#include "schedule/Transforms.h"
#include "schedule/TreeQueries.h"

namespace tessel::schedule {

namespace {

// The values member `m` of `band` takes over the band's instances.
isl::union_set memberValues(const isl::schedule_node_band& band, int m) {
  isl::union_map values = isl::union_map::from(isl::multi_union_pw_aff(band.get_partial_schedule().at(m)));
  return values.intersect_domain(nodeDomain(band)).range();
}

// Does member `m` of `band` take a single value over the band's instances?
// isl generates no loop for it (a size-1 dimension, a tile as large as its
// range), so a mark on it would have no loop to apply to.
bool degenerate(const isl::schedule_node_band& band, int m) {
  isl::union_set range = memberValues(band, m);
  if (range.is_empty()) return true;
  return isl_set_is_singleton(range.as_set().get()) == isl_bool_true;
}

// Whether the loop of the band under `mark` shares out unevenly among
// `threads`: its turns (ceil(iterations / threads)) exceed an even share by
// more than a tenth. A loop whose iterations isl cannot count is not.
bool unevenAmong(const isl::schedule_node& mark, int threads) {
  if (threads <= 1) return false;
  isl::val count = isl::manage(
      isl_set_count_val(memberValues(mark.child(0).as<isl::schedule_node_band>(), 0).as_set().get()));
  if (count.is_nan() || !count.is_int() || count.is_infty()) return false;
  double iterations = static_cast<double>(count.get_num_si());
  double turns = std::ceil(iterations / threads);
  return turns * threads > 1.1 * iterations;
}

// `band` with a mark of `name` above its first member that has a loop, the
// band split around that member; the node returned is the mark. nullopt when
// that member is not coincident (or there is none).
std::optional<isl::schedule_node> markFirstLoop(const isl::schedule_node_band& band, const char* name) {
  int n = static_cast<int>(band.n_member());
  // The outermost member that has a loop; members before it have one value.
  int m = 0;
  while (m < n && degenerate(band, m)) ++m;
  if (m == n || !band.member_get_coincident(m)) return std::nullopt;
  isl::schedule_node at = m > 0 ? isl::schedule_node(band.split(m)).child(0) : isl::schedule_node(band);
  if (n - m > 1) at = at.as<isl::schedule_node_band>().split(1);
  return at.insert_mark(isl::id(band.ctx(), name));
}

// Marks the first loop of the first band on each path below `node` with
// `name` (collapsible or parallel fallback, see the header).
isl::schedule_node markFirstLoopsBelow(isl::schedule_node node, const char* name) {
  if (node.isa<isl::schedule_node_band>()) {
    if (!queryable(node)) return node;
    std::optional<isl::schedule_node> mark = markFirstLoop(node.as<isl::schedule_node_band>(), name);
    if (!mark) return node;
    // Back to the node that stands where `node` stood.
    return isl_schedule_node_get_schedule_depth(mark->get()) >
                   isl_schedule_node_get_schedule_depth(node.get())
               ? mark->parent()
               : *mark;
  }
  return rewriteChildren(node, [name](isl::schedule_node child) { return markFirstLoopsBelow(child, name); });
}

isl::schedule_node visit(isl::schedule_node node, int threads) {
  // A producer recomputed inside a tile runs in its tile's thread.
  if (node.isa<isl::schedule_node_band>() && queryable(node)) {
    auto band = node.as<isl::schedule_node_band>();
    if (std::optional<isl::schedule_node> mark = markFirstLoop(band, kParallelMark)) {
      // Loops nested inside stay sequential (one level of parallelism is
      // enough for a CPU and avoids nested OpenMP regions), but the next
      // level may join this one's iterations.
      isl::schedule_node at =
          markFirstLoopsBelow(mark->child(0).child(0), kParallelFallbackMark).parent().parent();
      if (unevenAmong(at, threads))
        at = markFirstLoopsBelow(at.child(0).child(0), kCollapsibleMark).parent().parent();
      return isl_schedule_node_get_schedule_depth(at.get()) > isl_schedule_node_get_schedule_depth(node.get())
                 ? at.parent()
                 : at;
    }
  }
  return rewriteChildren(node, [threads](isl::schedule_node child) { return visit(child, threads); });
}

}  // namespace

isl::schedule markParallelLoops(const isl::schedule& schedule, const poly::Scop& scop, int threads,
                                Remarks& remarks) {
  double work = poly::estimatedWork(scop);
  if (threads > 1 && work < kMinParallelWork) {
    std::string why = "too little work to share among threads: a parallel region costs more";
    std::ostringstream message;
    message << "kernel: no parallel loops: " << work
            << " statement instances (a contraction's updates counted an"
            << " eighth), fewer than " << kMinParallelWork << ": " << why;
    remarks.missed("kernel", message.str(),
                   {{"reason", why}, {"work", work}, {"threshold", kMinParallelWork}});
    return schedule;
  }
  return visit(schedule.root(), threads).schedule();
}

}  // namespace tessel::schedule
