// What micro-kernel grafting decided (target/cpu/GraftMicroKernels.h), for
// code generation: each grafted contraction's update statement sits under a
// mark "microkernel_<n>" in the schedule tree, and code generation replaces
// that subtree with a call to the scheme's C function.
#pragma once

#include <string>
#include <vector>

namespace tessel::target {

inline constexpr const char* kMicroKernelMarkPrefix = "microkernel_";

struct GraftedMicroKernel {
  std::string statement;  // the update statement the function implements
  std::string mark;       // the mark over it in the schedule tree
  std::string function;   // the C function's name
  std::string source;     // its C definition
  // The function's arguments (buffers): the output (the contraction's, or
  // its fused epilogue's), the product's two operands, the epilogue's inputs.
  std::vector<std::string> arguments;
  std::string scheme;  // the scheme it was generated from, for --explain
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
