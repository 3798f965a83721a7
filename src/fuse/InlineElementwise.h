// Elementwise inlining (paper 001 Alg. 5; `--inline on`, off by default): a
// temporary that one elementwise stage writes is substituted into its
// readers, and its stage and array disappear, when that costs no
// recomputation. The paper's rule is "one consumer, or consumers that read
// disjoint regions"; here it is applied per element, since a CPU pays for
// every recomputation: each element of the temporary is read at most once
// over the whole program (a stencil's or a broadcast's reader keeps it).
//
// It runs on the program the compiler lowers (after widening accumulators),
// before extraction, so that the schedule never sees the temporary. The
// conditions that make it exact:
// - the stage is `T(i...) = e` (no reduction, no `where exists`), the only
//   writer of T, and reads neither T nor any tensor written after it up to
//   its last reader (e's reads see the same values at the reader);
// - every reader comes after it, reads T once in its expression, with affine
//   indices, at elements the stage writes;
// - the stored value is rounded to T's type: the substitute is cast(T, e)
//   whenever e's type differs, and always for f16 and bf16, whose arithmetic
//   runs in f32 until a store or a cast rounds it.
#pragma once

#include <isl/cpp.h>

#include <string>

#include "tessel/te.h"

namespace tessel::fuse {

// `explain` gets a line per temporary inlined or kept (elementwise ones only).
te::Program inlineElementwise(isl::ctx ctx, const te::Program& program, std::string& explain);

}  // namespace tessel::fuse
