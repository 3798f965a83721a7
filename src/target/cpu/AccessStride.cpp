#include "target/cpu/AccessStride.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace tessel::target::cpu {

namespace {

// The pieces of the access function, when the access is one (truncating
// quotients make several: one per sign of a numerator).
std::vector<isl::multi_aff> accessPieces(const isl::map& access) {
  std::vector<isl::multi_aff> pieces;
  if (!access.is_single_valued()) return pieces;
  access.as_pw_multi_aff().foreach_piece([&](isl::set, isl::multi_aff ma) { pieces.push_back(ma); });
  return pieces;
}

bool involves(const isl::aff& a, int dim) {
  return isl_aff_involves_dims(a.get(), isl_dim_in, static_cast<unsigned>(dim), 1) == isl_bool_true;
}

// Whether `dim` enters `a` through an integer division (w / 2 in an index).
bool involvesThroughDivision(const isl::aff& a, int dim) {
  isl_size divisions = isl_aff_dim(a.get(), isl_dim_div);
  for (int i = 0; i < divisions; ++i)
    if (involves(isl::manage(isl_aff_get_div(a.get(), i)), dim)) return true;
  return false;
}

// One piece's answers, as below.
bool pieceMovesWith(const isl::multi_aff& affine, int dim) {
  for (int d = 0; d < static_cast<int>(affine.size()); ++d)
    if (involves(affine.at(d), dim)) return true;
  return false;
}

int pieceContiguity(const isl::multi_aff& affine, int dim) {
  int outputs = static_cast<int>(affine.size());
  int score = 0;
  for (int d = 0; d < outputs; ++d) {
    isl::aff index = affine.at(d);
    if (!involves(index, dim)) continue;
    // A quotient moves every few iterations: neither unit stride nor a
    // large one, as little known as a non-affine access.
    if (involvesThroughDivision(index, dim)) return 0;
    if (d < outputs - 1) return -1;
    isl::val c = isl::manage(isl_aff_get_coefficient_val(index.get(), isl_dim_in, dim));
    score = c.abs().is_one() ? 1 : -1;
  }
  return score;
}

bool pieceGathers(const isl::multi_aff& affine, int dim, const std::vector<int64_t>& shape) {
  int outputs = static_cast<int>(affine.size());
  if (static_cast<int>(shape.size()) != outputs) return pieceContiguity(affine, dim) < 0;
  // The distance in elements between consecutive iterations, summed over the
  // indices that move (a quotient is left to contiguity's caution).
  int64_t stride = 0, below = 1;
  for (int d = outputs - 1; d >= 0; --d) {
    isl::aff index = affine.at(d);
    if (involves(index, dim)) {
      if (involvesThroughDivision(index, dim)) return false;
      isl::val c = isl::manage(isl_aff_get_coefficient_val(index.get(), isl_dim_in, dim));
      if (!c.is_int()) return true;
      stride += c.get_num_si() * below;
    }
    below *= std::max<int64_t>(shape[static_cast<size_t>(d)], 1);
  }
  stride = std::abs(stride);
  return stride > 2;
}

}  // namespace

bool gathersAlong(const isl::map& access, int dim, const std::vector<int64_t>& shape) {
  std::vector<isl::multi_aff> pieces = accessPieces(access);
  return std::any_of(pieces.begin(), pieces.end(),
                     [&](const isl::multi_aff& p) { return pieceGathers(p, dim, shape); });
}

bool movesWith(const isl::map& access, int dim) {
  std::vector<isl::multi_aff> pieces = accessPieces(access);
  if (pieces.empty()) return true;
  return std::any_of(pieces.begin(), pieces.end(),
                     [&](const isl::multi_aff& p) { return pieceMovesWith(p, dim); });
}

// The worst piece decides: strided (-1) before unknown or broadcast (0)
// before unit stride (1).
int contiguity(const isl::map& access, int dim) {
  std::vector<isl::multi_aff> pieces = accessPieces(access);
  if (pieces.empty()) return 0;
  int score = 1;
  for (const auto& p : pieces) score = std::min(score, pieceContiguity(p, dim));
  return score;
}

bool writesContiguouslyAlong(const poly::Statement& statement, int lane) {
  bool contiguous = true;
  statement.writes.foreach_map([&](isl::map w) { contiguous = contiguous && contiguity(w, lane) == 1; });
  return contiguous;
}

bool transposesBetween(const isl::map& read, int lane, int row) {
  return contiguity(read, lane) == -1 && contiguity(read, row) == 1;
}

}  // namespace tessel::target::cpu
