#include "fuse/GroupQuasiIdentity.h"

#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "schedule/CheckSchedule.h"
#include "schedule/TreeQueries.h"
#include "tessel/error.h"

namespace tessel::fuse {

namespace {

// Whether coordinate `d` of `set` takes a single value for each value of
// the parameters (a constant, possibly parametric: K - 1).
bool isFixed(const isl::set& set, unsigned d) {
  unsigned n = set.tuple_dim();
  isl_set* only = isl_set_project_out(set.copy(), isl_dim_set, d + 1, n - d - 1);
  only = isl_set_project_out(only, isl_dim_set, 0, d);
  isl::set values = isl::manage(only);
  return values.lexmin().is_equal(values.lexmax());
}

// The relation pairs instances whose first `k` coordinates are equal.
bool equalOnFirst(const isl::map& relation, unsigned k) {
  isl_map* equal = isl_map_universe(isl_map_get_space(relation.get()));
  for (unsigned i = 0; i < k; ++i) equal = isl_map_equate(equal, isl_dim_in, i, isl_dim_out, i);
  return relation.is_subset(isl::manage(equal));
}

bool allMaps(const isl::union_map& relation, const std::function<bool(const isl::map&)>& test) {
  bool all = true;
  relation.foreach_map([&](isl::map m) { all = all && test(m); });
  return all;
}

// The fewest coordinates among the statements of `instances`.
unsigned fewestCoordinates(const isl::union_set& instances) {
  unsigned fewest = ~0u;
  instances.foreach_set([&](isl::set s) { fewest = std::min(fewest, s.tuple_dim()); });
  return fewest == ~0u ? 0 : fewest;
}

// Statement instance -> its coordinates first .. first + count - 1 (an
// anonymous tuple), for every statement of `instances`.
isl::union_map coordinatesOf(const isl::union_set& instances, unsigned first, unsigned count) {
  isl::union_map result = isl::union_map::empty(instances.ctx());
  instances.foreach_set([&](isl::set s) {
    unsigned n = s.tuple_dim();
    isl_map* map = isl_map_identity(isl_space_map_from_set(isl_set_get_space(s.get())));
    map = isl_map_project_out(map, isl_dim_out, first + count, n - first - count);
    map = isl_map_project_out(map, isl_dim_out, 0, first);
    map = isl_map_reset_tuple_id(map, isl_dim_out);
    result = result.unite(isl::manage(map).intersect_domain(s));
  });
  return result;
}

// How a group's band was made, for its remark.
struct GroupBand {
  std::string how;           // the remark's words: "isl's band over the group, 3 loops"
  std::string construction;  // "scheduler" or "shared-coordinates"
  std::string scheduler;     // the scheduler's name, for "scheduler"
  int loops = 0;             // the band's members
};

// One child of the top sequence.
struct Nest {
  isl::union_set filter;
  unsigned coordinates = 0;    // the fewest any of its statements has
  bool outerParallel = false;  // its own outer loop is parallel
};

class QuasiIdentityGrouping {
 public:
  QuasiIdentityGrouping(const poly::Scop& scop, const schedule::Scheduler& scheduler,
                        const schedule::SchedulerOptions& groupScheduling, Remarks& remarks)
      : scop_(scop), scheduler_(scheduler), groupScheduling_(groupScheduling), remarks_(remarks) {}

