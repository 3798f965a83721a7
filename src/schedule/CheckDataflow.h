// Validity of a schedule tree that may run statement instances more than
// once (extension nodes of tiling-fusion), judged by what every execution
// computes rather than by the order of dependent instances.
#pragma once

#include <isl/cpp.h>

#include <optional>
#include <string>

#include "poly/Scop.h"

namespace tessel::schedule {

// Returns "" when the tree computes the program's outputs: every instance of
// the Scop runs, and no other; only statements that write no output run more
// than once; every read of every execution sees a write by an execution of
// the instance it read from in program order (or, as then, no write); and
// each output element ends with the value of its last write in program
// order. Otherwise it describes the first problem found. Trees may hold
// domain, band, filter, sequence, set, mark and extension nodes.
//
// `focus`, when given, holds the instances whose order relative to the
// others may differ from program order (what a transformation moved: the
// others keep their order among themselves); the check then follows only
// their reads, the reads of what they write and the writes all those reads
// may see, which is much cheaper.
std::string dataflowViolation(const poly::Scop& scop, const isl::schedule& schedule,
                              const std::optional<isl::union_set>& focus = std::nullopt);

}  // namespace tessel::schedule
