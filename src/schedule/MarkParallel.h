// Marks, on every path of the tree, the outermost band whose first member
// with a loop (members of a single value get none) is coincident as a
// parallel loop: the band is split around that member and a "parallel" mark
// is inserted above it. Code generation turns the marked loop into an OpenMP
// loop. (A band whose first such member carries a dependence is not split to
// reach a later coincident member.) The first loop of the first band on each
// path below a parallel loop gets a "collapsible" mark when it is coincident
// too and the parallel loop's iterations do not divide evenly among
// `threads` (at least a tenth more turns than an even share): code
// generation then runs the two as one OpenMP loop (collapse(2)) where they
// are perfectly nested and rectangular, so that unsharp's 3 channels do not
// leave one of 2 threads idle. Only then: a collapsed nest can run slower per
// thread (transbmm's 8 x 12 batches and heads: 30%, cause not found).
// That first loop below, when coincident, always gets a "parallel_fallback"
// mark: where the parallel loop has one iteration in a piece of the AST (a
// partial tile, separated from the full ones and run once), the fallback
// loop runs in parallel instead (lir/AstToLir.cpp); under a parallel loop it
// stays sequential.
#pragma once

#include <isl/cpp.h>

#include "poly/Scop.h"
#include "schedule/Marks.h"
#include "support/Remarks.h"

namespace tessel::schedule {

// Below this much work (poly::estimatedWork) a kernel runs on one thread:
// OpenMP's fork and join cost more than a second thread saves (measured in
// docs/performance.md, "Small kernels run serially": an elementwise add of
// 65536 elements and a 48 x 48 x 256 matmul ran faster serially than on 2
// threads, an add of 131072 elements slower).
inline constexpr double kMinParallelWork = 100000;

// Marks nothing, with a missed remark, when the scop's work is below
// kMinParallelWork and `threads` > 1.
isl::schedule markParallelLoops(const isl::schedule& schedule, const poly::Scop& scop, int threads,
                                Remarks& remarks);

}  // namespace tessel::schedule
