// The innermost (L1) tile of a band whose contraction the register tiler will
// keep in registers (C[m, n] += A[m, k] * B[k, n], n the vector loop): the
// shape of BLIS's macro-kernel instead of Auto Tiling's cube. The register
// tile (rows x vectors of accumulators) holds C over the whole k loop, so C
// needs no room in L1; A is read once per register tile, a row at a time in
// long runs the prefetchers follow; B's k x n panel, packed, is read in order
// by every register tile of the L1 tile. So n is the register tile's width,
// k as long as B's panel fits a quarter of L2 (the accumulators loaded and
// stored once per long reduction), m as many rows as A's rows of the tile fit
// L2, so that B's panel is packed once for all of them. (1024^3 on Zen 4
// AVX-512, 1 thread: 8 rows x 2 vectors in 512x32x128 tiles 22.7-23.0 ms;
// 6 rows x 4 vectors in 480x64x256 tiles 21.4, in 480x64x1024 tiles 20.9,
// with B's panel packed 20.4; oneDNN 20.6-20.8.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "poly/Scop.h"
#include "tile/BandModel.h"

namespace tessel::target::cpu {

struct RegisterTileShape {
  int lanes = 8;          // f32 lanes of a vector
  int vectorsPerRow = 2;  // accumulator vectors per row
  int rows = 6;           // rows of accumulators
};

// The most bytes of B's k x n panel: a share of L2 (`l2Bytes`, this core's
// share; 0: none), half of L1 without one. Promotion packs panels up to this
// size under the contraction's L1 tiles.
int64_t contractionPanelBytes(int64_t l1Bytes, int64_t l2Bytes);

// The register tile the C backend runs best with `lanes`-wide vectors for a
// product of `height` rows of `width` elements over a reduction of `depth`:
// four vectors per row on AVX-512 over long reductions, many rows, or where
// four vectors span the row, two otherwise (a row's broadcast feeds that
// many multiply-adds, each shared vector of B serves every row), and as many
// rows as the registers hold: 6 x 4 loads 10 vectors per 24 multiply-adds,
// 8 x 2 10 per 16, but on small products 8 x 2's fewer accumulators and
// narrower panels win.
RegisterTileShape preferredRegisterTile(int lanes, int64_t height, int64_t width, int64_t depth);

// The L1 tile sizes (one per band member) for a band holding exactly one
// contraction with one reduction variable, a vector member along which C and
// one operand are contiguous and the other operand does not move, and a row
// member along which that other operand does not move; nothing otherwise.
// Register tiles of preferredRegisterTile's shape for `lanes`-wide vectors
// and the contraction's reduction. The rows are as tall as L2 allows and
// balanced between `cores` (see rowHeight in the .cpp).
// `why` gets the reason for --explain.
std::optional<std::vector<int64_t>> contractionL1Tile(const poly::Scop& scop, const tile::BandModel& band,
                                                      int lanes, int64_t l1Bytes, int64_t l2Bytes, int cores,
                                                      std::string& why);

}  // namespace tessel::target::cpu
