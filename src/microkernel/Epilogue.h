// An elementwise statement right after a contraction (bias + ReLU, GELU, a
// scale): it reads the contraction's temporary once per element, at the
// same coordinates, and nothing else reads that temporary. The micro-kernel
// then applies it to each output tile while the tile is still in registers
// and L1 (paper 002 through AKG's fused epilogues), so the temporary, its
// initialization and a pass over memory disappear.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "microkernel/Contraction.h"

namespace tessel::microkernel {

// One read of another tensor (an input) in the epilogue.
struct EpilogueRead {
  const te::ExprNode* node = nullptr;  // in Epilogue::rhs
  TensorAccess access;                 // over the contraction's dimensions
};

struct Epilogue {
  int stage = 0;
  TensorAccess output;              // what it writes, over the contraction's output dimensions
  te::Expr rhs;                     // its right-hand side, over its own index variables
  std::string contractionTensor;    // the temporary its rhs reads (the contraction's value)
  std::vector<std::string> vars;    // its index variables, the contraction's output dimensions in order
  std::vector<EpilogueRead> reads;  // its reads of other tensors (inputs)

  std::vector<std::string> tensors() const;  // those tensors, each once, in order of first read
};

struct EpilogueRecognition {
  std::optional<Epilogue> epilogue;
  std::string whyNot;  // when there is none: a phrase
};
EpilogueRecognition recognizeEpilogue(const te::Program& program, const Contraction& contraction);

// The C expression of the epilogue at one element: `value` is the
// contraction's value there, `element(k)` the C expression of reads[k]'s.
std::string epilogueC(const Epilogue& epilogue, const std::string& value,
                      const std::function<std::string(size_t)>& element);

}  // namespace tessel::microkernel
