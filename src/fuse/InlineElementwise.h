// Elementwise inlining (paper 001 Alg. 5; `--inline on`): a
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
//
// A second rule recomputes where the paper would store (`--inline cheap`, the
// default, and `on`): a temporary computed from the program's inputs alone
// by a few cheap operations (no division, no math function), larger than the
// largest private cache, is inlined even when its elements are read several
// times, as Halide inlines pointwise stages: a round trip through memory
// costs more than a few recomputed operations on inputs still in cache
// (interpolate's premultiplied input: 16 MiB written and read twice, 12.7 ->
// 8.7 ms at 1 thread). The reads per element are bounded (at most 8, and at
// most 16 recomputed operations per element), so a convolution's input, read
// once per tap and output channel, is never recomputed.
#pragma once

#include <isl/cpp.h>

#include <cstdint>
#include <string>

#include "support/Remarks.h"
#include "tessel/te.h"

namespace tessel::fuse {

struct InlineOptions {
  bool readOnce = false;            // Alg. 5: elements each read once (`--inline on`)
  int64_t recomputeAboveBytes = 0;  // the cheap rule for temporaries above this size (0: off)
};

// `remarks` gets one per temporary inlined (applied: its "readers", the
// "rule", and under the cheap rule its "reads_per_element"), and under
// `readOnce` one per elementwise temporary kept (missed, with its "reason").
te::Program inlineElementwise(isl::ctx ctx, const te::Program& program, const InlineOptions& options,
                              Remarks& remarks);

}  // namespace tessel::fuse
