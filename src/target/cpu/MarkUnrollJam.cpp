#include "target/cpu/MarkUnrollJam.h"

#include <isl/schedule_node.h>

#include <algorithm>

#include "schedule/TreeQueries.h"
#include "target/cpu/MarkVectorLoops.h"

namespace tessel::target::cpu {

namespace {

std::string markName(const isl::schedule_node& node) {
  if (!node.isa<isl::schedule_node_mark>()) return "";
  return isl::manage(isl_schedule_node_mark_get_id(node.get())).name();
}

// What lies below a band: the bands on the deepest path, and the vector marks.
struct Below {
  int depth = 0;
  bool vector = false;     // a "vector" mark
  bool reduction = false;  // a "vector_reduction" mark
};

Below bandsBelow(const isl::schedule_node& node) {
  Below below;
  for (int i = 0; i < static_cast<int>(node.n_children()); ++i) {
    isl::schedule_node child = node.child(i);
    std::string mark = markName(child);
    below.vector = below.vector || mark == kVectorMark;
    below.reduction = below.reduction || mark == kVectorReductionMark;
    Below inner = bandsBelow(child);
    below.vector = below.vector || inner.vector;
    below.reduction = below.reduction || inner.reduction;
    below.depth = std::max(below.depth, inner.depth + (child.isa<isl::schedule_node_band>() ? 1 : 0));
  }
  return below;
}

class UnrollJamMarker {
 public:
  explicit UnrollJamMarker(std::string& explain) : explain_(explain) {}

  isl::schedule_node visit(isl::schedule_node node) {
    if (node.isa<isl::schedule_node_band>() && candidate(node.as<isl::schedule_node_band>())) {
      explain_ += "loop over " + statements(node) + ": may be unrolled and jammed (register tile)\n";
      // The last member gets a band of its own under the mark.
      int n = static_cast<int>(node.as<isl::schedule_node_band>().n_member());
      if (n == 1) return node.insert_mark(schedule::markId(node.ctx(), kUnrollJamMark));
      node = node.as<isl::schedule_node_band>().split(n - 1).child(0);
      return node.insert_mark(schedule::markId(node.ctx(), kUnrollJamMark)).parent();
    }
    int n = static_cast<int>(node.n_children());
    for (int i = 0; i < n; ++i) node = visit(node.child(i)).parent();
    return node;
  }

 private:
  // The last member is coincident and right above innermost loops: a
  // nest of up to four sequential loops around vector loops, or a vector
  // reduction loop.
  static bool candidate(const isl::schedule_node_band& band) {
    int n = static_cast<int>(band.n_member());
    if (n == 0 || !band.member_get_coincident(n - 1)) return false;
    Below below = bandsBelow(band);
    return (below.vector && below.depth >= 2 && below.depth <= 5) || (below.reduction && below.depth == 1);
  }

  static std::string statements(const isl::schedule_node& node) {
    std::string s;
    schedule::nodeDomain(node).foreach_set([&](isl::set set) {
      s += (s.empty() ? "" : " ") + isl::manage(isl_set_get_tuple_id(set.get())).name();
    });
    return s;
  }

  std::string& explain_;
};

}  // namespace

isl::schedule markUnrollJamLoops(const isl::schedule& schedule, std::string& explain) {
  return UnrollJamMarker(explain).visit(schedule.root()).schedule();
}

}  // namespace tessel::target::cpu
