#include "fuse/FuseOuterLoops.h"

#include <isl/schedule_node.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "schedule/CheckSchedule.h"
#include "schedule/Transforms.h"
#include "schedule/TreeQueries.h"
#include "tessel/error.h"
#include "tile/BandModel.h"

namespace tessel::fuse {

namespace {

// One child of a sequence that can take part in a group: its instances and
// the band member chosen as its outer loop.
struct Nest {
  int child = 0;
  isl::union_set domain;
  int member = 0;
  isl::union_pw_aff outer;
};

void collectReads(const te::Expr& e, std::vector<const te::ExprNode*>& out) {
  if (e->kind == te::ExprKind::Access) out.push_back(e.get());
  for (const auto& o : e->operands) collectReads(o, out);
}

std::vector<const te::ExprNode*> readsIn(const te::Expr& e) {
  std::vector<const te::ExprNode*> out;
  collectReads(e, out);
  return out;
}

// Whether every pair of outer-loop values (source iteration -> target
// iteration, from instance pairs) is one iteration.
bool sameIteration(const isl::union_map& outerPairs) {
  isl::union_set distances = outerPairs.deltas();
  return distances.is_subset(isl::union_set(outerPairs.ctx(), "{ [0] }"));
}

class OuterFusion {
 public:
  OuterFusion(const poly::Scop& scop, Remarks& remarks) : scop_(scop), remarks_(remarks) {}

  // Inner sequences first, so that a nest fused there offers its new outer
  // band here; the sequences a fusion creates are visited in turn (each
  // fusion removes band members, so this ends).
  isl::schedule_node visit(isl::schedule_node node) {
    node = visitChildren(node);
    if (!node.isa<isl::schedule_node_sequence>() && !node.isa<isl::schedule_node_set>()) return node;
    if (std::optional<isl::schedule_node> fused = fuse(node)) return visitChildren(*fused);
    return node;
  }

 private:
  isl::schedule_node visitChildren(const isl::schedule_node& node) {
    return schedule::rewriteChildren(node, [this](isl::schedule_node child) { return visit(child); });
  }

  // The band right under the sequence's child `i`, if there is one.
  static std::optional<isl::schedule_node_band> bandOf(const isl::schedule_node& sequence, int i) {
    isl::schedule_node filter = sequence.child(i);
    if (filter.n_children() != 1 || !filter.child(0).isa<isl::schedule_node_band>()) return std::nullopt;
    return filter.child(0).as<isl::schedule_node_band>();
  }

  // The sequence's child `i` as a nest whose outer loop is band member
  // `member`, if that member is a parallel loop of a band right under the
  // filter and taking it out keeps the rest of the band worth tiling.
  std::optional<Nest> nest(const isl::schedule_node& sequence, int i, int member) const {
    std::optional<isl::schedule_node_band> band = bandOf(sequence, i);
    if (!band || member >= static_cast<int>(band->n_member()) || !band->member_get_coincident(member))
      return std::nullopt;
    // Any member of a permutable band can move outermost, unless nodes below
    // are anchored to the band's order (never so right after scheduling).
    if (member > 0 &&
        (!band->permutable() || isl_schedule_node_is_subtree_anchored(band->get()) == isl_bool_true))
      return std::nullopt;
    if (band->n_member() >= 3 && someReadIgnores(*band, member)) return std::nullopt;
    isl::union_set domain = schedule::nodeDomain(*band);
    return Nest{i, domain, member, band->get_partial_schedule().at(member).intersect_domain(domain)};
  }

  // A small vector (a bias or a per-channel scale) stays cached whatever the
  // loop order, so its reuse needs no tiling.
  bool staysCached(const std::string& tensor) const {
    constexpr int64_t kSmallVectorBytes = 16 * 1024;
    const te::TensorDecl* t = scop_.program->findTensor(tensor);
    return t && t->shapeKnown && t->shape.size() <= 1 &&
           t->numElements() * te::dtypeBytes(t->dtype) <= kSmallVectorBytes;
  }

