// The names of the marks passes put in schedule trees, in one place: the
// passes that set a mark, the passes that read it and code generation agree
// on these spellings and no others. docs/passes.md says which pass sets each.
#pragma once

#include <string>

namespace tessel::schedule {

// Loops OpenMP runs in parallel (mark-parallel), and the loop a parallel one
// may collapse with.
inline constexpr const char* kParallelMark = "parallel";
inline constexpr const char* kCollapsibleMark = "collapsible";
// The loop that runs in parallel instead of the parallel loop above it in a
// piece of the code where that loop has one iteration (a partial tile, which
// the AST generator separates from the full ones and runs once).
inline constexpr const char* kParallelFallbackMark = "parallel_fallback";
// "tile_L2": the tile loops of that cache level (tile); a promotion site's
// copies: "promote_0", ... (promote); a grafted micro-kernel: "microkernel_0", ...
inline constexpr const char* kTileMarkPrefix = "tile_";
inline constexpr const char* kPromotionMarkPrefix = "promote_";
inline constexpr const char* kMicroKernelMarkPrefix = "microkernel_";
// Over the tile mark of tiles made only for basteln's fusion (tile); basteln
// removes it, and the tiles too when nothing was recomputed in them.
inline constexpr const char* kFusionTilesMark = "fusion_tiles";
// Loops to vectorize: independent iterations, or a reduction (mark-vector);
// the loop above one whose strided read is transposed through registers.
inline constexpr const char* kVectorMark = "vector";
inline constexpr const char* kVectorReductionMark = "vector_reduction";
inline constexpr const char* kTransposeBlockMark = "transpose_block";
// Loops the register tiler unrolls and jams (mark-unroll-jam).
inline constexpr const char* kUnrollJamMark = "unroll_jam";

inline bool hasMarkPrefix(const std::string& mark, const char* prefix) { return mark.rfind(prefix, 0) == 0; }
inline bool isTileMark(const std::string& mark) { return hasMarkPrefix(mark, kTileMarkPrefix); }
inline bool isPromotionMark(const std::string& mark) { return hasMarkPrefix(mark, kPromotionMarkPrefix); }
inline bool isMicroKernelMark(const std::string& mark) { return hasMarkPrefix(mark, kMicroKernelMarkPrefix); }

}  // namespace tessel::schedule
