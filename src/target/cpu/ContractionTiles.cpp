#include "target/cpu/ContractionTiles.h"

#include <algorithm>
#include <sstream>

#include "lir/RegisterTile.h"
#include "target/cpu/AccessStride.h"
#include "tile/AutoTiling.h"

namespace tessel::target::cpu {

namespace {

// Register tiles per L1 tile along the rows without an L2 to size them by:
// each reuses B's panel from L1, while A's rows of the whole L1 tile stay in
// the next cache (48 rows x 256 f32: 48 KiB).
constexpr int64_t kRegisterTilesWithoutL2 = 8;

// The share of L2 that B's panel may take: each register tile reads it once,
// in order, so it streams through L1 from L2, and a deep panel loads and
// stores each register tile's accumulators once per many multiply-adds.
constexpr int64_t kL2ShareForPanel = 4;

// Reductions at least this long, or at least this many rows, get 4 vectors
// per row on AVX-512; shorter products 2 (8 rows), unless the row is one
// 4-vector panel wide. Measured, 1 thread, 8 x 2 against 6 x 4: 16x128x128
// 5.7 µs against 6.4, 96x128x128 28.9 against 30.2, 64x512x512 equal,
// 128x1024x256 0.661 ms against 0.646, 32x1024x1024 0.79 against 0.71,
// 2048^3 186 ms against 164; sg_bmmtrans (96 products of 128x128 by
// 128x64) 2.65 ms against 2.28, sg_transbmm (96 of 128x64 by 64x128) 2.88
// against 2.74.
constexpr int64_t kMinDepthForWideTiles = 256;
constexpr int64_t kMinHeightForWideTiles = 128;

// Shorter reductions leave too little work per load and store of the
// accumulators to be worth shaping the tile for.
constexpr int64_t kMinPanelDepth = 16;

// The rows of the L1 tile: at most as many as A's rows fit L2 (beside B's
// panel: they stream from L2 or L3 at a byte or so per cycle, while taller
// tiles pack B's panel fewer times; with 1024-deep panels, 1 thread, `tessel
// run --tiles`: 2048^3 at 120 rows 180 ms, 240 rows 168, 480 rows 164;
// 5124x700x2048 at 240 or 360 rows 151 ms, 480 rows 182), at least 8
// register tiles where the rows allow; the tallest height whose busiest core
// gets at most 3% more register tiles than the best balanced height's (a
// tile's last rows short of a register tile's are a smaller one, as slow;
// taller tiles pack B's panel fewer times). The AST generator isolates the
// full tiles, which OpenMP's static schedule deals out in runs, from the
// partial one, which runs after them with its column tiles shared among the
// cores (schedule/MarkParallel.h's fallback loop; where rows are tiled at
// L2 alone that loop is not found yet and the partial tile runs on one
// core). (256 rows on 2 cores: 128 + 128, not 126 + 126 + 4.)
int64_t rowHeight(int64_t extent, int rows, int64_t depth, int64_t l2Bytes, int cores) {
  int64_t shortest = int64_t{rows} * kRegisterTilesWithoutL2;
  int64_t tallest = shortest;
  if (l2Bytes > 0) tallest = std::max(tallest, l2Bytes / (depth * 4));
  int64_t share = std::max(cores, 1);
  if (extent <= tallest && extent < share * shortest) return extent;
  auto registerTiles = [&](int64_t h) { return (h + rows - 1) / rows; };
  auto busiest = [&](int64_t h) {
    int64_t full = extent / h, partial = extent % h;
    return (full + share - 1) / share * registerTiles(h) + (registerTiles(partial) + share - 1) / share;
  };
  // (At most a few thousand heights: `tallest` is L2's f32 over the depth.)
  int64_t first = std::min(tallest, extent), last = std::min(shortest, extent);
  int64_t fewest = busiest(first);
  for (int64_t h = first; h >= last; --h) fewest = std::min(fewest, busiest(h));
  for (int64_t h = first; h >= last; --h)
    if (100 * busiest(h) <= 103 * fewest) return h;
  return last;
}

}  // namespace

int64_t contractionPanelBytes(int64_t l1Bytes, int64_t l2Bytes) {
  return l2Bytes > 0 ? std::max(l1Bytes / 2, l2Bytes / kL2ShareForPanel) : l1Bytes / 2;
}

RegisterTileShape preferredRegisterTile(int lanes, int64_t height, int64_t width, int64_t depth) {
  RegisterTileShape shape;
  shape.lanes = lanes;
  // A row of 33 to 64 columns is one panel of 4 vectors (B read in place,
  // A once) but two of 2.
  bool onePanel = width > 2 * lanes && width <= 4 * lanes;
  bool wide = depth >= kMinDepthForWideTiles || height >= kMinHeightForWideTiles || onePanel;
  shape.vectorsPerRow = lanes == 16 && wide ? 4 : 2;
  shape.rows = lir::maxRegisterTileRows(lanes, shape.vectorsPerRow);
  return shape;
}

std::optional<std::vector<int64_t>> contractionL1Tile(const poly::Scop& scop, const tile::BandModel& band,
                                                      int lanes, int64_t l1Bytes, int64_t l2Bytes, int cores,
                                                      std::string& why) {
  const poly::Statement* update = nullptr;
  for (const auto& name : band.statements()) {
    const poly::Statement& st = scop.statement(name);
    if (st.kind != poly::StatementKind::Update) continue;
    if (update) return std::nullopt;  // two contractions: no one shape serves both
    update = &st;
  }
  if (!update) return std::nullopt;
  std::vector<isl::map> writes, operands;
  update->writes.foreach_map([&](isl::map m) { writes.push_back(m); });
  if (writes.size() != 1) return std::nullopt;
  std::string written = writes[0].range_tuple_id().name();
  const te::TensorDecl* decl = scop.program->findTensor(written);
  if (!decl || decl->dtype != te::DType::F32) return std::nullopt;
  update->reads.foreach_map([&](isl::map m) {
    if (m.range_tuple_id().name() != written) operands.push_back(m);
  });
  if (operands.size() != 2) return std::nullopt;
  const isl::map& write = writes[0];

  int n = band.members(), reduction = -1, vector = -1, row = -1;
  size_t broadcast = 0;  // the operand that does not move along the vector member
  const std::vector<int64_t>& extents = band.extents();
  for (int m = 0; m < n; ++m) {
    int d = band.statementDim(update->name, m);
    // A loop of one iteration is no loop (a 1x1 convolution's kh and kw).
    if (d < 0 || extents[static_cast<size_t>(m)] == 1) continue;
    if (!movesWith(write, d)) {
      if (reduction >= 0) return std::nullopt;  // several reductions (a convolution's c, kh, kw)
      reduction = m;
    } else if (band.coincident(m) && contiguity(write, d) > 0) {
      bool first = movesWith(operands[0], d), second = movesWith(operands[1], d);
      if (first == second) continue;
      vector = m;
      broadcast = first ? 1 : 0;
    }
  }
  if (reduction < 0 || vector < 0) return std::nullopt;
  const isl::map& shared = operands[1 - broadcast];
  for (int m = 0; m < n; ++m) {
    int d = band.statementDim(update->name, m);
    if (m == vector || d < 0 || !band.coincident(m)) continue;
    if (movesWith(write, d) && movesWith(operands[broadcast], d) && !movesWith(shared, d)) row = m;
  }
  if (row < 0) return std::nullopt;

  const RegisterTileShape shape =
      preferredRegisterTile(lanes, extents[static_cast<size_t>(row)], extents[static_cast<size_t>(vector)],
                            extents[static_cast<size_t>(reduction)]);
  if (shape.rows <= 0) return std::nullopt;
  int64_t width = int64_t{shape.lanes} * shape.vectorsPerRow;
  int64_t panelBytes = contractionPanelBytes(l1Bytes, l2Bytes);
  int64_t depth = kMinPanelDepth;
  while (2 * depth * width * 4 <= panelBytes) depth *= 2;
  if (depth * width * 4 > panelBytes) return std::nullopt;
  std::vector<int64_t> sizes(static_cast<size_t>(n), 1);
  sizes[static_cast<size_t>(vector)] = std::min(extents[static_cast<size_t>(vector)], width);
  sizes[static_cast<size_t>(reduction)] = std::min(extents[static_cast<size_t>(reduction)], depth);
  sizes[static_cast<size_t>(row)] = rowHeight(extents[static_cast<size_t>(row)], shape.rows,
                                              sizes[static_cast<size_t>(reduction)], l2Bytes, cores);

  std::ostringstream os;
  os << "  contraction " << update->name << ": register tiles of " << shape.rows << " rows x "
     << shape.vectorsPerRow << " vectors; L1 tile " << tile::sizesText(sizes) << " (B's "
     << sizes[static_cast<size_t>(reduction)] << "x" << sizes[static_cast<size_t>(vector)]
     << " panel read in order from "
     << (sizes[static_cast<size_t>(reduction)] * sizes[static_cast<size_t>(vector)] * 4 <= l1Bytes / 2 ? "L1"
                                                                                                       : "L2")
     << ", the accumulators in registers)\n";
  why += os.str();
  return sizes;
}

}  // namespace tessel::target::cpu