  // Whether some read of the band's statements stays the same along
  // `member` (B(k, j) along i in a matmul) and is too large to stay cached:
  // that reuse needs the member tiled together with the others, which
  // hoisting it out of the band prevents.
  bool someReadIgnores(const isl::schedule_node_band& band, int member) const {
    tile::BandModel model(scop_, band, 64);
    for (const auto& name : model.statements()) {
      int dim = model.statementDim(name, member);
      if (dim < 0) return true;  // not one loop of the statement: assume the worst
      const poly::Statement& statement = scop_.statement(name);
      if (statement.kind == poly::StatementKind::Init) continue;
      const std::string& var = statement.dims[static_cast<size_t>(dim)];
      for (const te::ExprNode* read : readsIn(scop_.program->stages[statement.stage].rhs)) {
        bool moves = false;
        for (const auto& index : read->operands) {
          auto affine = te::toAffine(index);
          if (!affine) {
            moves = true;  // an indirect index: it may move
            continue;
          }
          auto c = affine->coeffs.find(var);
          moves = moves || (c != affine->coeffs.end() && c->second != 0);
        }
        if (!moves && !staysCached(read->name)) return true;
      }
    }
    return false;
  }

  static isl::union_map outerMap(const std::vector<Nest>& group) {
    isl::union_map m = isl::union_map::empty(group.front().domain.ctx());
    for (const auto& n : group) m = m.unite(isl::union_map::from(isl::multi_union_pw_aff(n.outer)));
    return m;
  }

  // Whether `next` may run in the group's outer loop, each of its iterations
  // after the group's iteration of the same value.
  bool joins(const std::vector<Nest>& group, const Nest& next) const {
    isl::union_set groupDomain = isl::union_set::empty(next.domain.ctx());
    for (const auto& n : group) groupDomain = groupDomain.unite(n.domain);
    isl::union_map groupOuter = outerMap(group);
    isl::union_map nextOuter = outerMap({next});
    // Dependences carried by loops around the sequence are not its concern.
    isl::union_map validity = scop_.deps.validity();
    isl::multi_union_pw_aff around = sequence_.prefix_schedule_multi_union_pw_aff();
    if (around.size() > 0) validity = validity.eq_at(around);
    // The sequence ran the group first; a dependence the other way would be
    // broken already, so only guard against it.
    if (!validity.intersect_domain(next.domain).intersect_range(groupDomain).is_empty()) return false;
    isl::union_map forward = validity.intersect_domain(groupDomain).intersect_range(next.domain);
    if (!forward.is_empty()) return sameIteration(forward.apply_domain(groupOuter).apply_range(nextOuter));
    // No dependence: fuse only for reuse of the same elements in the same iteration.
    isl::union_map shared = scop_.reads.intersect_domain(groupDomain)
                                .apply_range(scop_.reads.intersect_domain(next.domain).reverse())
                                .apply_domain(groupOuter)
                                .apply_range(nextOuter);
    return !shared.deltas().intersect(isl::union_set(next.domain.ctx(), "{ [0] }")).is_empty();
  }

  std::vector<std::vector<Nest>> groups(const isl::schedule_node& sequence) {
    sequence_ = sequence;
    std::vector<std::vector<Nest>> result;
    int n = static_cast<int>(sequence.n_children());
    for (int i = 0; i < n;) {
      std::optional<Nest> first = nest(sequence, i, 0);
      if (!first) {
        ++i;
        continue;
      }
      std::vector<Nest> group{*first};
      for (++i; i < n; ++i) {
        std::optional<Nest> joining;
        std::optional<isl::schedule_node_band> band = bandOf(sequence, i);
        int members = band ? static_cast<int>(band->n_member()) : 0;
        for (int m = 0; m < members && !joining; ++m)
          if (auto candidate = nest(sequence, i, m); candidate && joins(group, *candidate))
            joining = candidate;
        if (!joining) break;
        group.push_back(*joining);
      }
      if (group.size() > 1) result.push_back(std::move(group));
    }
    return result;
  }

