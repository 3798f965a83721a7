#include "tile/AutoTiling.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tessel::tile {

namespace {

constexpr int64_t kMinStreamingRowLines = 4;

// When a band's data exceed the last cache level they stream from memory,
// and the hardware prefetchers follow them row by row within a page: data
// tile rows shorter than this many lines (an untiled transpose reads one
// line per row of its input, walking down a column) leave every line a
// miss at memory latency. A 4096 x 4096 f32 transpose ran 22 ms untiled,
// 16 ms in tiles whose output rows were 4 lines and 12 ms in tiles of rows
// of 16 lines and more (1 thread).
constexpr int64_t kMinMemoryRowLines = 16;

// Starts of data-tile rows shorter than `minRowBytes`, per instance: each
// costs a line fetched at memory latency rather than streamed.
double shortRowStartsPerInstance(const TileCost& c, int64_t minRowBytes) {
  double starts = 0;
  for (const auto& [array, rows] : c.rows)
    if (rows.bytes < minRowBytes) starts += rows.count;
  return starts / std::max(c.instances, 1.0);
}

// The members along which some array's data-tile rows run (its contiguous
// dimension moves with them).
std::vector<bool> rowMembers(const BandModel& band) {
  int n = band.members();
  std::vector<bool> along(static_cast<size_t>(n), false);
  std::vector<int64_t> unit(static_cast<size_t>(n), 1);
  TileCost base = band.cost(unit);
  for (int m = 0; m < n; ++m) {
    if (band.extent(m) < 2) continue;
    std::vector<int64_t> probe = unit;
    probe[static_cast<size_t>(m)] = 2;
    for (const auto& [array, rows] : band.cost(probe).rows) {
      auto it = base.rows.find(array);
      if (it != base.rows.end() && rows.bytes > it->second.bytes) along[static_cast<size_t>(m)] = true;
    }
  }
  return along;
}

// A fixed cost per array per tile (one line each: the start of a transfer)
// keeps tiny tiles from looking free.
double bytesPerInstance(const TileCost& c, int64_t lineBytes) {
  return (static_cast<double>(lineBytes) * c.arrays + c.footprintBytes) / std::max(c.instances, 1.0);
}

std::string kib(double bytes) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  if (bytes >= 1024 * 1024)
    os << bytes / (1024 * 1024) << " MiB";
  else
    os << bytes / 1024 << " KiB";
  return os.str();
}

// Bytes per instance that enter `level` when the band runs untiled in its
// order: the cheapest of one row (the innermost member whole, one iteration
// of the others) and the largest block of trailing members whose data stays
// within half the level. In a band without reductions (every member
// coincident), what a row reuses from the previous one (a bias vector) stays
// cached when two rows fit, so a row then moves only its new bytes. (Counting
// the reused bytes again tiled bias + relu into 16-column tiles, twice as
// slow as streaming.) With a reduction member, neighbouring rows share cache
// lines of operands that do not stay cached over the band.
double streamingBytesPerInstance(const BandModel& band, const std::vector<int64_t>& extents,
                                 const CacheLevel& level, bool allCoincident) {
  int n = band.members();
  double limit = static_cast<double>(level.capacityBytes) / 2;
  std::vector<int64_t> streaming(static_cast<size_t>(n), 1);
  streaming.back() = extents.back();
  TileCost row = band.cost(streaming);
  double cost = bytesPerInstance(row, level.lineBytes);
  if (allCoincident && n >= 2 && extents[static_cast<size_t>(n - 2)] >= 2) {
    std::vector<int64_t> twoRows = streaming;
    twoRows[static_cast<size_t>(n - 2)] = 2;
    TileCost two = band.cost(twoRows);
    if (two.footprintBytes <= limit && two.instances > row.instances)
      cost = std::min(cost, (two.footprintBytes - row.footprintBytes) / (two.instances - row.instances));
  }
  for (int s = n - 2; s >= 0; --s) {
    std::vector<int64_t> block(static_cast<size_t>(n), 1);
    for (int m = s; m < n; ++m) block[static_cast<size_t>(m)] = extents[static_cast<size_t>(m)];
    TileCost c = band.cost(block);
    if (c.footprintBytes > limit) break;
    cost = std::min(cost, bytesPerInstance(c, level.lineBytes));
  }
  return cost;
}

