// Promotion of reused operand tiles into contiguous local buffers (AKG's
// storage management, paper 000 §4.4; the packing of GotoBLAS-style GEMM):
// under the innermost tile loops of each tiled band, every kernel input whose
// footprint in a tile is read several times per element, is not one
// contiguous range already, and fits half the tiles' memory level, gets
// copied into a per-thread buffer of its footprint's rectangular box (isl's
// simple fixed box hull of the tile's reads) at the start of each tile. The
// pass only decides and marks the site ("promote_<n>", described in `plan`);
// AST generation places the boxes and LIR lowering emits the copies.
#pragma once

#include <isl/cpp.h>

#include <string>
#include <vector>

#include "poly/Scop.h"
#include "support/Remarks.h"
#include "target/Promotion.h"
#include "tile/AutoTiling.h"

namespace tessel::target::cpu {

// A copy costs a load and a store per element, plus its loop overhead per
// tile; below this many reads per element of the footprint it costs more
// than it saves (a 3x3 convolution's input rows, read 12 times per element
// under 4-channel tiles, ran 25% slower copied).
inline constexpr double kMinPromotionReuse = 16;
// Buffers live on the stack of the thread that runs the tile.
inline constexpr int64_t kMaxPromotionSiteBytes = 256 * 1024;

struct PromotionOptions {
  std::vector<tile::CacheLevel> levels;  // the machine's caches: the budget of each tile level
  // Promote every legal footprint, whatever its reuse, layout and size
  // (within the stack limit): exercises the copies in tests and fuzzing.
  bool ignoreCost = false;
  // Under the innermost level's tiles, footprints up to this size fit too
  // (within the stack limit): a contraction's B panel, which each register
  // tile reads in order from L2 (contractionPanelBytes). Every innermost
  // site gets it, but only a contraction's L1 tiles outgrow half of L1:
  // Auto Tiling sizes the others' data within it.
  int64_t panelBytes = 0;
};

// The bytes promotion may copy under the tiles of `level`: half of it, at
// the innermost level at least `panelBytes`, at most the stack limit.
int64_t promotionBudget(const PromotionOptions& options, const std::string& level);

isl::schedule promoteOperands(const poly::Scop& scop, const isl::schedule& schedule,
                              const PromotionOptions& options, PromotionPlan& plan, Remarks& remarks);

}  // namespace tessel::target::cpu