  isl::schedule run(const isl::schedule& schedule) {
    isl::schedule_node sequence = schedule.root().child(0);
    if (!sequence.isa<isl::schedule_node_sequence>()) return schedule;
    int n = static_cast<int>(sequence.n_children());
    for (int i = 0; i < n; ++i) nests_.push_back(nestAt(sequence, i));
    std::vector<std::vector<int>> groups = formGroups();
    if (static_cast<int>(groups.size()) == n) {
      say(reasons_);
      return schedule;
    }

    isl::union_set_list filters(schedule.ctx(), static_cast<int>(groups.size()));
    for (const auto& group : groups) filters = filters.add(domainOf(group));
    isl::schedule_node top = isl::schedule::from_domain(schedule.get_domain()).root().child(0);
    // One group: its tree is the whole tree (no sequence of one child).
    bool whole = groups.size() == 1;
    if (!whole) top = top.insert_sequence(filters);
    auto keepEveryMark = [](const std::string&) { return true; };
    std::vector<Remark> lines;  // (said only when the grouped tree stands)
    std::string grouped;        // the groups of several nests, "S3 S2 S1 ; S4 S5"
    for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
      const std::vector<int>& group = groups[static_cast<size_t>(g)];
      isl::schedule_node leaf = whole ? top : top.child(g).child(0);
      if (group.size() == 1) {
        top = schedule::copySubtree(leaf, sequence.child(group.front()).child(0), keepEveryMark)
                  .parent()
                  .parent();
        continue;
      }
      GroupBand band;
      isl::schedule tree = groupTree(sequence, group, band);
      top = schedule::copySubtree(leaf, tree.root().child(0), keepEveryMark);
      if (!whole) top = top.parent().parent();
      std::string names = schedule::statementNames(domainOf(group));
      grouped += (grouped.empty() ? "" : " ; ") + names;
      Remark line;
      line.kind = RemarkKind::Applied;
      line.subject = names;
      line.message = "basteln-group: one band over " + names + " (" + band.how + ")";
      line.values = {
          {"construction", band.construction}, {"loops", band.loops}, {"nest_count", group.size()}};
      if (!band.scheduler.empty()) line.values.emplace_back("scheduler", band.scheduler);
      lines.push_back(std::move(line));
    }
    isl::schedule result = top.schedule();
    if (std::string violation = schedule::scheduleViolation(scop_, result); !violation.empty()) {
      say(reasons_);
      remarks_.missed(
          "",
          "basteln-group: the grouped tree is not valid (the schedule " + violation +
              "); the nests stay apart",
          {{"reason", "the grouped tree is not valid"}, {"violation", violation}, {"groups", grouped}});
      return schedule;
    }
    say(reasons_);
    say(lines);
    return result;
  }

 private:
  // Remarks held back until the pass knows which stand.
  void say(const std::vector<Remark>& pending) {
    for (const Remark& remark : pending) remarks_.add(remark);
  }

  isl::union_set domainOf(const std::vector<int>& group) const {
    isl::union_set domain = nests_[static_cast<size_t>(group.front())].filter;
    for (size_t k = 1; k < group.size(); ++k)
      domain = domain.unite(nests_[static_cast<size_t>(group[k])].filter);
    return domain;
  }

  Nest nestAt(const isl::schedule_node& sequence, int i) const {
    Nest nest;
    nest.filter = sequence.child(i).as<isl::schedule_node_filter>().get_filter();
    nest.coordinates = fewestCoordinates(nest.filter);
    isl::schedule_node below = sequence.child(i).child(0);
    nest.outerParallel = below.isa<isl::schedule_node_band>() &&
                         below.as<isl::schedule_node_band>().n_member() > 0 &&
                         below.as<isl::schedule_node_band>().member_get_coincident(0);
    return nest;
  }

  // Groups in an order that respects the dependences, each a list of
  // sequence positions. Alg. 1 scans the nests in order; here the nests are
  // visited in order too, and each takes every later nest its flow
  // dependences reach quasi-identically, directly or through members already
  // taken. Where the paper closes a group at the first nest that cannot join,
  // this one skips such a nest (isl orders independent nests arbitrarily) and
  // only refuses a joiner that would make the group depend on itself through
  // a skipped nest.
  std::vector<std::vector<int>> formGroups() {
    int n = static_cast<int>(nests_.size());
    // depends[a][b]: some dependence from nest a to nest b (a < b).
    std::vector<std::vector<bool>> depends(static_cast<size_t>(n), std::vector<bool>(static_cast<size_t>(n)));
    isl::union_map validity = scop_.deps.validity();
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        depends[a][b] =
            !validity.intersect_domain(nests_[a].filter).intersect_range(nests_[b].filter).is_empty();
    std::vector<int> groupOf(static_cast<size_t>(n), -1);
    std::vector<std::vector<int>> groups;
    for (int i = 0; i < n; ++i) {
      if (groupOf[i] >= 0) continue;
      std::vector<int> group{i};
      groupOf[i] = static_cast<int>(groups.size());
      for (bool grew = true; grew;) {
        grew = false;
        for (int j = i + 1; j < n; ++j) {
          if (groupOf[j] >= 0) continue;
          if (!joins(group, j, depends)) continue;
          group.push_back(j);
          std::sort(group.begin(), group.end());
          groupOf[j] = groupOf[i];
          grew = true;
        }
      }
      groups.push_back(group);
    }
    return orderGroups(groups, groupOf, depends);
  }

