// The random inputs a program runs on when the user gives none (`tessel run`,
// `tessel bench`): values suited to each dtype, and inputs read as an index of
// another tensor kept inside that tensor's extent, so kernels run their
// normal path rather than their out-of-range error exit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/Buffer.h"
#include "tessel/te.h"

namespace tessel::runtime {

// One buffer per input, in signature order; deterministic for a seed.
std::vector<Buffer> makeInputs(const te::Program& program, uint64_t seed);
// The same buffers keyed by tensor name, as the interpreter takes them.
std::map<std::string, Buffer> inputsByName(const te::Program& program, const std::vector<Buffer>& inputs);

}  // namespace tessel::runtime
