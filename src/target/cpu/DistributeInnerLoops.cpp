#include "target/cpu/DistributeInnerLoops.h"

#include <optional>

#include "schedule/Transforms.h"
#include "schedule/TreeQueries.h"

namespace tessel::target::cpu {

namespace {

class Distributor {
 public:
  Distributor(const poly::Scop& scop, Remarks& remarks) : scop_(scop), remarks_(remarks) {}

  // Innermost bands over a sequence are distributed where that is legal.
  isl::schedule_node visit(const isl::schedule_node& root) {
    return schedule::rewriteTopDown(
        root, [this](isl::schedule_node node) -> std::optional<isl::schedule_node> {
          if (!node.isa<isl::schedule_node_band>() || node.n_children() != 1 ||
              !node.child(0).isa<isl::schedule_node_sequence>() || schedule::hasBandBelow(node))
            return std::nullopt;
          return distribute(node.as<isl::schedule_node_band>()).value_or(node);
        });
  }

 private:
  // The first member that is constant for some statement of the band.
  std::optional<int> firstSplitMember(const isl::schedule_node_band& band) const {
    isl::union_set domain = schedule::nodeDomain(band);
    isl::multi_union_pw_aff partial = band.get_partial_schedule();
    for (unsigned m = 0; m < band.n_member(); ++m) {
      isl::union_map member = isl::union_map::from(isl::multi_union_pw_aff(partial.at(static_cast<int>(m))))
                                  .intersect_domain(domain);
      bool constantSomewhere = false;
      member.foreach_map([&](isl::map map) {
        if (map.range().is_singleton() && !map.domain().is_singleton()) constantSomewhere = true;
      });
      if (constantSomewhere) return static_cast<int>(m);
    }
    return std::nullopt;
  }

  // No dependence from a later child of the sequence to an earlier one
  // between instances that agree on the loops kept outside.
  bool legal(const isl::schedule_node_band& band, int keep) const {
    isl::multi_union_pw_aff outside = band.prefix_schedule_multi_union_pw_aff();
    isl::multi_union_pw_aff partial = band.get_partial_schedule();
    for (int m = 0; m < keep; ++m)
      outside = outside.flat_range_product(isl::multi_union_pw_aff(partial.at(m)));
    isl::union_map deps = scop_.deps.validity().eq_at(outside);
    isl::schedule_node sequence = band.child(0);
    int n = static_cast<int>(sequence.n_children());
    for (int later = 1; later < n; ++later)
      for (int earlier = 0; earlier < later; ++earlier) {
        isl::union_set from = schedule::nodeDomain(sequence.child(later).child(0));
        isl::union_set to = schedule::nodeDomain(sequence.child(earlier).child(0));
        if (!deps.intersect_domain(from).intersect_range(to).is_empty()) return false;
      }
    return true;
  }

  std::optional<isl::schedule_node> distribute(const isl::schedule_node_band& band) {
    std::optional<int> split = firstSplitMember(band);
    if (!split) return std::nullopt;
    const std::string statements = schedule::statementNames(schedule::nodeDomain(band));
    if (!legal(band, *split)) {
      const std::string reason = "a dependence forbids distribution";
      remarks_.missed(statements,
                      "inner loops of the band over " + statements + " kept together (" + reason + ")",
                      {{"reason", reason}, {"member", *split}});
      return std::nullopt;
    }
    remarks_.applied(
        statements,
        "inner loops of the band over " + statements + " distributed from member " + std::to_string(*split),
        {{"member", *split}});
    isl::schedule_node node = band;
    int depth = 0;
    if (*split > 0) {
      node = band.split(*split).child(0);
      depth = 1;
    }
    node = isl::manage(isl_schedule_node_band_sink(node.release()));
    for (int i = 0; i < depth; ++i) node = node.parent();
    return node;
  }

  const poly::Scop& scop_;
  Remarks& remarks_;
};

}  // namespace

isl::schedule distributeInnerLoops(const poly::Scop& scop, const isl::schedule& schedule, Remarks& remarks) {
  return Distributor(scop, remarks).visit(schedule.root()).schedule();
}

}  // namespace tessel::target::cpu
