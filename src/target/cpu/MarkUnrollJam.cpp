#include "target/cpu/MarkUnrollJam.h"

#include <isl/schedule_node.h>

#include <algorithm>

#include "schedule/TreeQueries.h"
#include "target/cpu/MarkVectorLoops.h"

namespace tessel::target::cpu {

namespace {

bool isVectorMark(const isl::schedule_node& node) {
  if (!node.isa<isl::schedule_node_mark>()) return false;
  std::string name = isl::manage(isl_schedule_node_mark_get_id(node.get())).name();
  return name == kVectorMark || name == kVectorReductionMark;
}

// Bands on the deepest path below `node` (`node` excluded); sets `vector`
// when a vector mark is among them.
int bandDepthBelow(const isl::schedule_node& node, bool& vector) {
  int depth = 0;
  for (int i = 0; i < static_cast<int>(node.n_children()); ++i) {
    isl::schedule_node child = node.child(i);
    if (isVectorMark(child)) vector = true;
    int d = bandDepthBelow(child, vector) + (child.isa<isl::schedule_node_band>() ? 1 : 0);
    depth = std::max(depth, d);
  }
  return depth;
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
  // The last member is coincident and right above innermost loops (a
  // reduction loop nest of up to three loops, then the vector loop).
  static bool candidate(const isl::schedule_node_band& band) {
    int n = static_cast<int>(band.n_member());
    if (n == 0 || !band.member_get_coincident(n - 1)) return false;
    bool vector = false;
    int depth = bandDepthBelow(band, vector);
    return vector && depth >= 2 && depth <= 5;
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
