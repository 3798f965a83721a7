// onednn.graph: any program run the way a framework runs a graph, op by op.
// Each stage becomes one oneDNN primitive (matmul, convolution, reduction,
// reorder, binary or eltwise) or a short chain of them; the multi-stage
// softmax idiom becomes one softmax primitive; an elementwise stage reading a
// value that nothing else reads is fused into that value's producer as
// eltwise/binary post-ops (a broadcast add as a matmul's or convolution's
// bias). Intermediates live in memory the run owns, allocated here. A stage
// with no such form is a PeerError naming it. Only for sources compiled with
// TESSEL_HAVE_ONEDNN.
#pragma once

#include <vector>

#include "bench/OneDnnRun.h"

namespace tessel::bench::onednn {

void prepareGraph(OneDnnRun& run, const te::Program& program, const std::vector<runtime::Buffer>& inputs);

}  // namespace tessel::bench::onednn