// Parallel loops must keep at least one tile per core along the leading
// coincident member (when it has that many iterations), and the tiles must
// share out evenly: the busiest core gets at most a quarter more than an
// even share (512 rows in tiles of 384 would leave one core 384 rows and
// the other 128).
bool keepsParallelism(const BandModel& band, const std::vector<int64_t>& extents, int cores,
                      const std::vector<int64_t>& sizes) {
  if (band.members() == 0 || !band.coincident(0) || extents[0] < cores) return true;
  int64_t tiles = (extents[0] + sizes[0] - 1) / sizes[0];
  if (tiles < cores) return false;
  int64_t busiest = (tiles + cores - 1) / cores * sizes[0];
  return 4 * busiest * cores <= 5 * extents[0] || sizes[0] == 1;
}

// When the tiles keep the leading member whole (a target's innermost shape,
// or a fusion consumer's choice), the next coincident member split into
// tiles carries the parallel loop: its tiles must share out evenly too (35
// rows of a matmul whole, 8457 columns in tiles of 2048: 5 tiles, one core
// 6144 columns and the other 2313): the busiest core gets at most a tenth
// more than an even share (tiles of 1024: 9 tiles, 5120 columns against
// 3337, ran 11.7 ms on 2 threads to oneDNN's 8.8). True also when no such
// member is split.
bool sharesTheNextMemberEvenly(const BandModel& band, const std::vector<int64_t>& extents, int cores,
                               const std::vector<int64_t>& sizes) {
  for (int m = 1; m < band.members() && band.coincident(m); ++m) {
    int64_t extent = extents[static_cast<size_t>(m)], size = sizes[static_cast<size_t>(m)];
    if (size >= extent) continue;
    int64_t tiles = (extent + size - 1) / size;
    if (tiles < cores) return extent < cores;
    int64_t busiest = (tiles + cores - 1) / cores * size;
    return 10 * busiest * cores <= 11 * extent;
  }
  return true;
}

// Whether a coincident member after the leading one (the loops a parallel
// loop may run over, all coincident from the leading one on) is split into
// at least one tile per core.
bool splitsForTheCores(const BandModel& band, const std::vector<int64_t>& extents, int cores,
                       const std::vector<int64_t>& sizes) {
  for (int m = 1; m < band.members() && band.coincident(m); ++m) {
    int64_t extent = extents[static_cast<size_t>(m)], size = sizes[static_cast<size_t>(m)];
    if (size < extent) return (extent + size - 1) / size >= cores;
  }
  return false;
}

// Greedy growth: doubles the member whose doubling lowers the bytes per
// instance most, while the data tiles stay within `limit`. Updates `sizes`
// and `current` (their cost); returns the final bytes per instance.
template <typename Allowed>
double grow(const BandModel& band, const std::vector<int64_t>& extents, int64_t lineBytes, double limit,
            const Allowed& allowed, std::vector<int64_t>& sizes, TileCost& current) {
  double currentCost = bytesPerInstance(current, lineBytes);
  while (true) {
    int bestMember = -1;
    TileCost best;
    double bestCost = currentCost;
    for (int m = 0; m < band.members(); ++m) {
      if (sizes[static_cast<size_t>(m)] >= extents[static_cast<size_t>(m)]) continue;
      std::vector<int64_t> candidate = sizes;
      candidate[static_cast<size_t>(m)] =
          std::min(2 * sizes[static_cast<size_t>(m)], extents[static_cast<size_t>(m)]);
      if (!allowed(candidate)) continue;
      TileCost c = band.cost(candidate);
      if (c.footprintBytes > limit) continue;
      double cost = bytesPerInstance(c, lineBytes);
      if (cost < bestCost * (1 - 1e-9)) {
        bestMember = m;
        best = c;
        bestCost = cost;
      }
    }
    if (bestMember < 0) return currentCost;
    sizes[static_cast<size_t>(bestMember)] =
        std::min(2 * sizes[static_cast<size_t>(bestMember)], extents[static_cast<size_t>(bestMember)]);
    current = best;
    currentCost = bestCost;
  }
}

}  // namespace

std::string sizesText(const std::vector<int64_t>& sizes) {
  std::string s;
  for (size_t m = 0; m < sizes.size(); ++m) s += (m ? "x" : "") + std::to_string(sizes[m]);
  return s;
}

