// A serial copy of the parallel loops of small kernels. A parallel region
// costs OpenMP's fork and join even when it runs on one thread (libgomp
// still builds a team of one: a microsecond or more per region, measured in
// docs/performance.md), which is a visible share of a kernel of a few
// microseconds. A kernel whose work (Kernel::work) is below
// kMaxWorkForThreadVersions gets each parallel loop twice:
//   if (tessel_threads > 1) <the parallel loop> else <the same loop, plain>
// with tessel_threads the thread count the caller gave OpenMP, read once
// per call (Kernel::readsThreadCount). Larger kernels keep one copy: the
// region's cost is lost in their time and the copy doubles their C.
#pragma once

#include "lir/Lir.h"
#include "support/Remarks.h"

namespace tessel::lir {

inline constexpr double kMaxWorkForThreadVersions = 1 << 20;
// The variable the C backend binds to the thread count when the kernel reads it.
inline constexpr const char* kThreadCountVar = "tessel_threads";

Kernel versionParallelLoopsByThreads(const Kernel& kernel, Remarks& remarks);

}  // namespace tessel::lir
