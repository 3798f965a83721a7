#include "schedule/TreeQueries.h"

#include <isl/aff.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <vector>

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

bool queryable(const isl::schedule_node& node) {
  // The extended statements still unseparated from the others, top-down.
  // isl looks at the ancestors only: a filter that separates the instances
  // counts for the nodes below it, not for itself.
  std::vector<isl::schedule_node> path;
  for (isl::schedule_node n = node; n.has_parent();) {
    n = n.parent();
    path.push_back(n);
  }
  isl::union_set extended;
  bool pending = false;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (it->isa<isl::schedule_node_extension>()) {
      isl::union_set added = it->as<isl::schedule_node_extension>().extension().range().universe();
      extended = pending ? extended.unite(added) : added;
      pending = true;
    } else if (pending && it->isa<isl::schedule_node_filter>()) {
      if (it->as<isl::schedule_node_filter>().filter().intersect(extended).is_empty()) pending = false;
    }
  }
  return !pending;
}

isl::union_map prefixRelation(const isl::schedule_node& node) {
  std::vector<isl::schedule_node> path;
  for (isl::schedule_node n = node; n.has_parent();) {
    n = n.parent();
    path.push_back(n);
  }
  isl::union_map prefix;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (it->isa<isl::schedule_node_domain>()) {
      prefix = isl::union_map::from_domain_and_range(it->as<isl::schedule_node_domain>().domain(),
                                                     isl::union_set(it->ctx(), "{ [] }"));
    } else if (it->isa<isl::schedule_node_band>()) {
      auto band = it->as<isl::schedule_node_band>();
      if (band.n_member() == 0) continue;
      isl::union_map members = isl::union_map::from(band.partial_schedule());
      prefix = isl::manage(isl_union_map_flat_range_product(prefix.release(), members.release()));
    } else if (it->isa<isl::schedule_node_filter>()) {
      prefix = prefix.intersect_domain(it->as<isl::schedule_node_filter>().filter());
    } else if (it->isa<isl::schedule_node_extension>()) {
      isl::union_map added = it->as<isl::schedule_node_extension>().extension().reverse();
      prefix = prefix.unite(added.intersect_range(prefix.range()));
    }
  }
  return prefix;
}

namespace {

// The instances that reach a leaf of the subtree at `node` from `reaching`.
isl::union_set executedFrom(const isl::schedule_node& node, isl::union_set reaching) {
  if (node.isa<isl::schedule_node_filter>())
    reaching = reaching.intersect(node.as<isl::schedule_node_filter>().filter());
  if (node.isa<isl::schedule_node_extension>())
    reaching = reaching.unite(node.as<isl::schedule_node_extension>().extension().range());
  if (node.n_children() == 0 || reaching.is_empty()) return reaching;
  isl::union_set executed = isl::union_set::empty(node.ctx());
  for (int i = 0; i < static_cast<int>(node.n_children()); ++i)
    executed = executed.unite(executedFrom(node.child(i), reaching));
  return executed;
}

}  // namespace

isl::union_set executedBelow(const isl::schedule_node& node) {
  if (node.isa<isl::schedule_node_domain>())
    return executedFrom(node.child(0), node.as<isl::schedule_node_domain>().domain());
  return executedFrom(node, prefixRelation(node).domain());
}

