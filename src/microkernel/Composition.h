// Covering one dimension exactly with register tiles of one class (paper
// 002 §2.3): tiles of one size that divides the extent, or two sizes h1 < h2
// of the class with a·h1 + b·h2 dividing it, so that no size needs padding,
// bounds checks or a scalar remainder. In a scheme the second form is
// `T_{outer,d}, lambda_d p.[(a,h1),(b,h2)], ..., U_{p,d}`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::microkernel {

struct Covering {
  int64_t outer = 1;              // repetitions of the whole composition
  int64_t size1 = 0, count1 = 0;  // count1 tiles of size1
  int64_t size2 = 0, count2 = 0;  // then count2 tiles of size2 (count2 = 0: one size)
  int64_t extent() const { return outer * (size1 * count1 + size2 * count2); }
  int64_t tiles() const { return outer * (count1 + count2); }
  bool composed() const { return count2 > 0; }
};

// Every covering of `extent` by tiles of sizes in [lo, hi], the fewest tiles
// first (then the larger tiles first), at most `limit` of them.
std::vector<Covering> coverings(int64_t extent, int64_t lo, int64_t hi, size_t limit = 4096);
// The covering with the fewest tiles, their sizes as equal as they can be
// (floor and ceiling of extent / tiles); none when extent < lo.
std::optional<Covering> balancedCovering(int64_t extent, int64_t lo, int64_t hi);
// The scheme text that walks the tiles along `dim` with the parameter
// `param` bound to each tile's size: "T_{2,h}, lambda_h b.[(2,6),(1,5)]", or
// "T_{4,h}" when one size covers it (the caller then writes that size for
// the parameter).
std::string coveringScheme(const Covering& c, const std::string& dim, const std::string& param);

}  // namespace tessel::microkernel
