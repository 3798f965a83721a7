// Non-temporal (streaming) stores for outputs too large for the caches. A
// store through the caches first reads the line it writes (read for
// ownership): an elementwise kernel writing an output far beyond the caches
// moves 12 bytes per f32 written instead of 4 + the reads. Vector stores of
// such an output that no statement of the kernel reads again are marked
// `streaming`; the C backend then writes full, aligned vectors with
// non-temporal stores (others, and tails, as before) and fences them at the
// end of the kernel.
#pragma once

#include <cstdint>
#include <string>

#include "lir/Lir.h"

namespace tessel::lir {

// Outputs of at least `minBytes` stream; the driver asks for kStreamingFactor
// times what the machine's caches hold in all (every core's share of its last
// cache level). Appends one line per output considered to `explain`.
inline constexpr int64_t kStreamingFactor = 4;
Kernel markStreamingStores(const Kernel& kernel, int64_t minBytes, std::string& explain);

}  // namespace tessel::lir
