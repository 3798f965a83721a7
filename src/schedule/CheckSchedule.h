// Validity check for a schedule that did not come from a scheduler (a tree
// loaded from a file, edited by hand): it must schedule exactly the Scop's
// statement instances and execute every dependence source before its sink.
#pragma once

#include <string>
#include <vector>

#include "poly/Scop.h"

namespace tessel::schedule {

// Throws UserError naming `origin` and the first problem found. Trees may hold
// domain, band, filter, sequence, set and mark nodes; guard, context,
// extension and expansion nodes (whose effect the check cannot see) are
// rejected.
void checkSchedule(const poly::Scop& scop, const isl::schedule& schedule, const std::string& origin);
// The same check: "" when the schedule is valid, else what is wrong ("runs a
// dependence sink no later than its source: ..."), to follow "the schedule".
std::string scheduleViolation(const poly::Scop& scop, const isl::schedule& schedule);

// The same tree without mark nodes: marks carry decisions (such as
// "parallel") that Tessel's own passes must make again.
isl::schedule withoutMarks(const isl::schedule& schedule);

// The same tree with every band member's coincidence flag recomputed from the
// dependences, so a hand-edited "coincident" can never parallelize a loop
// that carries a dependence.
isl::schedule recomputeCoincidence(const poly::Scop& scop, const isl::schedule& schedule);
// One band's members, in their current order.
isl::schedule_node_band recomputeCoincidence(const poly::Scop& scop, isl::schedule_node_band band);

// The band with its members in `order` (indices of the current members; a
// permutable band stays permutable, so any order is valid) and their
// coincidence recomputed: a member that moves outward can carry dependences
// its inner neighbour carried. A band above nodes anchored to it (a tile band
// with AST build options below) is returned as it is.
isl::schedule_node_band permuteMembers(const poly::Scop& scop, const isl::schedule_node_band& band,
                                       const std::vector<int>& order);

}  // namespace tessel::schedule
