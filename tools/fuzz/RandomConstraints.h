// A random constraint tree (schedule/ConstraintTree.h) for a program, in
// the text form of --schedule-constraints: fixed and equated coefficients,
// constraints across rows, coincidence and permutability requirements, so
// the fuzzer drives Tessel's scheduler through its backtracking and
// fallbacks. Deterministic in `seed`.
#pragma once

#include <cstdint>
#include <string>

#include "tessel/te.h"

namespace tessel::fuzz {

std::string randomConstraintTree(const te::Program& program, uint64_t seed);

}  // namespace tessel::fuzz
