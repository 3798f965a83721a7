// Reads a library operator's parameters off a te::Program: which input is
// which operand, the sizes, strides, paddings, reduced dimensions. Shared by
// every peer family, so they agree on what a program means. A program that
// does not have the operator's structure is a PeerError naming what differs;
// parameters that shapes alone cannot pin down (a conv's padding) are the
// likeliest reading, and a wrong guess is caught by the output comparison.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/te.h"

namespace tessel::bench {

// C(b, m, n) = sum_k A(b, m, k) * B(b, k, n), each operand possibly
// transposed; batch = 1 and batched = false for a plain 2-D matmul.
struct MatmulShape {
  bool batched = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false;  // A is stored (K, M), B is stored (N, K)
  int aInput = 0, bInput = 1;           // positions in the program's inputs
};
MatmulShape matmulShape(const te::Program& p);

// One spatial dimension of a convolution or pooling window.
struct WindowDim {
  int64_t in = 0, out = 0, kernel = 0, stride = 1, padBefore = 0, padAfter = 0;
};

// NCHW input (inputs[0]), KCHW weights (inputs[1]; depthwise: (C, KH, KW) or
// (C, 1, KH, KW)), NKHW output; or, when the output's last index is the
// weights' last one, NHWC input, (KH, KW, C, K) weights (depthwise: (KH, KW,
// C)) and NHWK output.
struct ConvShape {
  int64_t n = 0, c = 0, k = 0, groups = 1;
  WindowDim h, w;
  bool nhwc = false;
};
ConvShape convShape(const te::Program& p, bool depthwise);

// NCHW input and output; the window is the stage's last two reduction variables.
struct PoolShape {
  int64_t n = 0, c = 0;
  WindowDim h, w;
  te::Reduction reduction = te::Reduction::Max;
};
PoolShape poolShape(const te::Program& p);

// A reduction stage reading one input: the input's dims, and the same dims
// with 1 where the stage reduces (the output's shape with the reduced
// dimensions kept).
struct ReductionShape {
  std::string input;
  std::vector<int64_t> srcDims, dstDims;
};
ReductionShape reductionShape(const te::Program& p, const te::Stage& stage);

// The dims of `input` as read by the program's single output stage, in the
// output's rank: the input's extent where it varies with an output index,
// 1 where it is broadcast. PeerError when it is read transposed or reduced.
std::vector<int64_t> broadcastDims(const te::Program& p, const std::string& input);

// Checks shared by the peers: every input and output is f32, there are
// `inputs` inputs and `outputs` outputs.
void requireF32Signature(const te::Program& p, size_t inputs, size_t outputs);
// The single stage writing an output (temporaries are not allowed).
const te::Stage& singleStage(const te::Program& p);

}  // namespace tessel::bench