  // Whether nest `j` may join `group`: linked to it by flow dependences that
  // are all quasi-identity (either way: a nest the group's later members
  // read joins too), sharing coordinates, not closing a cycle through nests
  // outside the group, and keeping an outer parallel loop (d = 1).
  bool joins(const std::vector<int>& group, int j, const std::vector<std::vector<bool>>& depends) {
    const Nest& next = nests_[static_cast<size_t>(j)];
    std::vector<int> all = group;
    all.push_back(j);
    std::sort(all.begin(), all.end());
    unsigned shared = ~0u;
    for (int m : all) shared = std::min(shared, nests_[static_cast<size_t>(m)].coordinates);
    isl::union_set groupDomain = domainOf(group);
    isl::union_map flow =
        scop_.deps.flow.intersect_domain(groupDomain)
            .intersect_range(next.filter)
            .unite(scop_.deps.flow.intersect_domain(next.filter).intersect_range(groupDomain));
    if (flow.is_empty()) return false;  // not linked (yet): another member may link it later
    std::string names = schedule::statementNames(next.filter);
    auto refuse = [&](const std::string& why, const Remarks::Values& extra = {}) {
      // (The group named by the nest that started it: it grows while it is built.)
      std::string groupNames = schedule::statementNames(nests_[static_cast<size_t>(group.front())].filter);
      std::string line =
          "basteln-group: " + names + " stays out of the group of " + groupNames + " (" + why + ")";
      if (reported_.insert(line).second) {
        Remark reason;
        reason.kind = RemarkKind::Missed;
        reason.subject = names;
        reason.message = line;
        reason.values = {{"group", groupNames}, {"reason", why}};
        reason.values.insert(reason.values.end(), extra.begin(), extra.end());
        reasons_.push_back(std::move(reason));
      }
      return false;
    };
    if (shared == 0) return refuse("no coordinates in common");
    isl::union_set allDomain = groupDomain.unite(next.filter);
    if (std::string contraction = contractionCutByTheSharedLoops(allDomain, shared); !contraction.empty())
      return refuse("contraction " + contraction + " would lose its register tiles in the group",
                    {{"contraction", contraction}});
    if (!allMaps(flow, isQuasiIdentity)) return refuse("a dependence is not quasi-identity");
    // Anti and output dependences need only the shared coordinates equal:
    // the sequence under the shared band orders the rest.
    isl::union_map inside = scop_.deps.validity().intersect_domain(allDomain).intersect_range(allDomain);
    isl::union_map across =
        inside.subtract(inside.intersect_domain(next.filter).intersect_range(next.filter));
    if (!allMaps(across, [&](const isl::map& m) { return equalOnFirst(m, shared); }))
      return refuse("a dependence crosses the shared coordinates");
    // No path from a member out of the group and back into it.
    // (reached: a nest outside that depends on a member, directly or not.)
    auto isMember = [&](int k) { return std::binary_search(all.begin(), all.end(), k); };
    std::vector<bool> reached(nests_.size(), false);
    for (int k = all.front(); k <= all.back(); ++k) {
      for (int a = all.front(); a < k; ++a) {
        if (!depends[a][k]) continue;
        if (isMember(k) && reached[a])
          return refuse("it and the group depend on each other through other nests");
        if (!isMember(k) && (isMember(a) || reached[a])) reached[k] = true;
      }
    }
    // d = 1: keep an outer parallel loop when some nest had one.
    bool parallelBefore = false;
    for (int m : all) parallelBefore = parallelBefore || nests_[static_cast<size_t>(m)].outerParallel;
    if (parallelBefore && !allMaps(inside, [](const isl::map& m) { return equalOnFirst(m, 1); }))
      return refuse("the shared outer loop would carry a dependence");
    return true;
  }

  // A contraction among `instances` (a sum of products of two reads,
  // O(i, j) += A(i, k) * B(k, j), a read possibly behind a padding guard)
  // that the group's shared band would keep from its register tiles, which
  // span two output coordinates with the reduction inside: the band fixes
  // an output coordinate (its rows), or another reduction in the group (over
  // the contraction's outputs) makes each output a dot product the reduction
  // consumes at once. Attention's scores grouped with their row maximum ran
  // 10% slower. "" when none.
  std::string contractionCutByTheSharedLoops(const isl::union_set& instances, unsigned shared) const {
    std::vector<const poly::Statement*> updates;
    for (const poly::Statement& st : scop_.statements)
      if (st.kind == poly::StatementKind::Update &&
          !instances.intersect(isl::union_set(st.domain)).is_empty())
        updates.push_back(&st);
    for (const poly::Statement* st : updates) {
      if (!isContraction(*st)) continue;
      unsigned outputCoordinates = 0;
      st->writes.foreach_map([&](isl::map m) {
        outputCoordinates = std::max(outputCoordinates, static_cast<unsigned>(m.range_tuple_dim()));
      });
      if (outputCoordinates > shared || updates.size() > 1) return st->name;
    }
    return "";
  }

