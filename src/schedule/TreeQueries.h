// Small questions and helpers about schedule tree nodes that several passes
// share, for what the isl C++ bindings do not offer directly.
#pragma once

#include <isl/cpp.h>

#include <string>

namespace tessel::schedule {

// The statement instances that reach `node`.
isl::union_set nodeDomain(const isl::schedule_node& node);
// Whether some descendant of `node` is a band (so `node` is not innermost).
bool hasBandBelow(const isl::schedule_node& node);
// The names of the statements in `instances`, space-separated.
std::string statementNames(const isl::union_set& instances);
// An identifier for a mark node, taken verbatim (no parsing of the name).
isl::id markId(isl::ctx ctx, const std::string& name);
// The name of a mark node's identifier; "" for any other node.
std::string markName(const isl::schedule_node& node);

}  // namespace tessel::schedule
