// Reference interpreter: evaluates a te::Program point by point. It is the
// correctness oracle for every generated kernel, so it follows the generated C
// (int32 wrap, x/0 = 0, NaN-propagating min/max, rounding at the store) except
// that floating-point subexpressions are computed in double. Where a result
// jumps (comparisons, casts to integers, floor, ceil, fmod) the operands are
// first rounded to the precision the kernel computes in, so that such jumps
// happen where the kernel's do.
#pragma once

#include <map>
#include <string>

#include "runtime/Buffer.h"
#include "tessel/te.h"

namespace tessel::runtime {

// Runs `program` (ranges already inferred) on `inputs`, one Buffer per input
// tensor with the declared dtype and shape, and returns every output tensor.
// `inputs` may also hold the initial contents of an output (what a `+=`
// without `!` accumulates into); other outputs and all temporaries start at 0.
// Throws UserError on missing or mismatched buffers and on out-of-range reads.
// `magnitudes`, when given, receives the largest finite |value| of every
// tensor, temporaries included (the checker scales its tolerances by them).
std::map<std::string, Buffer> interpret(const te::Program& program,
                                        const std::map<std::string, Buffer>& inputs,
                                        std::map<std::string, double>* magnitudes = nullptr);

}  // namespace tessel::runtime
