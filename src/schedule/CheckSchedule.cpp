#include "schedule/CheckSchedule.h"

#include <isl/schedule_node.h>

#include <sstream>

namespace tessel::schedule {

namespace {

// { [d0, ..., dn-1] : the vector is lexicographically positive }.
isl::set lexPositive(isl::ctx ctx, unsigned n) {
  std::ostringstream os;
  os << "{ [";
  for (unsigned i = 0; i < n; ++i) os << (i ? ", " : "") << "d" << i;
  os << "] : ";
  for (unsigned k = 0; k < n; ++k) {
    os << (k ? " or (" : "(");
    for (unsigned i = 0; i < k; ++i) os << "d" << i << " = 0 and ";
    os << "d" << k << " >= 1)";
  }
  if (n == 0) os << "false";
  os << " }";
  return isl::set(ctx, os.str());
}

}  // namespace

std::string scheduleViolation(const poly::Scop& scop, const isl::schedule& schedule) {
  std::string unsupported;
  schedule.root().foreach_descendant_top_down([&](const isl::schedule_node& n) {
    if (n.isa<isl::schedule_node_guard>()) unsupported = "guard";
    if (n.isa<isl::schedule_node_context>()) unsupported = "context";
    if (n.isa<isl::schedule_node_extension>()) unsupported = "extension";
    if (n.isa<isl::schedule_node_expansion>()) unsupported = "expansion";
    return unsupported.empty();
  });
  if (unsupported == "extension")
    return "has an extension node; schedule files may hold domain, band, filter, sequence, set and mark "
           "nodes (a tree dumped after basteln holds its fusions: give the tree from --dump-after schedule "
           "or basteln-group, and --fusion basteln fuses it again)";
  if (!unsupported.empty())
    return "has a " + unsupported +
           " node; schedule files may hold domain, band, filter, sequence, set and mark nodes";
  if (!schedule.domain().is_equal(scop.domain)) {
    std::ostringstream os;
    os << "does not cover the program's statement instances exactly (expected " << scop.domain << ")";
    return os.str();
  }
  // The root domain may be right while filters, guards or bands below it
  // drop or repeat instances: every instance must reach exactly one leaf.
  // (isl leaves the map unconstrained where no filter restricts it.)
  isl::union_map order = schedule.map().intersect_domain(scop.domain);
  if (!scop.domain.is_subset(order.domain())) {
    std::ostringstream os;
    os << "never executes these statement instances: " << scop.domain.subtract(order.domain());
    return os.str();
  }
  if (!order.is_single_valued()) return "executes some statement instances more than once";
  isl::union_map deps = scop.deps.validity();
  // Pairs of schedule vectors (source time, sink time) of every dependence.
  isl::union_map times = deps.apply_domain(order).apply_range(order);
  std::string violation;
  times.deltas().foreach_set([&](isl::set distances) {
    if (!violation.empty()) return;
    isl::set bad = distances.subtract(lexPositive(distances.ctx(), distances.tuple_dim()));
    if (bad.is_empty()) return;
    std::ostringstream os;
    os << bad;
    violation = os.str();
  });
  if (!violation.empty())
    return "runs a dependence sink no later than its source: these source-to-sink schedule distances are "
           "not lexicographically positive: " +
           violation;
  return "";
}

void checkSchedule(const poly::Scop& scop, const isl::schedule& schedule, const std::string& origin) {
  std::string violation = scheduleViolation(scop, schedule);
  if (!violation.empty()) userError("the schedule in " + origin + " " + violation);
}

isl::schedule withoutMarks(const isl::schedule& schedule) {
  auto visit = [](isl::schedule_node node) -> isl::schedule_node {
    return node.isa<isl::schedule_node_mark>() ? isl::manage(isl_schedule_node_delete(node.release())) : node;
  };
  return schedule.root().map_descendant_bottom_up(visit).schedule();
}

isl::schedule_node_band recomputeCoincidence(const poly::Scop& scop, isl::schedule_node_band band) {
  // Only dependences between instances that reach this band and share its
  // outer schedule can be carried here.
  // (The C++ bindings have no accessor for a node's domain.)
  isl::union_set here = isl::manage(isl_schedule_node_get_domain(band.get()));
  isl::union_map live = scop.deps.validity().intersect_domain(here).intersect_range(here).eq_at(
      band.prefix_schedule_multi_union_pw_aff());
  isl::multi_union_pw_aff partial = band.partial_schedule();
  for (unsigned i = 0; i < band.n_member(); ++i) {
    isl::multi_union_pw_aff member(partial.at(static_cast<int>(i)));
    isl::union_map time = isl::union_map::from(member);
    isl::union_set distances = live.apply_domain(time).apply_range(time).deltas();
    bool coincident = distances.is_empty() || distances.is_subset(isl::union_set(band.ctx(), "{ [0] }"));
    band = band.member_set_coincident(static_cast<int>(i), coincident);
    live = live.eq_at(member);
  }
  return band;
}

isl::schedule_node_band permuteMembers(const poly::Scop& scop, const isl::schedule_node_band& band,
                                       const std::vector<int>& order) {
  isl::multi_union_pw_aff schedule = band.get_partial_schedule();
  isl::union_pw_aff_list members(band.ctx(), static_cast<int>(order.size()));
  for (int m : order) members = members.add(schedule.at(m));
  isl::multi_union_pw_aff permuted(schedule.get_space(), members);
  bool permutable = band.permutable();
  // isl cannot delete a band above nodes anchored to it (AST build options
  // of tile bands); such bands keep their order.
  if (isl_schedule_node_is_subtree_anchored(band.get()) == isl_bool_true) return band;
  isl::schedule_node node = isl::manage(isl_schedule_node_delete(band.copy()));
  auto result =
      node.insert_partial_schedule(permuted).as<isl::schedule_node_band>().set_permutable(permutable);
  return recomputeCoincidence(scop, result);
}

isl::schedule recomputeCoincidence(const poly::Scop& scop, const isl::schedule& schedule) {
  auto visit = [&](isl::schedule_node node) -> isl::schedule_node {
    if (!node.isa<isl::schedule_node_band>()) return node;
    return recomputeCoincidence(scop, node.as<isl::schedule_node_band>());
  };
  return schedule.root().map_descendant_bottom_up(visit).schedule();
}

}  // namespace tessel::schedule
