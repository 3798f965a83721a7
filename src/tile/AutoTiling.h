// Auto Tiling (AKG §4.2): tile sizes for one band, chosen level by level from
// the innermost buffer outwards by a greedy search that minimizes the modelled
// data movement per unit of computation,
//     (warm-up + bytes of the tile's data tiles) / statement instances,
// under the constraint that the data tiles fill at most half of the level's
// capacity (the other half is left for the next tile's data, as for double
// buffering). Each step doubles the one member whose doubling lowers the cost
// most; the search stops when no doubling fits or helps.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tile/BandModel.h"

namespace tessel::tile {

struct CacheLevel {
  std::string name;  // "L1", "L2", ...
  int64_t capacityBytes = 0;
  int64_t lineBytes = 64;
  int sharedBy = 1;  // logical CPUs sharing one instance (hyperthreads count)
};

struct LevelSizes {
  std::string level;
  std::vector<int64_t> sizes;  // one per band member
  TileCost cost;
};

struct AutoTilingResult {
  std::vector<LevelSizes> levels;  // outermost first; empty when tiling does not pay
  std::string why;                 // the model's numbers, for --explain
};

// `levels` are the caches, fastest first. The outermost chosen level keeps at
// least `cores` tiles along a leading coincident member when the band has that
// many iterations there (or along the next one, see below), so parallel loops
// keep their parallelism.
// "64x32x32": tile sizes or extents, one per band member, for explanations.
std::string sizesText(const std::vector<int64_t>& sizes);

// `innermost`, when given, fixes the first level's sizes (a target's register
// tiles want that shape); the outer levels grow from it as usual.
// `leadingMayStayWhole`: tiles may keep the leading member whole when the
// next split member, coincident, gives each core tiles and shares out evenly
// instead; the cost model then chooses between the shapes.
AutoTilingResult autoTile(const BandModel& band, const std::vector<CacheLevel>& levels, int cores,
                          const std::vector<int64_t>* innermost = nullptr, bool leadingMayStayWhole = false);

// What fusionTile knows of the producers basteln will recompute in the tiles.
struct FusionSlices {
  std::set<std::string> producerArrays;  // what the producers recomputed in the tiles write
  double redundancyLimit = 0.4;          // basteln's limit on the share of their executions recomputed
};

// Tiles for a band whose producers post-tiling fusion (basteln, paper 001
// Alg. 2) will recompute in its tiles, at `level` (the largest private
// cache): the band's own data tiles fill at most `limitBytes`, the rest of
// the level being left to the producers' slices. Unlike autoTile, the tiles
// need not pay on their own: the fusion they enable is their gain. Inner
// members stay whole while they fit (whole rows keep vector loops long, the
// producers' slices contiguous and the prefetchers' streams long); outer
// members then grow by doubling while the data movement per instance (halo
// included) falls. Where the halo of such tiles would make basteln recompute
// more than its limit of a producer (a row's data near the limit leaves them
// one row tall: Harris's 3x3 sums), tiles grown the same way from rows of a
// few cache lines are taken instead if they recompute less. Empty when the
// whole band fits or no tile fits.
AutoTilingResult fusionTile(const BandModel& band, const CacheLevel& level, int cores, double limitBytes,
                            const FusionSlices& slices);

}  // namespace tessel::tile
