// Paper 004's non-linear optimizer (Algorithm 2): per statement, the
// strides of every access along every iterator; innermost loop orders
// ("scenarios") scored by vectorizable stores and loads, short strides and
// how well a loop fills the vector (or thread) width; the best scenarios
// turned into a constraint tree (ConstraintTree.h) for Tessel's scheduler:
// fusion variants first, then the scenarios alone, then relaxed ones that
// steer only the costliest statement, sharing prefixes.
//
// Gaps the paper leaves, settled here:
// - Strides are in elements, linearized over each tensor's row-major
//   layout. Stride 0 (a broadcast) counts as vectorizable but not in M
//   (the smallest stride); with no nonzero stride, w3/M is 0.
// - The width term is w5 * min(N, L) / L: it favours loops that fill the
//   width L (the prose's intent; the printed L/N grows as N shrinks).
// - The count of accesses at the shortest stride (w4) is scaled by
//   min(1, L / stride): accesses that share a long stride (BERT's batch
//   dimension, 98304 elements in both tensors) gain nothing from it, and
//   counting them in full placed that loop inside the heads loop, 1.5x
//   slower than isl's order (bench/suites/layout.suite).
// - Eight scenarios arise as a beam: per statement the two best loops at
//   each of up to three innermost positions (up to 8 orders), and the
//   statements' orders combined, best total cost first, 8 kept.
// - Accesses that are not affine (data-dependent, divisions) are left out
//   of the costs, and reductions' initializations are not steered (they
//   ride with their updates).
// - The stride terms (w3, w4) leave out tensors small enough to stay in
//   the first cache level (ScenarioTarget::residentBytes): a 64-channel
//   scale read at stride 16 along NCHWc16's channel blocks put that loop
//   inside h, 1.1-1.4x slower than isl's order (layout suite,
//   nchw_to_nchwc16_bias). They still count as vector loads.
// The target (vector width, the limit L) comes from the hardware
// description; the algorithm does not know whether it is SIMD lanes or CUDA
// vector types.
#pragma once

#include <string>

#include "poly/Scop.h"
#include "schedule/ConstraintTree.h"

namespace tessel::schedule {

struct ScenarioTarget {
  int widthLimit = 16;  // L: the width a scenario's loops should fill (f32 lanes of the SIMD unit)
  // Tensors this small stay in the first cache level whatever the loop
  // order: their strides do not count (a per-channel scale read along the
  // channel blocks would otherwise pull that loop inward). 0: all count.
  int64_t residentBytes = 0;
  int maxScenarios = 8;    // paper 004: 8
  int innermostLoops = 3;  // loops per scenario: the vector loop and up to two more
};

struct ScenarioWeights {
  double store = 5, load = 3, shortStride = 1, shortStrideCount = 1, width = 1;  // w1..w5
};

struct VectorScenarios {
  ConstraintTree tree;
  std::string explanation;  // the scenarios, their costs, the variants, for --explain
};

VectorScenarios buildVectorScenarios(const poly::Scop& scop, const ScenarioTarget& target,
                                     const ScenarioWeights& weights = {});

}  // namespace tessel::schedule
