// Post-tiling fusion (basteln, paper 001 Alg. 2 and 3): producers are
// recomputed inside the tiles of their consumer instead of being fused with
// it before tiling.
//
// The pass runs on a tiled tree. For each child of a sequence whose
// outermost band is a tile band (the consumer), it walks the earlier
// children in reverse order and slices every producer whose values only the
// consumer (and producers already sliced) read: the instances a tile needs
// follow the flow dependences backwards from the tile's instances (the
// upward-exposed data of the tile, h = f o r in the paper), closed under the
// producer's own dependences (its grouping relation: a reduction's init and
// updates come together). The tile band then holds an extension node that
// runs a copy of each sliced producer's subtree on its slice before the
// consumer's point loops, and the producer's own nest keeps only the
// instances no tile recomputes (`reserved`, usually none). Tiles may
// overlap: a 3x3 convolution over a quantized image recomputes a one-pixel
// border per tile.
//
// A consumer without tiles (tiling off, or a nest the tile pass left whole)
// is the paper's equake case: Alg. 2 finds an empty tile domain, and the
// extension goes under the consumer's outer loop instead (split from its
// band), each of whose iterations then acts as a tile of one row. Only a
// parallel outer loop with more loops below it qualifies, and reductions
// are not recomputed per row (their own tiles reuse their operands).
//
// A producer is not sliced when something else reads its values, when it has
// no outer parallel loop (d = 1: a full reduction would run once per tile),
// when its values per iteration of loops it already shares with its readers
// stay in the caches (nothing to gain), or when the recomputation it costs
// or its slices' size passes the limits. The result is checked
// with the dataflow check; on failure the tree stays as it was. The tile
// loop stays parallel when every recomputed tensor element is written once
// (the copies in neighbouring tiles store the same value); otherwise it runs
// in order.
//
// Tiles the `tile` pass made only for this fusion (under a `fusion_tiles`
// mark, TileBands.h) lose the mark here, and are removed when nothing was
// recomputed in them.
#pragma once

#include <isl/cpp.h>

#include <chrono>
#include <string>

#include "poly/Scop.h"
#include "support/Remarks.h"
#include "target/Promotion.h"

namespace tessel::fuse {

struct BastelnOptions {
  // The largest share of a producer's executions that may be recomputations
  // (1 - instances / executions); 1 means "fuse whatever it costs".
  double redundancyLimit = 0.4;
  // Promotion's decisions (its marks are in the tree): a producer whose tiles
  // read a transposed copy would read the operand in place when recomputed.
  const target::PromotionPlan* promotions = nullptr;
  // Wall time one fusion's dataflow check may take (0: no limit; the check
  // also has an isl operation quota). A check stopped by either refuses that
  // fusion: small tiles over many statements made one check run 38 s.
  std::chrono::milliseconds checkTimeLimit{0};
  // The most bytes the slices of one tile may write together (0: no limit;
  // ignored when the redundancy limit is 1): beyond the caches a recomputed
  // slice saves no memory traffic.
  int64_t sliceBytesLimit = 0;
  // Threads the kernel runs on: a nest moved whole into another's tiles
  // (Alg. 4's identical case) runs one tile per thread, so the tiles must
  // number at least this many.
  int cores = 1;
};

// Adds to `remarks` one remark per fused producer (or why one was not fused),
// its "action" ("recomputed", "moved", "tiles-removed"; missed:
// "not-recomputed", "not-moved", "no-fusion") and its "consumer" and "place".
isl::schedule fuseIntoTiles(const poly::Scop& scop, const isl::schedule& schedule,
                            const BastelnOptions& options, Remarks& remarks);

}  // namespace tessel::fuse
