// The tiling pass: tiles permutable bands for the memory levels of the
// machine, with the sizes of a user's tiling policy (TilePolicy.h) where it
// names the band's statements, otherwise with Auto Tiling (AutoTiling.h).
// Several levels make nested tile bands (L2 tiles of L1 tiles of points);
// each tile band sits under a mark "tile_<level>" so later passes (promotion)
// and dumps can tell them apart. Tiling keeps every schedule valid: a
// permutable band may be tiled with any sizes.
#pragma once

#include <isl/cpp.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "poly/Scop.h"
#include "support/Remarks.h"
#include "tile/AutoTiling.h"
#include "tile/TilePolicy.h"

namespace tessel::tile {

struct TilingOptions {
  bool autoTiling = true;  // tile bands the policy does not cover
  TilePolicy policy;
  std::vector<CacheLevel> levels;  // the machine's caches, fastest first
  int cores = 1;
  // Post-tiling fusion follows (basteln): a band that reads what earlier
  // children of its sequence compute gets tiles for their slices even where
  // its own reuse would not pay for them (paper 001 Alg. 2 tiles the outputs).
  bool fusionTiles = false;
  // The largest share of a producer's executions basteln recomputes (its
  // --basteln-redundancy): fusion tiles whose halo would pass it are shaped
  // to stay under it where they can.
  double fusionRedundancy = 0.4;
  // Outputs the code generator writes with non-temporal stores (past the
  // caches): tiles need no room for them.
  std::set<std::string> streamedOutputs;
  // The target's innermost tile for a band, where its code generation wants
  // one shape there (register tiles of a contraction); Auto Tiling then
  // sizes only the outer levels. Appends its reasons to `why`.
  std::function<std::optional<std::vector<int64_t>>(const BandModel& band, std::string& why)> innermostTile;
};

// Adds one remark per band it considers to `remarks`: applied where the band
// is tiled, missed (with its "reason") where not, the model's numbers in its
// message. A policy that names a statement, buffer or dimension that does not
// exist is a UserError located in the policy text.
isl::schedule tileBands(const poly::Scop& scop, const isl::schedule& schedule, const TilingOptions& options,
                        Remarks& remarks);

// "tile_L2": the mark over the tile loops of that level.
std::string tileMarkName(const std::string& level);

}  // namespace tessel::tile
