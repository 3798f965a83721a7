#include "target/cpu/SerializeRacyTiles.h"

#include <isl/schedule_node.h>

#include <set>
#include <vector>

#include "schedule/Marks.h"
#include "schedule/TreeQueries.h"
#include "target/cpu/MarkUnrollJam.h"

namespace tessel::target::cpu {

namespace {

std::string tensorOf(const isl::set& elements) {
  return isl::manage(isl_set_get_tuple_id(elements.get())).name();
}

class RaceFinder {
 public:
  RaceFinder(const poly::Scop& scop, const PromotionPlan& plan) : scop_(scop), plan_(plan) {}

  // Paths (child positions from the root) of extension nodes whose tiles
  // race, with the tensor that races.
  std::vector<std::pair<std::vector<int>, std::string>> races;

  void visit(const isl::schedule_node& node, std::vector<int> path) {
    if (node.isa<isl::schedule_node_extension>()) {
      std::string tensor = racingTensor(node.as<isl::schedule_node_extension>());
      if (!tensor.empty()) races.emplace_back(path, tensor);
    }
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i) {
      std::vector<int> child = path;
      child.push_back(i);
      visit(node.child(i), child);
    }
  }

 private:
  // Tensors contracted at promotion marks in the subtree of `node`.
  std::set<std::string> contractedBelow(const isl::schedule_node& node) const {
    std::set<std::string> out;
    node.foreach_descendant_top_down([&](const isl::schedule_node& n) {
      if (auto site = plan_.siteOfMark(schedule::markName(n)))
        for (const auto& t : plan_.sites[*site].tensors)
          if (t.contracted) out.insert(t.tensor);
      return true;
    });
    return out;
  }

  std::string racingTensor(const isl::schedule_node_extension& extension) const {
    isl::union_set recomputed = extension.extension().range();
    isl::union_set others = schedule::executedBelow(extension).subtract(recomputed);
    std::set<std::string> private_ = contractedBelow(extension);
    std::string racing;
    // A recomputed read of what the consumer writes in another tile: in
    // order it saw the value before that tile ran.
    isl::union_set overwritten = scop_.reads.intersect_domain(recomputed)
                                     .range()
                                     .intersect(scop_.writes.intersect_domain(others).range());
    overwritten.foreach_set([&](isl::set elements) {
      if (racing.empty()) racing = tensorOf(elements);
    });
    if (!racing.empty()) return racing;
    scop_.writes.intersect_domain(recomputed).range().foreach_set([&](isl::set elements) {
      std::string tensor = tensorOf(elements);
      if (!racing.empty() || private_.count(tensor)) return;
      isl::union_map writes =
          scop_.writes.intersect_domain(recomputed).intersect_range(isl::union_set(elements));
      bool otherWriters =
          !scop_.writes.intersect_domain(others).intersect_range(isl::union_set(elements)).is_empty();
      // Elements each written from one iteration of the loops around (a
      // nest that runs in the tiles, Alg. 4's identical case, its reduction
      // included) race with no other tile: basteln puts the writers of what
      // a tile reads into that tile (its slices are closed under their
      // dependences).
      bool oneIterationEach = extension.extension().apply_range(writes).reverse().is_single_valued();
      if ((!writes.is_injective() && !oneIterationEach) || otherWriters) racing = tensor;
    });
    return racing;
  }

  const poly::Scop& scop_;
  const PromotionPlan& plan_;
};

}  // namespace

isl::schedule serializeRacyTiles(const poly::Scop& scop, const isl::schedule& schedule,
                                 const PromotionPlan& plan, Remarks& remarks) {
  RaceFinder finder(scop, plan);
  finder.visit(schedule.root(), {});
  isl::schedule result = schedule;
  for (const auto& [path, tensor] : finder.races) {
    isl::schedule_node node = result.root();
    for (int i : path) {
      if (node.isa<isl::schedule_node_band>()) {
        auto band = node.as<isl::schedule_node_band>();
        for (int m = 0; m < static_cast<int>(band.n_member()); ++m)
          band = band.member_set_coincident(m, false);
        node = band;
      }
      node = node.child(i);
    }
    const std::string recomputed =
        schedule::statementNames(node.as<isl::schedule_node_extension>().extension().range());
    remarks.applied(recomputed,
                    "recomputation: the loops around the recomputed " + recomputed + " run in order (" +
                        tensor +
                        " is a shared array that tiles would write and read in a different order at once)",
                    {{"tensor", tensor}});
    result = node.schedule();
  }
  if (finder.races.empty()) return result;
  // Iterations that now run in order are not jammed either (mark-unroll-jam
  // marks only loops whose iterations are independent).
  return result.root()
      .map_descendant_bottom_up([](isl::schedule_node node) {
        if (schedule::markName(node) != schedule::kUnrollJamMark ||
            !node.child(0).isa<isl::schedule_node_band>())
          return node;
        auto band = node.child(0).as<isl::schedule_node_band>();
        if (band.member_get_coincident(static_cast<int>(band.n_member()) - 1)) return node;
        return isl::manage(isl_schedule_node_delete(node.release()));
      })
      .schedule();
}

}  // namespace tessel::target::cpu
