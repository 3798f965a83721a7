// The XNNPACK peer (libxnnpack-dev, the 2022 operator API): fully connected,
// NHWC convolution and depthwise convolution, add/multiply with a fused
// clamp, ReLU, sigmoid, max/average pooling, softmax. NCHW programs get their
// tensors converted to NHWC outside the timed region. Threads: a pthreadpool.
#pragma once

#include <memory>

#include "bench/Peer.h"

namespace tessel::bench {

// Always succeeds; the family is unavailable when Tessel was built without
// XNNPACK or when xnn_initialize fails on this processor.
std::unique_ptr<PeerFamily> makeXnnpackPeer();

}  // namespace tessel::bench
