#include "target/cpu/MarkUnrollJam.h"

#include <isl/schedule_node.h>

#include <algorithm>

#include "schedule/CheckSchedule.h"
#include "schedule/Marks.h"
#include "schedule/Transforms.h"
#include "schedule/TreeQueries.h"
#include "target/cpu/AccessStride.h"
#include "target/cpu/MarkVectorLoops.h"
#include "tile/BandModel.h"

namespace tessel::target::cpu {

namespace {

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
    std::string mark = schedule::markName(child);
    below.vector = below.vector || mark == schedule::kVectorMark;
    below.reduction = below.reduction || mark == schedule::kVectorReductionMark;
    Below inner = bandsBelow(child);
    below.vector = below.vector || inner.vector;
    below.reduction = below.reduction || inner.reduction;
    below.depth = std::max(below.depth, inner.depth + (child.isa<isl::schedule_node_band>() ? 1 : 0));
  }
  return below;
}

class UnrollJamMarker {
 public:
  UnrollJamMarker(const poly::Scop& scop, Remarks& remarks) : scop_(scop), remarks_(remarks) {}

  isl::schedule_node visit(isl::schedule_node node) {
    // Copies of recomputed producers (under extension nodes) keep the marks
    // their original nests got; the nests they came from may run nothing.
    bool own = schedule::queryable(node) && !schedule::nodeDomain(node).is_empty();
    // The innermost candidate wins: a band around tile loops fits the shape
    // too (a batch loop over a tiled matmul), but its iterations are whole
    // tiles, which no register holds. A band is only reordered for unrolling
    // when no band below it was marked.
    int markedBefore = marked_;
    node = schedule::rewriteChildren(node, [this](isl::schedule_node child) { return visit(child); });
    if (marked_ > markedBefore) return node;
    if (own && node.isa<isl::schedule_node_band>())
      node = withSharingMemberLast(node.as<isl::schedule_node_band>());
    if (own && node.isa<isl::schedule_node_band>() && candidate(node.as<isl::schedule_node_band>())) {
      ++marked_;
      int members = static_cast<int>(node.as<isl::schedule_node_band>().n_member());
      const std::string over = statements(node);
      remarks_.applied(over, "loop over " + over + ": may be unrolled and jammed (register tile)",
                       {{"action", "marked"}, {"mark", schedule::kUnrollJamMark}, {"member", members - 1}});
      // The last member gets a band of its own under the mark.
      if (members == 1) return schedule::insertMark(node, schedule::kUnrollJamMark);
      node = node.as<isl::schedule_node_band>().split(members - 1).child(0);
      return schedule::insertMark(node, schedule::kUnrollJamMark).parent();
    }
    return node;
  }

 private:
  // The last member is coincident and right above innermost loops: a
  // nest of up to four sequential loops around vector loops, or a vector
  // reduction loop.
  static bool candidate(const isl::schedule_node_band& band) {
    int n = static_cast<int>(band.n_member());
    if (n == 0 || !band.member_get_coincident(n - 1)) return false;
    return nestFits(bandsBelow(band));
  }

  static bool nestFits(const Below& below) {
    return (below.vector && below.depth >= 2 && below.depth <= 5) || (below.reduction && below.depth == 1);
  }

  // A permutable band whose last member carries a dependence (a window row
  // of a convolution, kh) gets, as its last member, the coincident member
  // whose unrolled iterations share the most reads: each read that does not
  // move with it is loaded once for all the rows, and vector reads (those
  // that move with the vector loop below) count 16 times a broadcast.
  isl::schedule_node_band withSharingMemberLast(const isl::schedule_node_band& band) const {
    int n = static_cast<int>(band.n_member());
    if (n < 2 || !band.permutable() || band.member_get_coincident(n - 1)) return band;
    // Tile loops keep their order: only point loops are unrolled.
    if (schedule::isTileMark(schedule::markName(band.parent()))) return band;
    // Only over independent vector loops: rows of a reduction into one
    // element (a pooling window) share nothing, and the member moved last
    // would stride through the input (2x2 max pooling ran 3x slower).
    Below below = bandsBelow(band);
    if (!below.vector || !nestFits(below)) return band;
    tile::BandModel model(scop_, band, 64);
    std::map<std::string, std::set<int>> vectorDims = vectorLoopDims(band);
    int best = -1;
    double bestCost = 0;
    for (int m = 0; m < n - 1; ++m) {
      if (!model.coincident(m)) continue;
      double cost = 0;
      bool plain = true;
      for (const auto& name : model.statements()) {
        int dim = model.statementDim(name, m);
        plain = plain && dim >= 0;
        if (dim < 0) continue;
        const std::set<int>& vector = vectorDims[name];
        scop_.statement(name).reads.foreach_map([&](isl::map read) {
          auto involves = [&](int d) { return movesWith(read, d); };
          if (!involves(dim)) return;
          bool vectorRead = std::any_of(vector.begin(), vector.end(), involves);
          cost += vectorRead ? 16 : 1;
        });
      }
      if (plain && (best < 0 || cost <= bestCost)) {
        best = m;
        bestCost = cost;
      }
    }
    if (best < 0) return band;
    std::vector<int> order;
    for (int m = 0; m < n; ++m)
      if (m != best) order.push_back(m);
    order.push_back(best);
    const std::string over = statements(band);
    remarks_.applied(over,
                     "band over " + over + ": member " + std::to_string(best) +
                         " made last, for unrolling (its rows share the most reads)",
                     {{"action", "made-last"}, {"member", best}, {"unshared_reads", bestCost}});
    return schedule::permuteMembers(scop_, band, order);
  }

  static std::string statements(const isl::schedule_node& node) {
    return schedule::statementNames(schedule::nodeDomain(node));
  }

  const poly::Scop& scop_;
  Remarks& remarks_;
  int marked_ = 0;  // marks inserted so far
};

}  // namespace

isl::schedule markUnrollJamLoops(const poly::Scop& scop, const isl::schedule& schedule, Remarks& remarks) {
  return UnrollJamMarker(scop, remarks).visit(schedule.root()).schedule();
}

isl::schedule_node markUnrollJamLoopsBelow(const poly::Scop& scop, const isl::schedule_node& node,
                                           Remarks& remarks) {
  return UnrollJamMarker(scop, remarks).visit(node);
}

}  // namespace tessel::target::cpu
