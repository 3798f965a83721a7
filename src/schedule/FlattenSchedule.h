// The executions of a schedule tree as one relation, for trees that isl's
// own schedule map refuses: extension nodes (tiling-fusion) run statement
// instances again inside other subtrees.
#pragma once

#include <isl/cpp.h>

namespace tessel::schedule {

// Maps each statement instance to the time vector of every one of its
// executions: band members and sequence positions in tree order, padded with
// zeros to one length. A set node gives all its children the same position,
// so nothing under a set counts as ordered. Not single-valued where an
// extension node runs an instance again. Throws InternalError on guard and
// expansion nodes.
isl::union_map flattenSchedule(const isl::schedule& schedule);

}  // namespace tessel::schedule