AutoTilingResult autoTile(const BandModel& band, const std::vector<CacheLevel>& levels, int cores,
                          const std::vector<int64_t>* innermost, bool leadingMayStayWhole) {
  AutoTilingResult result;
  std::ostringstream why;
  int n = band.members();
  const std::vector<int64_t>& extents = band.extents();
  // A target's innermost shape may itself split the parallel member unevenly
  // or not at all (a 35-row matmul: smaller tiles along it would leave
  // partial register tiles, whose vector code is several times slower); the
  // outer levels may then still grow along the other members.
  auto allowed = [&](const std::vector<int64_t>& sizes) {
    if (innermost && sizes[0] == (*innermost)[0] && sizes[0] >= extents[0])
      return sharesTheNextMemberEvenly(band, extents, cores, sizes);
    if (leadingMayStayWhole && sizes[0] >= extents[0] && splitsForTheCores(band, extents, cores, sizes) &&
        sharesTheNextMemberEvenly(band, extents, cores, sizes))
      return true;
    return keepsParallelism(band, extents, cores, sizes) || (innermost && sizes[0] == (*innermost)[0]);
  };

  if (levels.empty() || n == 0) {
    result.why = "  not tiled: no cache level to tile for\n";
    return result;
  }
  double wholeBytes = band.cost(extents).footprintBytes;
  if (wholeBytes <= static_cast<double>(levels.front().capacityBytes) / 2) {
    result.why =
        "  not tiled: all the band's data (" + kib(wholeBytes) + ") fits in " + levels.front().name + "\n";
    return result;
  }

  bool allCoincident = true;
  for (int m = 0; m < n; ++m) allCoincident = allCoincident && band.coincident(m);
  std::vector<LevelSizes> chosen;  // fastest level first
  std::vector<int64_t> sizes(static_cast<size_t>(n), 1);
  // Without reductions a band streams: its rows are what the hardware
  // prefetchers follow. Tile rows of a line or two run as many short
  // streams at once (one per row and array) and measured slower than no
  // tiles at all (interpolate's last stage, 16-column tiles: 18 -> 23 ms),
  // so tiles keep rows of at least four lines of every array (where that
  // leaves a tile per core).
  int64_t lineBytes = levels.front().lineBytes;
  if (allCoincident) {
    int64_t minRow = std::max<int64_t>(1, kMinStreamingRowLines * lineBytes / band.narrowestElementBytes());
    sizes.back() = std::min(extents.back(), minRow);
    while (sizes.back() > 1 && !allowed(sizes)) sizes.back() = (sizes.back() + 1) / 2;
  }
  // A band streaming from memory starts its tiles at rows of
  // kMinMemoryRowLines along every member some array's rows run along (a
  // transpose's input rows run along one member, its output's along the
  // other); levels too small for such a tile are skipped below.
  bool fromMemory =
      !innermost && allCoincident && wholeBytes > static_cast<double>(levels.back().capacityBytes);
  int64_t minMemoryRowBytes = kMinMemoryRowLines * lineBytes;
  if (fromMemory) {
    std::vector<bool> along = rowMembers(band);
    int64_t minRow = std::max<int64_t>(1, minMemoryRowBytes / band.narrowestElementBytes());
    for (int m = 0; m < n; ++m) {
      auto& size = sizes[static_cast<size_t>(m)];
      if (!along[static_cast<size_t>(m)]) continue;
      size = std::max(size, std::min(extents[static_cast<size_t>(m)], minRow));
      while (size > 1 && !allowed(sizes)) size = (size + 1) / 2;
    }
    // Rows that long must still leave a tile the largest level holds.
    double largest = static_cast<double>(levels.back().capacityBytes) / 2;
    while (band.cost(sizes).footprintBytes > largest) {
      int longest = -1;
      for (int m = 0; m < n; ++m)
        if (sizes[static_cast<size_t>(m)] > 1 &&
            (longest < 0 || sizes[static_cast<size_t>(m)] > sizes[static_cast<size_t>(longest)]))
          longest = m;
      if (longest < 0) break;
      sizes[static_cast<size_t>(longest)] = (sizes[static_cast<size_t>(longest)] + 1) / 2;
    }
  }
  if (innermost) sizes = *innermost;
  std::vector<bool> skipped;  // per chosen level: too small for the starting tile
  for (const auto& level : levels) {
    double limit = static_cast<double>(level.capacityBytes) / 2;
    TileCost current = band.cost(sizes);
    bool fixed = innermost && &level == &levels.front();
    if (current.footprintBytes > limit && !fixed) {
      if (!fromMemory) break;
      chosen.push_back({level.name, sizes, current});
      skipped.push_back(true);
      why << "  " << level.name << " (" << kib(static_cast<double>(level.capacityBytes)) << ", limit "
          << kib(limit) << "): skipped, the tile with rows of " << kMinMemoryRowLines << " lines ("
          << sizesText(sizes) << ") takes " << kib(current.footprintBytes) << "\n";
      continue;
    }
    double currentCost = fixed ? bytesPerInstance(current, level.lineBytes)
                               : grow(band, extents, level.lineBytes, limit, allowed, sizes, current);
    chosen.push_back({level.name, sizes, current});
    skipped.push_back(false);
    why << "  " << level.name << " (" << kib(static_cast<double>(level.capacityBytes)) << ", limit "
        << kib(limit) << "): " << sizesText(sizes) << ", data tiles " << kib(current.footprintBytes)
        << " over " << current.arrays << " arrays, " << current.instances << " instances, " << currentCost
        << " B/instance" << (fixed ? " (the register tiles' shape)" : "") << "\n";
  }
  if (fromMemory && std::find(skipped.begin(), skipped.end(), false) == skipped.end()) {
    result.why = why.str() + "  not tiled: no level holds a tile with rows of " +
                 std::to_string(kMinMemoryRowLines) + " lines\n";
    return result;
  }

  // Tiling pays only when it moves less data per instance than streaming the
  // band in its order. Both are counted at every level and weighed by how
  // far the level is from memory: a byte into a level costs an eighth of a
  // byte into the level outside it (L2 feeds L1 several times faster than
  // memory feeds L2). (Counting L1 bytes only tiled 2x2 average pooling and
  // bias + relu, whose tiles save L1 traffic served from L2 but no memory
  // traffic, and made them slower than untiled code; counting the largest
  // level only left transposes untiled, whose rows stream from L2 at a cache
  // line per element.)
  if (chosen.empty()) {
    result.why = why.str() + "  not tiled: no tile fits the smallest level\n";
    return result;
  }
  double streamingCost = 0, tiledCost = 0, weight = 1;
  std::ostringstream perLevel;
  for (size_t i = levels.size(); i-- > 0;) {
    double atLevel = streamingBytesPerInstance(band, extents, levels[i], allCoincident);
    const TileCost& tile = i < chosen.size() ? chosen[i].cost : chosen.back().cost;
    streamingCost += weight * atLevel;
    // A level skipped for the tile it cannot hold sees it stream.
    tiledCost +=
        weight * (i < skipped.size() && skipped[i] ? atLevel : bytesPerInstance(tile, levels[i].lineBytes));
    perLevel << (perLevel.tellp() > 0 ? ", " : "") << levels[i].name << " " << atLevel;
    weight /= 8;
  }
  // From memory, short rows cost a line each at memory latency: the
  // streaming order's rows against those of the innermost tile, whose order
  // is the one each line is first touched in (the rows of tiles from memory
  // start at 16 lines, so this counts only where they had to shrink).
  if (fromMemory) {
    std::vector<int64_t> row(static_cast<size_t>(n), 1);
    row.back() = extents.back();
    double streamingStarts = shortRowStartsPerInstance(band.cost(row), minMemoryRowBytes);
    size_t inner = static_cast<size_t>(std::find(skipped.begin(), skipped.end(), false) - skipped.begin());
    double tiledStarts = shortRowStartsPerInstance(chosen[inner].cost, minMemoryRowBytes);
    streamingCost += streamingStarts * static_cast<double>(lineBytes);
    tiledCost += tiledStarts * static_cast<double>(lineBytes);
    perLevel << "; rows from memory shorter than " << kMinMemoryRowLines
             << " lines: " << streamingStarts * static_cast<double>(lineBytes) << " untiled, "
             << tiledStarts * static_cast<double>(lineBytes) << " tiled";
  }
  why << "  streaming without tiles: " << streamingCost << " B/instance weighted (" << perLevel.str()
      << "), tiles: " << tiledCost << "\n";
  // Tiles cost loop overhead and break the hardware prefetchers' streams; the
  // model's footprints round every row to whole cache lines. Savings under a
  // fifth measured slower than streaming (pooling 2-4x, batchnorm 2x).
  if (tiledCost > 0.8 * streamingCost) {
    result.why = why.str() + "  not tiled: tiles save less than 20% of the data movement\n";
    return result;
  }
  // Levels that split nothing (same sizes as the level inside them, or whole
  // extents) are dropped.
  for (size_t i = 0; i < chosen.size(); ++i) {
    bool whole = chosen[i].sizes == extents;
    bool sameAsInner = i > 0 && !skipped[i - 1] && chosen[i].sizes == chosen[i - 1].sizes;
    if (!whole && !sameAsInner && !skipped[i]) result.levels.push_back(chosen[i]);
  }
  std::reverse(result.levels.begin(), result.levels.end());
  if (result.levels.empty()) why << "  not tiled: the whole band fits every level\n";
  result.why = why.str();
  return result;
}

