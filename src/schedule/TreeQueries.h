// Small questions and helpers about schedule tree nodes that several passes
// share, for what the isl C++ bindings do not offer directly.
#pragma once

#include <isl/cpp.h>

#include <functional>
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
// The tree in a short indented form for --explain: one line per band (its
// members per statement, `parallel` on coincident members), sequence, set,
// mark and extension; filters by the statements they keep.
std::string scheduleOutline(const isl::schedule& schedule, const std::string& indent = "  ");

// Whether isl can answer domain and prefix-schedule questions at `node`. It
// cannot where instances an extension node adds reach the node (a producer
// recomputed inside a consumer's tile, and the nodes between the extension
// and the filters that separate its instances from the others, those
// filters included).
bool queryable(const isl::schedule_node& node);

// Instance -> the values of the band members above `node`, for every
// instance that reaches it, those extension nodes above add included (they
// run at each outer iteration that maps to them, so the relation is not
// single-valued when several iterations recompute an instance).
isl::union_map prefixRelation(const isl::schedule_node& node);

// The instances the subtree at `node` executes: those that reach it and
// those extension nodes inside it add, less those filters inside it drop.
isl::union_set executedBelow(const isl::schedule_node& node);

// Builds a copy of the subtree under `source` at `leaf` (a leaf node) and
// returns the node at `leaf`'s position. Bands keep their schedules,
// permutability and coincidence; their AST build options only through
// `bandOptions` (given the original's, it returns the copy's: they name the
// loops around the band, which differ at the copy); sequences, sets and
// filters are copied; a mark is kept only where `keepMark` says so.
isl::schedule_node copySubtree(isl::schedule_node leaf, const isl::schedule_node& source,
                               const std::function<bool(const std::string&)>& keepMark,
                               const std::function<isl::union_set(const isl::union_set&)>& bandOptions = {});

}  // namespace tessel::schedule