  // Removes the chosen member from the nest's band (the band disappears when
  // it had only that member); returns the sequence node again.
  isl::schedule_node takeOuterMember(isl::schedule_node sequence, const Nest& n) const {
    auto band = sequence.child(n.child).child(0).as<isl::schedule_node_band>();
    int members = static_cast<int>(band.n_member());
    if (n.member != 0) {
      std::vector<int> order{n.member};
      for (int m = 0; m < members; ++m)
        if (m != n.member) order.push_back(m);
      band = schedule::permuteMembers(scop_, band, order);
    }
    isl::schedule_node outer = members > 1 ? isl::schedule_node(band.split(1)) : isl::schedule_node(band);
    isl::schedule_node rest = isl::manage(isl_schedule_node_delete(outer.release()));
    return rest.parent().parent();
  }

  isl::schedule_node insertOuterBand(isl::schedule_node node, const std::vector<Nest>& group) const {
    isl::union_pw_aff outer = group.front().outer;
    for (size_t k = 1; k < group.size(); ++k) outer = outer.union_add(group[k].outer);
    auto band = node.insert_partial_schedule(isl::multi_union_pw_aff(outer))
                    .as<isl::schedule_node_band>()
                    .set_permutable(1);
    return schedule::recomputeCoincidence(scop_, band);
  }

  // The fused tree at the position of `sequence` (a sequence or set node),
  // or nullopt when no group formed.
  std::optional<isl::schedule_node> fuse(isl::schedule_node sequence) {
    std::vector<std::vector<Nest>> found = groups(sequence);
    if (found.empty()) return std::nullopt;
    bool isSet = sequence.isa<isl::schedule_node_set>();
    for (const auto& group : found)
      for (const auto& n : group) sequence = takeOuterMember(sequence, n);
    int n = static_cast<int>(sequence.n_children());
    isl::schedule_node result;
    if (found.size() == 1 && static_cast<int>(found.front().size()) == n) {
      result = insertOuterBand(sequence, found.front());
    } else {
      // One filter per group (and per child left alone); isl nests each
      // group's children in a sequence (or set) of their own.
      isl::union_set_list filters(sequence.ctx(), n);
      std::vector<const std::vector<Nest>*> groupAt;
      for (int i = 0; i < n;) {
        const std::vector<Nest>* group = nullptr;
        for (const auto& g : found)
          if (g.front().child == i) group = &g;
        isl::union_set filter = sequence.child(i).as<isl::schedule_node_filter>().get_filter();
        int next = i + 1;
        if (group) {
          for (const auto& member : *group)
            filter = filter.unite(sequence.child(member.child).as<isl::schedule_node_filter>().get_filter());
          next = group->back().child + 1;
        }
        filters = filters.add(filter);
        groupAt.push_back(group);
        i = next;
      }
      result = isSet ? sequence.insert_set(filters) : sequence.insert_sequence(filters);
      for (int g = 0; g < static_cast<int>(groupAt.size()); ++g)
        if (groupAt[g]) result = insertOuterBand(result.child(g).child(0), *groupAt[g]).parent().parent();
    }
    if (!schedule::scheduleViolation(scop_, result.schedule()).empty())
      return std::nullopt;  // keep the scheduler's tree
    explainGroups(found);
    return result;
  }

  void explainGroups(const std::vector<std::vector<Nest>>& found) {
    for (const auto& group : found) {
      std::ostringstream os;
      os << "fuse-outer: one parallel loop over";
      std::string statements, nests, members;
      for (size_t k = 0; k < group.size(); ++k) {
        std::string names = schedule::statementNames(group[k].domain);
        os << (k ? " ;" : "");
        os << " " << names;
        if (group[k].member != 0) os << " (band member " << group[k].member << ")";
        statements += (k ? " " : "") + names;
        nests += (k ? " ; " : "") + names;
        members += (k ? " " : "") + std::to_string(group[k].member);
      }
      remarks_.applied(statements, os.str(),
                       {{"nests", nests}, {"nest_count", group.size()}, {"band_members", members}});
    }
  }

  const poly::Scop& scop_;
  Remarks& remarks_;
  isl::schedule_node sequence_;  // the one `groups` works on
};

}  // namespace

isl::schedule fuseOuterLoops(const poly::Scop& scop, const isl::schedule& schedule, Remarks& remarks) {
  return OuterFusion(scop, remarks).visit(schedule.root()).schedule();
}

}  // namespace tessel::fuse