AutoTilingResult fusionTile(const BandModel& band, const CacheLevel& level, int cores, double limitBytes,
                            const FusionSlices& slices) {
  AutoTilingResult result;
  std::ostringstream why;
  int n = band.members();
  const std::vector<int64_t>& extents = band.extents();
  auto allowed = [&](const std::vector<int64_t>& sizes) {
    return keepsParallelism(band, extents, cores, sizes);
  };
  // The whole band's data tile, computed once (isl): the test below and the
  // producers' shares further down.
  const TileCost whole = n == 0 ? TileCost{} : band.cost(extents);
  if (n == 0 || whole.footprintBytes <= limitBytes) {
    result.why = "  fusion tiles: none needed, the whole band's data fits " + kib(limitBytes) + "\n";
    return result;
  }
  std::vector<int64_t> sizes(static_cast<size_t>(n), 1);
  for (int m = n - 1; m >= 0; --m) {
    std::vector<int64_t> candidate = sizes;
    candidate[static_cast<size_t>(m)] = extents[static_cast<size_t>(m)];
    if (!allowed(candidate) || band.cost(candidate).footprintBytes > limitBytes) break;
    sizes = candidate;
  }
  TileCost current = band.cost(sizes);
  if (current.footprintBytes > limitBytes) {
    result.why = "  fusion tiles: none, a single point's data exceeds " + kib(limitBytes) + "\n";
    return result;
  }
  double cost = grow(band, extents, level.lineBytes, limitBytes, allowed, sizes, current);
  // The share of a producer's values a tile computes that other tiles
  // compute too: its data tile against its share of the whole band's.
  auto recomputed = [&](const TileCost& tile) {
    double worst = 0;
    for (const auto& array : slices.producerArrays) {
      auto inTile = tile.elements.find(array), inBand = whole.elements.find(array);
      if (inTile == tile.elements.end() || inBand == whole.elements.end() || inTile->second <= 0) continue;
      double own = inBand->second * tile.instances / std::max(whole.instances, 1.0);
      worst = std::max(worst, 1 - own / inTile->second);
    }
    return worst;
  };
  double share = recomputed(current);
  if (n >= 2 && share > slices.redundancyLimit) {
    std::vector<int64_t> shortRows(static_cast<size_t>(n), 1);
    shortRows.back() =
        std::min(extents.back(), kMinStreamingRowLines * level.lineBytes / band.narrowestElementBytes());
    TileCost shortCurrent = band.cost(shortRows);
    if (allowed(shortRows) && shortCurrent.footprintBytes <= limitBytes) {
      double shortCost = grow(band, extents, level.lineBytes, limitBytes, allowed, shortRows, shortCurrent);
      double shortShare = recomputed(shortCurrent);
      if (shortShare < share) {
        why << "  fusion tiles with whole rows: " << sizesText(sizes) << ", about "
            << static_cast<int>(std::lround(share * 100)) << "% of a producer recomputed (limit "
            << static_cast<int>(std::lround(slices.redundancyLimit * 100)) << "%)\n";
        sizes = shortRows;
        current = shortCurrent;
        cost = shortCost;
      }
    }
  }
  why << "  fusion tiles for the producers recomputed in them (" << level.name << ", " << kib(limitBytes)
      << " for the band's own data): " << sizesText(sizes) << ", data tiles " << kib(current.footprintBytes)
      << " over " << current.arrays << " arrays, " << current.instances << " instances, " << cost
      << " B/instance\n";
  if (sizes == extents) {
    result.why = why.str() + "  fusion tiles: none, one tile would hold the whole band\n";
    return result;
  }
  result.levels.push_back({level.name, sizes, current});
  result.why = why.str();
  return result;
}

}  // namespace tessel::tile
