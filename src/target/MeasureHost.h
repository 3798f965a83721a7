// Measures what detection can only compute or not know: the fp32 FMA peak
// (one core, all cores), the DRAM bandwidth (STREAM-like triad on arrays far
// larger than the caches, one core and all cores) and the L2 bandwidth (triad
// resident in L2, one core). Medians of several runs; takes a few seconds. The benchmark
// code is C compiled at run time by the kernel compiler (-march=native,
// OpenMP), so the tessel binary itself needs no AVX-512.
#pragma once

#include <ostream>

#include "target/Hardware.h"

namespace tessel::target {

// Overwrites the peaks (peakSource "measured") and the bandwidths of the L2
// and DRAM levels (bandwidthSource "measured"; all cores and one core) of
// `hw`, which must describe this machine. Writes one line per measurement to
// `log` when given.
void measureHost(Hardware& hw, std::ostream* log = nullptr);

}  // namespace tessel::target
