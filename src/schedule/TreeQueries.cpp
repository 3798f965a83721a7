#include "schedule/TreeQueries.h"

namespace tessel::schedule {

isl::union_set nodeDomain(const isl::schedule_node& node) {
  return isl::manage(isl_schedule_node_get_domain(node.get()));
}

bool hasBandBelow(const isl::schedule_node& node) {
  for (int i = 0; i < static_cast<int>(node.n_children()); ++i) {
    isl::schedule_node child = node.child(i);
    if (child.isa<isl::schedule_node_band>() || hasBandBelow(child)) return true;
  }
  return false;
}

std::string statementNames(const isl::union_set& instances) {
  std::string names;
  instances.foreach_set([&](isl::set s) {
    names += (names.empty() ? "" : " ") + isl::manage(isl_set_get_tuple_id(s.get())).name();
  });
  return names;
}

isl::id markId(isl::ctx ctx, const std::string& name) {
  return isl::manage(isl_id_alloc(ctx.get(), name.c_str(), nullptr));
}

std::string markName(const isl::schedule_node& node) {
  if (!node.isa<isl::schedule_node_mark>()) return "";
  return isl::manage(isl_schedule_node_mark_get_id(node.get())).name();
}

}  // namespace tessel::schedule
