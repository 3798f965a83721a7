// The OpenBLAS peer (libopenblas-dev): sgemm, and batched sgemm as a loop of
// sgemm calls. Threads: OpenBLAS's own pool (openblas_set_num_threads).
#pragma once

#include <memory>

#include "bench/Peer.h"

namespace tessel::bench {

// Always succeeds; the family is unavailable when Tessel was built without OpenBLAS.
std::unique_ptr<PeerFamily> makeOpenBlasPeer();

}  // namespace tessel::bench
