// Non-temporal (streaming) stores for outputs too large for the caches. A
// store through the caches first reads the line it writes (read for
// ownership): an elementwise kernel writing an output larger than the caches
// moves 12 bytes per f32 written instead of 4 + the reads. Vector stores of
// such an output that no statement of the kernel reads again are marked
// `streaming`; the C backend then writes full, aligned vectors with
// non-temporal stores (others, and tails, as before) and fences them at the
// end of the kernel.
#pragma once

#include <cstdint>
#include <string>

#include "lir/Lir.h"
#include "support/Remarks.h"

namespace tessel::lir {

// Outputs of at least `minBytes` stream; the driver asks for what the
// machine's caches hold in all (every core's share of its last cache level):
// such an output leaves the caches before anything reads it again. (Four
// times that, the first threshold, kept 64 MiB outputs cached: an
// elementwise add and ReLU on 4096 x 4096 ran 11.5 ms, a 64 MiB layer
// normalization 4.3 ms and a 4096 x 4096 transpose 11.1 ms, against 9.1, 2.2
// and 8.2 ms streamed, 1 thread on a 32 MiB L3.) Adds one remark per output
// considered to `remarks`.
Kernel markStreamingStores(const Kernel& kernel, int64_t minBytes, Remarks& remarks);

}  // namespace tessel::lir
