#include "microkernel/Composition.h"

#include <algorithm>

namespace tessel::microkernel {

std::vector<Covering> coverings(int64_t extent, int64_t lo, int64_t hi, size_t limit) {
  std::vector<Covering> all;
  if (extent < 1 || lo < 1 || hi < lo) return all;
  for (int64_t outer = 1; outer <= extent; ++outer) {
    if (extent % outer != 0) continue;
    int64_t m = extent / outer;
    for (int64_t s1 = lo; s1 <= hi && s1 <= m; ++s1) {
      if (m % s1 == 0) all.push_back({outer, s1, m / s1, 0, 0});
      for (int64_t s2 = s1 + 1; s2 <= hi; ++s2)
        for (int64_t a = 1; a * s1 + s2 <= m; ++a)
          if ((m - a * s1) % s2 == 0) all.push_back({outer, s1, a, s2, (m - a * s1) / s2});
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Covering& x, const Covering& y) {
    if (x.tiles() != y.tiles()) return x.tiles() < y.tiles();
    return std::max(x.size1, x.size2) > std::max(y.size1, y.size2);
  });
  if (all.size() > limit) all.resize(limit);
  return all;
}

std::optional<Covering> balancedCovering(int64_t extent, int64_t lo, int64_t hi) {
  if (extent < lo || lo < 1 || hi < lo) return std::nullopt;
  for (int64_t tiles = (extent + hi - 1) / hi; tiles * lo <= extent; ++tiles) {
    int64_t small = extent / tiles, large = small + 1, larger = extent % tiles;
    if (small < lo || (larger > 0 && large > hi)) continue;
    if (larger == 0) return Covering{tiles, small, 1, 0, 0};
    return Covering{1, small, tiles - larger, large, larger};
  }
  return std::nullopt;
}

std::string coveringScheme(const Covering& c, const std::string& dim, const std::string& param) {
  if (!c.composed()) return "T_{" + std::to_string(c.outer * c.count1) + "," + dim + "}";
  std::string seq = "lambda_" + dim + " " + param + ".[(" + std::to_string(c.count1) + "," +
                    std::to_string(c.size1) + "),(" + std::to_string(c.count2) + "," +
                    std::to_string(c.size2) + ")]";
  return c.outer > 1 ? "T_{" + std::to_string(c.outer) + "," + dim + "}, " + seq : seq;
}

}  // namespace tessel::microkernel
