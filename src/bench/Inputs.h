// The random inputs a benchmark case runs on, shared by Tessel, the
// interpreter and every peer: values suited to each dtype, and inputs read as
// an index of another tensor kept inside that tensor's extent (as `tessel run`
// makes them), so kernels time their normal path rather than an error exit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/Buffer.h"
#include "tessel/te.h"

namespace tessel::bench {

// One buffer per input, in signature order; deterministic for a seed.
std::vector<runtime::Buffer> makeInputs(const te::Program& p, uint64_t seed);
// The same buffers keyed by tensor name, as the interpreter takes them.
std::map<std::string, runtime::Buffer> byName(const te::Program& p,
                                              const std::vector<runtime::Buffer>& inputs);

}  // namespace tessel::bench
