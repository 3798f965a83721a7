// What promotion decided (target/cpu/PromoteOperands.h), for code generation:
// each site is a mark "promote_<n>" in the schedule tree, right under the tile
// loops whose footprints it copies. Before the subtree of the mark runs, each
// listed tensor's footprint in the current tile (a rectangular box) is copied
// into a buffer of the box's shape, and the subtree reads the buffer instead.
// Where the box lies in each tile is worked out during AST generation, where
// the loops holding the tile's coordinates are known.
#pragma once

#include <isl/cpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "poly/Scop.h"

namespace tessel::target {

struct PromotedTensor {
  std::string tensor;        // a kernel input: nothing writes it, so a copy never goes stale
  std::string buffer;        // the local buffer's name
  std::vector<int64_t> box;  // the footprint's box, the buffer's shape
};

struct PromotionSite {
  std::string level;  // the memory level of the tiles, e.g. "L1"
  std::vector<PromotedTensor> tensors;
};

struct PromotionPlan {
  std::vector<PromotionSite> sites;

  static std::string markName(size_t site);
  // The site a mark stands for, when it is a promotion mark of this plan.
  std::optional<size_t> siteOfMark(const std::string& mark) const;
};

// The reads of `tensor` by the instances in `domain`.
isl::union_map readsOf(const poly::Scop& scop, const isl::union_set& domain, const std::string& tensor);

// Whether a read can be redirected to a promoted copy: its indices are affine
// and proven in range (the copy holds the box of such reads only).
bool promotableRead(const poly::Scop& scop, const te::ExprNode& read);

}  // namespace tessel::target