isl::schedule_node copySubtree(isl::schedule_node leaf, const isl::schedule_node& source,
                               const std::function<bool(const std::string&)>& keepMark,
                               const std::function<isl::union_set(const isl::union_set&)>& bandOptions) {
  if (source.n_children() == 0) return leaf;
  isl::schedule_node below = source.child(0);
  if (source.isa<isl::schedule_node_band>()) {
    auto band = source.as<isl::schedule_node_band>();
    if (band.n_member() == 0) return copySubtree(leaf, below, keepMark, bandOptions);
    auto copy = leaf.insert_partial_schedule(band.get_partial_schedule())
                    .as<isl::schedule_node_band>()
                    .set_permutable(band.permutable());
    for (int m = 0; m < static_cast<int>(band.n_member()); ++m)
      copy = copy.member_set_coincident(m, band.member_get_coincident(m));
    if (bandOptions) copy = copy.set_ast_build_options(bandOptions(band.get_ast_build_options()));
    return copySubtree(copy.child(0), below, keepMark, bandOptions).parent();
  }
  if (source.isa<isl::schedule_node_sequence>() || source.isa<isl::schedule_node_set>()) {
    int n = static_cast<int>(source.n_children());
    isl::union_set_list filters(source.ctx(), n);
    for (int i = 0; i < n; ++i)
      filters = filters.add(source.child(i).as<isl::schedule_node_filter>().get_filter());
    isl::schedule_node split =
        source.isa<isl::schedule_node_sequence>() ? leaf.insert_sequence(filters) : leaf.insert_set(filters);
    for (int i = 0; i < n; ++i)
      split = copySubtree(split.child(i).child(0), source.child(i).child(0), keepMark, bandOptions)
                  .parent()
                  .parent();
    return split;
  }
  if (source.isa<isl::schedule_node_filter>()) {
    isl::schedule_node copy = leaf.insert_filter(source.as<isl::schedule_node_filter>().get_filter());
    return copySubtree(copy.child(0), below, keepMark, bandOptions).parent();
  }
  if (source.isa<isl::schedule_node_mark>() && keepMark(markName(source))) {
    isl::schedule_node copy = leaf.insert_mark(isl::manage(isl_schedule_node_mark_get_id(source.get())));
    return copySubtree(copy.child(0), below, keepMark, bandOptions).parent();
  }
  // Other marks (and contexts) are left out.
  return copySubtree(leaf, below, keepMark, bandOptions);
}

namespace {

// One band member: per statement, its expression (`S0[i, j] -> i`).
std::string memberText(const isl::union_pw_aff& member) {
  std::vector<std::string> pieces;
  isl_union_pw_aff_foreach_pw_aff(
      member.get(),
      [](isl_pw_aff* piece, void* user) -> isl_stat {
        char* text = isl_pw_aff_to_str(piece);
        static_cast<std::vector<std::string>*>(user)->push_back(text ? text : "");
        free(text);
        isl_pw_aff_free(piece);
        return isl_stat_ok;
      },
      &pieces);
  std::sort(pieces.begin(), pieces.end());
  std::string out;
  for (std::string text : pieces) {  // { S0[i, j] -> [(i)] } or with pieces
    // The short form when the piece is one affine expression: "S0[i, j] -> i".
    auto open = text.find("{ "), arrow = text.find(" -> [("), close = text.rfind(")] }");
    if (open == 0 && arrow != std::string::npos && close != std::string::npos &&
        text.find(';') == std::string::npos && text.find(':') == std::string::npos)
      text = text.substr(2, arrow - 2) + " -> " + text.substr(arrow + 6, close - arrow - 6);
    out += (out.empty() ? "" : "; ") + text;
  }
  return out;
}

}  // namespace

std::string scheduleOutline(const isl::schedule& schedule, const std::string& indent) {
  std::ostringstream os;
  std::function<void(const isl::schedule_node&, std::string)> visit = [&](const isl::schedule_node& node,
                                                                          std::string at) {
    std::string next = at + "  ";
    if (node.isa<isl::schedule_node_band>()) {
      auto band = node.as<isl::schedule_node_band>();
      os << at << "band" << (band.permutable() ? " (permutable)" : "") << ":\n";
      isl::multi_union_pw_aff partial = band.get_partial_schedule();
      for (int m = 0; m < static_cast<int>(band.n_member()); ++m)
        os << next << (band.member_get_coincident(m) ? "parallel " : "") << memberText(partial.at(m)) << "\n";
    } else if (node.isa<isl::schedule_node_sequence>()) {
      os << at << "sequence\n";
    } else if (node.isa<isl::schedule_node_set>()) {
      os << at << "set\n";
    } else if (node.isa<isl::schedule_node_filter>()) {
      os << at << "filter " << statementNames(node.as<isl::schedule_node_filter>().filter()) << "\n";
    } else if (node.isa<isl::schedule_node_mark>()) {
      os << at << "mark " << markName(node) << "\n";
    } else if (node.isa<isl::schedule_node_extension>()) {
      os << at << "extension " << node.as<isl::schedule_node_extension>().extension() << "\n";
    } else if (node.isa<isl::schedule_node_context>()) {
      os << at << "context\n";
    } else if (node.isa<isl::schedule_node_guard>()) {
      os << at << "guard\n";
    } else if (node.isa<isl::schedule_node_expansion>()) {
      os << at << "expansion\n";
    } else {
      next = at;  // the domain and leaves
    }
    for (int c = 0; c < static_cast<int>(node.n_children()); ++c) visit(node.child(c), next);
  };
  visit(schedule.root(), indent);
  return os.str();
}

}  // namespace tessel::schedule
