// What promotion decided (target/cpu/PromoteOperands.h), for code generation:
// each site is a mark "promote_<n>" in the schedule tree, right under the tile
// loops whose footprints it copies. Before the subtree of the mark runs, each
// listed tensor's footprint in the current tile (a rectangular box) is copied
// into a buffer of the box's shape, and the subtree reads the buffer instead.
// Where the box lies in each tile is worked out during AST generation, where
// the loops holding the tile's coordinates are known. A site may also hold
// contracted temporaries (target/cpu/ContractTemporaries.h): their buffer
// replaces the tensor for reads and writes alike, with nothing copied.
#pragma once

#include <isl/cpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "poly/Scop.h"

namespace tessel::target {

struct PromotedTensor {
  // A kernel input (nothing writes it, so a copy never goes stale), or a
  // contracted temporary.
  std::string tensor;
  std::string buffer;        // the local buffer's name
  std::vector<int64_t> box;  // the footprint's box, the buffer's shape
  bool contracted = false;   // a temporary that lives only in the buffer
  // Contracted: write instance -> read instance of the same element. AST
  // generation may split the site's subtree into pieces (a degenerate loop
  // generates each statement apart); a piece that some of these pairs cross
  // keeps the tensor. (Absent for inputs: a null isl object cannot be copied.)
  std::optional<isl::union_map> flow;
  // Contracted, with writers that recomputation (extension nodes) runs in
  // several iterations of the site: those instances.
  std::optional<isl::union_set> recomputed;
  // The buffer's dimensions, outermost first, as tensor dimensions: a copy
  // may transpose, so that the vector loop reads its rows (B of A B^T). Empty:
  // the tensor's order.
  std::vector<int> layout;
};

struct PromotionSite {
  std::string level;  // the memory level of the tiles, e.g. "L1"
  std::vector<PromotedTensor> tensors;
};

struct PromotionPlan {
  std::vector<PromotionSite> sites;

  static std::string markName(size_t site);
  // The buffer of `tensor` at the site: under the prefix the C backend
  // reserves for its own names, so the copy's loop variables and offsets,
  // named after it, meet no user name.
  static std::string bufferName(size_t site, const std::string& tensor);
  // The site a mark stands for, when it is a promotion mark of this plan.
  std::optional<size_t> siteOfMark(const std::string& mark) const;
};

// The reads of `tensor` by the instances in `domain`.
isl::union_map readsOf(const poly::Scop& scop, const isl::union_set& domain, const std::string& tensor);

// The writes of `tensor` by the instances in `domain`.
isl::union_map writesOf(const poly::Scop& scop, const isl::union_set& domain, const std::string& tensor);

// The reads of `tensor` in `e`.
void collectReads(const te::Expr& e, const std::string& tensor, std::vector<const te::ExprNode*>& out);

// Sizes of isl's simple fixed box over the range of `relation` (one space), if it finds one.
std::optional<std::vector<int64_t>> boxSizes(const isl::union_map& relation);
// Sizes of a box that holds the range of every domain point of `relation`
// (one space): isl's fixed box where it finds one, else the largest span of
// each range dimension over one image (a slice several readers need through
// floor divisions, as a pyramid's levels). Such a box has no affine offset:
// it serves estimates and contracted buffers, which the code generator
// places at each iteration's least elements, not copies (promotion).
std::optional<std::vector<int64_t>> spanSizes(const isl::union_map& relation);
// `relation` with its range projected onto dimension `d` alone.
isl::map alongRangeDimension(const isl::map& relation, unsigned d);
int64_t product(const std::vector<int64_t>& sizes);
std::string boxText(const std::vector<int64_t>& box);  // "3x127"

// Whether a read can be redirected to a promoted copy: its indices are
// affine or quasi-affine (h / 2), so its relation is exact, and proven in
// range (the copy holds the box of such reads only). Extraction records
// every other read in `checkedReads`.
bool promotableRead(const poly::Scop& scop, const te::ExprNode& read);

}  // namespace tessel::target
