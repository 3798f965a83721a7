// What micro-kernel grafting decided (target/cpu/GraftMicroKernels.h), for
// code generation: each grafted contraction's update statement sits under a
// mark "microkernel_<n>" in the schedule tree, and code generation replaces
// that subtree with a call to the scheme's C function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::target {

// A tensor the scheme reads or writes in another layout (an L specifier, a
// zero-padded read): `function` (C source in `source`, `int f(float* to,
// const float* from)`) copies tensor into `buffer`, whose extents are
// `shape`; for the output, `backFunction` copies `buffer` back into tensor.
struct LaidOutOperand {
  std::string tensor;
  std::string buffer;
  std::vector<int64_t> shape;
  std::string function;
  std::string source;
  std::string layout;     // readable (microkernel::layoutText)
  bool input = false;     // a kernel input: transformed once per new value, apart from the kernel proper
  bool output = false;    // the contraction's output (or its epilogue's), written laid out
  bool copiedIn = false;  // output: its accumulators start from its values, copied in first
  std::string backFunction;
};

struct GraftedMicroKernel {
  std::string statement;  // the update statement the function implements
  std::string output;     // the contraction's output tensor
  std::string mark;       // the mark over it in the schedule tree
  std::string function;   // the C function's name
  std::string source;     // its C definition
  // The function's arguments (buffers): the output (the contraction's, or
  // its fused epilogue's), the product's two operands, the epilogue's inputs.
  std::vector<std::string> arguments;
  std::string scheme;  // the scheme it was generated from, for --explain
  std::vector<LaidOutOperand> layouts;
};

struct MicroKernelPlan {
  std::vector<GraftedMicroKernel> kernels;

  const GraftedMicroKernel* ofMark(const std::string& mark) const {
    for (const auto& k : kernels)
      if (k.mark == mark) return &k;
    return nullptr;
  }
  bool grafted(const std::string& statement) const {
    for (const auto& k : kernels)
      if (k.statement == statement) return true;
    return false;
  }
};

}  // namespace tessel::target
