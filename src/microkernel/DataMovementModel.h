// The analytical data-movement model that ranks schemes (paper 002 §2.2,
// reconstructed as in IOOpt): at every loop level of a bound scheme, each
// tensor's footprint (a box per subscript); for each cache, the outermost
// level whose footprints fit in it; the data the cache then receives is the
// footprint there, fetched again on every iteration of the loops above it
// from the innermost one that moves the tensor outwards (loops in between
// reuse it). The output counts twice (read and written back), and twice more
// when the kernel writes it laid out (the copy back).
#pragma once

#include <string>
#include <vector>

#include "microkernel/BoundScheme.h"

namespace tessel::microkernel {

struct CacheLevel {
  std::string name;
  double bytes = 0;        // capacity
  double costPerByte = 1;  // what filling it costs, relative (the inverse of the next level's bandwidth)
};

struct DataMovement {
  std::vector<double> bytesPerLevel;  // into each cache level, in the order given
  double cost = 0;                    // sum of bytes x cost per byte
  // Iterations of the reduction loops right above the register tile: how long
  // its accumulators stay in registers (paper 002 §2.4's second criterion).
  double accumulationLength = 1;
};

DataMovement estimateDataMovement(const BoundScheme& scheme, const std::vector<CacheLevel>& levels);

}  // namespace tessel::microkernel