  // Whether `st` sums products of two reads (what the register tiler tiles).
  bool isContraction(const poly::Statement& st) const {
    auto isRead = [](const te::Expr& e) {
      te::Expr x = e;
      while (x->kind == te::ExprKind::Select) x = x->operands[1];
      return x->kind == te::ExprKind::Access;
    };
    const te::Stage& stage = scop_.program->stages[static_cast<size_t>(st.stage)];
    const te::Expr& rhs = stage.rhs;
    return stage.reduction == te::Reduction::Sum && rhs->kind == te::ExprKind::Binary &&
           rhs->binaryOp == te::BinaryOp::Mul && isRead(rhs->operands[0]) && isRead(rhs->operands[1]);
  }

  // The groups in a dependence order: the first ready group in program
  // order each time (Kahn's algorithm).
  static std::vector<std::vector<int>> orderGroups(const std::vector<std::vector<int>>& groups,
                                                   const std::vector<int>& groupOf,
                                                   const std::vector<std::vector<bool>>& depends) {
    size_t g = groups.size(), n = groupOf.size();
    std::vector<std::vector<bool>> before(g, std::vector<bool>(g, false));
    for (size_t a = 0; a < n; ++a)
      for (size_t b = a + 1; b < n; ++b)
        if (depends[a][b] && groupOf[a] != groupOf[b]) before[groupOf[a]][groupOf[b]] = true;
    std::vector<bool> placed(g, false);
    std::vector<std::vector<int>> ordered;
    while (ordered.size() < g) {
      for (size_t c = 0; c < g; ++c) {
        if (placed[c]) continue;
        bool ready = true;
        for (size_t p = 0; p < g && ready; ++p) ready = placed[p] || !before[p][c];
        if (!ready) continue;
        placed[c] = true;
        ordered.push_back(groups[c]);
        break;
      }
    }
    return ordered;
  }

  // The subtree of a group of nests (its root is a domain node).
  isl::schedule groupTree(const isl::schedule_node& sequence, const std::vector<int>& group,
                          GroupBand& chosen) const {
    isl::union_set domain = domainOf(group);
    unsigned shared = fewestCoordinates(domain);
    schedule::SchedulerOptions options = groupScheduling_;
    options.fusion = schedule::FusionStrategy::Smart;
    options.instances = domain;
    schedule::ScheduleResult scheduled = scheduler_.run(scop_, options);
    if (scheduled.fallback.empty()) {
      isl::schedule_node first = scheduled.tree.root().child(0);
      bool parallelBefore = false;
      for (int m : group) parallelBefore = parallelBefore || nests_[static_cast<size_t>(m)].outerParallel;
      if (first.isa<isl::schedule_node_band>()) {
        auto band = first.as<isl::schedule_node_band>();
        if (band.n_member() >= shared && (!parallelBefore || band.member_get_coincident(0))) {
          chosen.how = std::string(scheduler_.name()) + "'s band over the group, " +
                       std::to_string(band.n_member()) + " loops";
          chosen.construction = "scheduler";
          chosen.scheduler = scheduler_.name();
          chosen.loops = static_cast<int>(band.n_member());
          return scheduled.tree;
        }
      }
    }
    chosen.how = std::to_string(shared) + " shared coordinates";
    chosen.construction = "shared-coordinates";
    chosen.loops = static_cast<int>(shared);
    return sharedCoordinatesTree(sequence, group, shared);
  }

