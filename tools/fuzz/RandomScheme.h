// A random valid TTILE scheme for the program's contraction (microkernel/):
// loops in a random order at one or two levels, unrolled register tiles, a
// vector dimension where the rules allow one, compositions (lambda), packed
// operands and operands in other layouts (L_X: permuted, blocked), so the
// fuzzer exercises the micro-kernel path and the kernels' prepare entries.
#pragma once

#include <cstdint>
#include <string>

#include "tessel/te.h"

namespace tessel::fuzz {

// "TENSOR: scheme" for the program's contraction with the most work, or ""
// when it has none. Deterministic in `seed`; `vectorIsa` as target::vectorIsa.
std::string randomScheme(const te::Program& program, uint64_t seed, const std::string& vectorIsa);

}  // namespace tessel::fuzz
