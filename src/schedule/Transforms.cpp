#include "schedule/Transforms.h"

#include "schedule/TreeQueries.h"

namespace tessel::schedule {

isl::schedule_node rewriteChildren(isl::schedule_node node, const NodeRewrite& rewrite) {
  int n = static_cast<int>(node.n_children());
  for (int i = 0; i < n; ++i) node = rewrite(node.child(i)).parent();
  return node;
}

isl::schedule_node rewriteTopDown(
    isl::schedule_node node,
    const std::function<std::optional<isl::schedule_node>(isl::schedule_node)>& rewrite) {
  if (std::optional<isl::schedule_node> replaced = rewrite(node)) return *replaced;
  return rewriteChildren(node,
                         [&rewrite](isl::schedule_node child) { return rewriteTopDown(child, rewrite); });
}

isl::schedule_node rewriteBottomUp(isl::schedule_node node, const NodeRewrite& rewrite) {
  node =
      rewriteChildren(node, [&rewrite](isl::schedule_node child) { return rewriteBottomUp(child, rewrite); });
  return rewrite(node);
}

isl::schedule_node insertMark(const isl::schedule_node& node, const std::string& name) {
  return node.insert_mark(markId(node.ctx(), name));
}

}  // namespace tessel::schedule
