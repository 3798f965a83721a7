// The Halide peer (libhalide14-0-dev): the image pipelines of
// bench/programs/ (blur3x3, unsharp, harris, interpolate) written as Halide
// Funcs with exactly the arithmetic of the TC programs, each scheduled two
// ways: by the Adams2019 autoscheduler ("halide.blur3x3", parallelism = the
// thread count) and by hand in the style of the Halide repository's apps
// ("halide.blur3x3_manual"). Scheduling and JIT compilation happen in
// prepare(); run() is one realize into a preallocated output. Threads:
// Halide's JIT runtime thread pool (process-wide).
#pragma once

#include <memory>

#include "bench/Peer.h"

namespace tessel::bench {

// Always succeeds; the family is unavailable when Tessel was built without Halide.
std::unique_ptr<PeerFamily> makeHalidePeer();

}  // namespace tessel::bench
