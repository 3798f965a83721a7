// The oneDNN peer (libdnnl-dev): matmul, batch matmul, convolution (blocked
// layouts of oneDNN's choosing; the reorders are timed apart), depthwise
// convolution, eltwise, softmax, layer and batch normalization, reductions,
// pooling and binary operations with post-ops; and `graph`, any program op
// by op (OneDnnGraph.h). Threads: OpenMP.
#pragma once

#include <memory>

#include "bench/Peer.h"

namespace tessel::bench {

// Always succeeds; the family is unavailable when Tessel was built without oneDNN.
std::unique_ptr<PeerFamily> makeOneDnnPeer();

}  // namespace tessel::bench
