// C with intrinsics for a bound scheme, in one pass as paper 002 §6
// generates it: each T/R a loop, each lambda a sequence of loops whose
// suffixes have the parameter bound, U unrolled, V vectorized; no bounds
// checks and no remainders, since the scheme covers the domain exactly.
// The register tile (U, V) and the reduction loops right above it form the
// micro-kernel: its accumulators are loaded from the output before those
// loops and stored after them.
#pragma once

#include <string>

#include "microkernel/BoundScheme.h"
#include "microkernel/Epilogue.h"

namespace tessel::microkernel {

struct SchemeCodeOptions {
  std::string functionName = "tessel_scheme";
  // The outermost run of output-dimension loops (not lambdas) becomes one
  // collapsed OpenMP loop (paper 002 §2.5, strategy 1).
  bool parallel = true;
  // Applied to each output tile as it leaves the registers; `out` is then the
  // epilogue's output, the accumulators start at zero, and the function takes
  // one more pointer per tensor the epilogue reads (Epilogue::tensors()). The
  // scheme must keep every reduction loop of more than one iteration inside
  // the micro-kernel, so that each tile is complete when it is stored.
  const Epilogue* epilogue = nullptr;
  // The accumulators start at zero instead of the output's values: the
  // contraction's initialization (`+=!`) is folded in, under the same
  // condition as an epilogue (each tile complete when it is stored).
  bool startsAtZero = false;
};

// `static int NAME(float* restrict out, const float* restrict lhs, const
// float* restrict rhs)`: out += lhs * rhs over the contraction's domain, the
// pointers to the dense tensors of the contraction's accesses. It returns 0,
// or 1 when a packing buffer (P_X) could not be allocated (then it computed
// nothing). Packing buffers are per thread, kept from call to call.
std::string generateSchemeC(const BoundScheme& scheme, const SchemeCodeOptions& options);

// The outermost loops over output dimensions (and reduction loops of one
// iteration), all T or R, up to a lambda, a reduction or a packing: collapsed
// into one parallel loop (when they make more than one iteration). When they
// make one iteration, the first lambda over an output dimension past them
// and past reduction loops (no packing before it) runs its branches one
// after the other, each a parallel loop: a dimension covered with partial
// vectors has no other loop to share out.
struct ParallelLoops {
  int loops = 0;                // the collapsed loops; with lambdaBranches, the lambda's index
  int64_t iterations = 1;       // of the collapsed loops, or of the lambda's longest branch
  bool lambdaBranches = false;  // the lambda at index `loops` runs its branches in parallel
};
ParallelLoops parallelLoopsOf(const BoundScheme& scheme);

// `static int NAME(float* restrict to, const float* restrict from)`: copies
// the dense row-major tensor `from` into `to` in `access`'s layout (an L
// specifier's), zeros where a block overhangs the tensor or in its zero
// border; returns 0.
std::string generateLayoutTransformC(const TensorAccess& access, const std::string& functionName);
// The inverse, for an output the kernel writes laid out (L_O): copies `from`,
// in `access`'s layout, into the dense row-major `to`, overhang left out.
std::string generateLayoutTransformBackC(const TensorAccess& access, const std::string& functionName);
// "W[#3/64:4][#0:3][#1:3][#2:256][#3%64:64]": each layout dimension, its subscript and extent.
std::string layoutText(const TensorAccess& access);

}  // namespace tessel::microkernel