  // The paper's construction: a band over each statement's first `shared`
  // coordinates above a sequence of the nests' own subtrees.
  isl::schedule sharedCoordinatesTree(const isl::schedule_node& sequence, const std::vector<int>& group,
                                      unsigned shared) const {
    isl::union_set domain = domainOf(group).intersect(scop_.domain);
    isl::union_map coordinates = coordinatesOf(domain, 0, shared);
    isl::union_set_list filters(domain.ctx(), static_cast<int>(group.size()));
    for (int m : group) filters = filters.add(nests_[static_cast<size_t>(m)].filter);
    isl::schedule_node node = isl::schedule::from_domain(domain).root().child(0).insert_sequence(filters);
    auto keepEveryMark = [](const std::string&) { return true; };
    for (int k = 0; k < static_cast<int>(group.size()); ++k) {
      node = schedule::copySubtree(node.child(k).child(0),
                                   sequence.child(group[static_cast<size_t>(k)]).child(0), keepEveryMark);
      node = withoutSharedMembers(node, domain, shared).parent().parent();
    }
    isl::multi_union_pw_aff band = isl::manage(isl_multi_union_pw_aff_from_union_map(coordinates.copy()));
    auto inserted = node.insert_partial_schedule(band).as<isl::schedule_node_band>();
    // Permutable when no dependence goes backwards along a shared coordinate.
    isl::union_map inside = scop_.deps.validity().intersect_domain(domain).intersect_range(domain);
    isl::union_set distances = inside.apply_domain(coordinates).apply_range(coordinates).deltas();
    std::string nonNegative = "{ [";
    std::string conditions;
    for (unsigned d = 0; d < shared; ++d) {
      nonNegative += (d ? ", x" : "x") + std::to_string(d);
      conditions += (d ? " and x" : "x") + std::to_string(d) + " >= 0";
    }
    nonNegative += "] : " + conditions + " }";
    inserted = inserted.set_permutable(distances.is_subset(isl::union_set(domain.ctx(), nonNegative)));
    return schedule::recomputeCoincidence(scop_, inserted).schedule();
  }

  // The band at `node` without the members that repeat a shared coordinate
  // (the shared band runs them already; they would be one-iteration loops
  // that the tiling passes take for loops); the node itself when it is no
  // band, the node below when no member stays.
  isl::schedule_node withoutSharedMembers(isl::schedule_node node, const isl::union_set& domain,
                                          unsigned shared) const {
    if (!node.isa<isl::schedule_node_band>()) return node;
    auto band = node.as<isl::schedule_node_band>();
    isl::union_set here = schedule::nodeDomain(band);
    isl::multi_union_pw_aff partial = band.get_partial_schedule();
    int members = static_cast<int>(band.n_member());
    std::vector<bool> repeats(static_cast<size_t>(members), false);
    for (unsigned d = 0; d < shared; ++d) {
      isl::union_map coordinate = coordinatesOf(here, d, 1);
      for (int m = 0; m < members; ++m) {
        isl::union_map member =
            isl::union_map::from(isl::multi_union_pw_aff(partial.at(m))).intersect_domain(here);
        if (member.is_equal(coordinate)) repeats[static_cast<size_t>(m)] = true;
      }
    }
    if (std::find(repeats.begin(), repeats.end(), true) == repeats.end()) return node;
    bool permutable = band.permutable();
    isl_multi_union_pw_aff* kept = partial.copy();
    for (int m = members - 1; m >= 0; --m)
      if (repeats[static_cast<size_t>(m)])
        kept = isl_multi_union_pw_aff_drop_dims(kept, isl_dim_set, static_cast<unsigned>(m), 1);
    node = isl::manage(isl_schedule_node_delete(node.release()));
    isl::multi_union_pw_aff rest = isl::manage(kept);
    if (rest.size() == 0) return node;
    auto inserted =
        node.insert_partial_schedule(rest).as<isl::schedule_node_band>().set_permutable(permutable);
    return schedule::recomputeCoincidence(scop_, inserted);
  }

  const poly::Scop& scop_;
  const schedule::Scheduler& scheduler_;
  const schedule::SchedulerOptions& groupScheduling_;
  Remarks& remarks_;
  std::vector<Nest> nests_;         // the top sequence's children
  std::vector<Remark> reasons_;     // why nests stayed out of groups
  std::set<std::string> reported_;  // their messages
};

}  // namespace

bool isQuasiIdentity(const isl::map& relation) {
  unsigned m = static_cast<unsigned>(isl_map_dim(relation.get(), isl_dim_in));
  unsigned n = static_cast<unsigned>(isl_map_dim(relation.get(), isl_dim_out));
  unsigned shared = std::min(m, n);
  if (!equalOnFirst(relation, shared)) return false;
  for (unsigned d = shared; d < m; ++d)
    if (!isFixed(relation.domain(), d)) return false;
  for (unsigned d = shared; d < n; ++d)
    if (!isFixed(relation.range(), d)) return false;
  return true;
}

isl::schedule groupQuasiIdentityNests(const poly::Scop& scop, const isl::schedule& schedule,
                                      const schedule::Scheduler& scheduler,
                                      const schedule::SchedulerOptions& groupScheduling, Remarks& remarks) {
  return QuasiIdentityGrouping(scop, scheduler, groupScheduling, remarks).run(schedule);
}

}  // namespace tessel::fuse
