// The innermost (L1) tile of a band whose contraction the register tiler will
// keep in registers (C[m, n] += A[m, k] * B[k, n], n the vector loop): the
// shape of BLIS's macro-kernel instead of Auto Tiling's cube. The register
// tile (rows x vectors of accumulators) holds C over the whole k loop, so C
// needs no room in L1; A is read once per register tile and streams from L2;
// only B's k x n panel is reused from L1, by every register tile of the L1
// tile. So n is the register tile's width, k as long as B's panel fits half
// of L1 (fewer loads and stores of the accumulators), m as many register
// tiles as A's rows of the tile fit a quarter of L2, so that B's panel is
// packed once for all of them. (sg_mmbias 512x768x768 on AVX2: Auto Tiling's
// 32x32x32 cube, 2 rows x 4 vectors, ran at 12.5 ms (min of 250 runs);
// 48x16x256, 6 rows x 2 vectors, at 8.2-8.5 ms. 1024^3 on Zen 4 AVX-512,
// 1 thread: 64x32x128 25.0-25.4 ms, 256x32x128 23.1, 512x32x128 22.7-23.0.)
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

// The register tile the C backend runs best with `lanes`-wide vectors: two
// vectors per row (a row's broadcast feeds two multiply-adds, each shared
// vector of B serves every row) and as many rows as the registers hold.
RegisterTileShape preferredRegisterTile(int lanes);

// The L1 tile sizes (one per band member) for a band holding exactly one
// contraction with one reduction variable, a vector member along which C and
// one operand are contiguous and the other operand does not move, and a row
// member along which that other operand does not move; nothing otherwise.
// The rows are as few tiles as a quarter of L2 allows, their full tiles a
// multiple of `cores` where each core can get one of 8 register tiles (see
// rowHeight in the .cpp).
// `why` gets the reason for --explain.
std::optional<std::vector<int64_t>> contractionL1Tile(const poly::Scop& scop, const tile::BandModel& band,
                                                      const RegisterTileShape& shape, int64_t l1Bytes,
                                                      int64_t l2Bytes, int cores, std::string& why);

}  // namespace tessel::target::cpu
