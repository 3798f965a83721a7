// One instance of a Scop statement as loop IR: binds the statement's index
// variables to the given values and stores the stage's value (init, update or
// plain assignment) into the output tensor.
#pragma once

#include <map>

#include "lir/Lir.h"
#include "poly/Scop.h"

namespace tessel::lir {

// Name of the lir variable holding te index variable `v`.
std::string indexVarName(const std::string& v);

// A tensor read from a promoted copy of its footprint in the current tile:
// its element e is element e - offsets of `buffer`, row-major over `box`.
// A contracted temporary is written there too.
struct RedirectedTensor {
  std::string buffer;
  std::vector<Expr> offsets;  // one per tensor dimension
  std::vector<int64_t> box;
  bool writes = false;
  std::vector<int> layout;  // the buffer's dimensions as tensor dimensions (empty: the same order)
};
using RedirectedTensors = std::map<std::string, RedirectedTensor>;  // by tensor name

// The tensor dimensions a promoted buffer holds, outermost first: `layout`,
// or 0..rank-1 when it is empty.
std::vector<size_t> bufferDims(const std::vector<int>& layout, size_t rank);

// Affine reads of the tensors in `promoted` go to their buffers, and so do
// the writes of contracted temporaries. `checksIndices` is set when the instance
// reads through an index checked at run time (indirect, or not provable in range under its guard).
Stmt lowerStatementInstance(const poly::Scop& scop, const poly::Statement& statement,
                            const std::vector<Expr>& dimValues, const RedirectedTensors& promoted,
                            bool& checksIndices);

}  // namespace tessel::lir
