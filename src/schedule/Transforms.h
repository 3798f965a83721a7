// The verbs passes rewrite schedule trees with (as TC's schedule_transforms.h):
// walks that rebuild a subtree node by node, and small edits. Each returns
// the node at the position it was given, in the rewritten tree.
#pragma once

#include <isl/cpp.h>

#include <functional>
#include <optional>
#include <string>

namespace tessel::schedule {

using NodeRewrite = std::function<isl::schedule_node(isl::schedule_node)>;

// Each child of `node` in turn replaced by `rewrite` of it.
isl::schedule_node rewriteChildren(isl::schedule_node node, const NodeRewrite& rewrite);

// Outermost first: `rewrite` either returns the node's replacement, whose
// subtree is then not entered, or nothing, and the node's children are
// rewritten in turn.
isl::schedule_node rewriteTopDown(
    isl::schedule_node node,
    const std::function<std::optional<isl::schedule_node>(isl::schedule_node)>& rewrite);

// Innermost first: the children, then the node itself.
isl::schedule_node rewriteBottomUp(isl::schedule_node node, const NodeRewrite& rewrite);

// A mark named `name` inserted above `node`; returns the mark.
isl::schedule_node insertMark(const isl::schedule_node& node, const std::string& name);

}  // namespace tessel::schedule
