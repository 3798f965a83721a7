// One stage of the reference interpreter: compiles the right-hand side into a
// small tree of typed nodes (index arithmetic folded into affine forms, reads
// proven in bounds flattened to one offset) and runs it over the stage's
// domain. Semantics are documented in Interpreter.h.
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/te.h"

namespace tessel::runtime {

// Every tensor lives as doubles during interpretation; each stored value is
// already rounded to the tensor's dtype, so reads are exact.
struct TensorData {
  const te::TensorDecl* decl = nullptr;
  std::vector<int64_t> strides;
  std::vector<double> values;
};

// Runs `stage`, reading and writing `tensors` (every tensor of the program).
void runStage(const te::Stage& stage, std::vector<TensorData>& tensors);

}  // namespace tessel::runtime
