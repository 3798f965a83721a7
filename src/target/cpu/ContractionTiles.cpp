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

// The share of L2 that A's rows of an L1 tile may take: B's L2 tile and C's
// rows of the register tiles stream through the rest.
constexpr int64_t kL2ShareForA = 4;

// Shorter reductions leave too little work per load and store of the
// accumulators to be worth shaping the tile for.
constexpr int64_t kMinPanelDepth = 16;

// The rows of the L1 tile: as tall as A's rows fit a share of L2 (B's panel
// packed once for all of them), with the fewest register tiles left to a partial tile
// (the C code of a partial row tile is not register-tiled: 5124 rows in tiles
// of 432 left 372 to it, 271 ms against 164), then the tallest; the full tiles
// a multiple of the cores where each core can get one of the short height.
int64_t rowHeight(int64_t extent, int rows, int64_t depth, int64_t l2Bytes, int cores) {
  int64_t shortest = int64_t{rows} * kRegisterTilesWithoutL2;
  int64_t tallest = shortest;
  if (l2Bytes > 0) tallest = std::max(tallest, l2Bytes / kL2ShareForA / (depth * 4) / rows * rows);
  int64_t share = std::max(cores, 1);
  if (extent <= tallest && extent < share * shortest) return extent;
  auto partialRegisterTiles = [&](int64_t h) { return (extent % h + rows - 1) / rows; };
  for (bool evenly : {true, false}) {
    int64_t best = 0;
    for (int64_t h = std::min(tallest, extent) / rows * rows; h >= shortest; h -= rows) {
      if (evenly && (extent / h) % share != 0) continue;
      if (best == 0 || partialRegisterTiles(h) < partialRegisterTiles(best)) best = h;
    }
    if (best > 0) return best;
  }
  return std::min(extent, shortest);
}

}  // namespace

RegisterTileShape preferredRegisterTile(int lanes) {
  RegisterTileShape shape;
  shape.lanes = lanes;
  shape.vectorsPerRow = 2;
  shape.rows = lir::maxRegisterTileRows(lanes, shape.vectorsPerRow);
  return shape;
}

std::optional<std::vector<int64_t>> contractionL1Tile(const poly::Scop& scop, const tile::BandModel& band,
                                                      const RegisterTileShape& shape, int64_t l1Bytes,
                                                      int64_t l2Bytes, int cores, std::string& why) {
  const poly::Statement* update = nullptr;
  for (const auto& name : band.statements()) {
    const poly::Statement& st = scop.statement(name);
    if (st.kind != poly::StatementKind::Update) continue;
    if (update) return std::nullopt;  // two contractions: no one shape serves both
    update = &st;
  }
  if (!update || shape.rows <= 0) return std::nullopt;
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

  int64_t width = int64_t{shape.lanes} * shape.vectorsPerRow;
  if (extents[static_cast<size_t>(vector)] < shape.lanes) return std::nullopt;
  int64_t depth = kMinPanelDepth;
  while (2 * depth * width * 4 <= l1Bytes / 2) depth *= 2;
  if (depth * width * 4 > l1Bytes / 2) return std::nullopt;
  std::vector<int64_t> sizes(static_cast<size_t>(n), 1);
  sizes[static_cast<size_t>(vector)] = std::min(extents[static_cast<size_t>(vector)], width);
  sizes[static_cast<size_t>(reduction)] = std::min(extents[static_cast<size_t>(reduction)], depth);
  sizes[static_cast<size_t>(row)] = rowHeight(extents[static_cast<size_t>(row)], shape.rows,
                                              sizes[static_cast<size_t>(reduction)], l2Bytes, cores);

  std::ostringstream os;
  os << "  contraction " << update->name << ": register tiles of " << shape.rows << " rows x "
     << shape.vectorsPerRow << " vectors; L1 tile " << tile::sizesText(sizes) << " (B's "
     << sizes[static_cast<size_t>(reduction)] << "x" << sizes[static_cast<size_t>(vector)]
     << " panel stays in L1, the accumulators in registers)\n";
  why += os.str();
  return sizes;
}

}  // namespace tessel::target::cpu
