// C for a loop the vectorizer gave a lane count: the loop steps by whole
// vectors with unmasked loads and stores, then the last partial vector (if
// any) runs the body once more under a tail mask (masked loads and stores,
// no scalar remainder loop), reductions into one element keep one
// accumulator vector each and are combined after the loop. The operations
// are the tessel_v16_* / tessel_v8_* functions of the vector prelude
// (src/abi/VectorPrelude.h); uniform sub-expressions are computed as scalars
// by the scalar emitter and broadcast.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "lir/IndexRanges.h"
#include "lir/Lir.h"

namespace tessel::backend {

struct ScalarC {
  std::function<std::string(const lir::Expr&)> expr;      // a scalar value or index expression
  std::function<std::string(const lir::Stmt&)> store;     // a whole scalar store statement
  std::function<std::string(const std::string&)> buffer;  // the C name of a tensor
  std::function<te::DType(const std::string&)> type;      // a tensor's element type
};

// `ranges`: the values of the variables of the loops and lets around the
// loop, which let conditions that hold on every lane go unmasked.
// `pragma`: the OpenMP line to put right before the loop ("" for none).
void emitVectorLoop(std::ostream& os, const lir::Stmt& loop, int depth, const ScalarC& scalar,
                    const lir::IndexRanges& ranges, const std::string& pragma);
// A loop run in blocks of its vector loop's lanes (lir::StmtNode::transposeLanes):
// its reads contiguous along the block are loaded as rows and transposed in registers.
void emitTransposeBlock(std::ostream& os, const lir::Stmt& block, int depth, const ScalarC& scalar,
                        const lir::IndexRanges& ranges, const std::string& pragma);

}  // namespace tessel::backend
