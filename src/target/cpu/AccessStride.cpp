#include "target/cpu/AccessStride.h"

#include <optional>

namespace tessel::target::cpu {

namespace {

// The access function (its first piece), when the access is one.
std::optional<isl::multi_aff> accessFunction(const isl::map& access) {
  if (!access.is_single_valued()) return std::nullopt;
  std::optional<isl::multi_aff> affine;
  access.as_pw_multi_aff().foreach_piece([&](isl::set, isl::multi_aff ma) {
    if (!affine) affine = ma;
  });
  return affine;
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

}  // namespace

bool movesWith(const isl::map& access, int dim) {
  std::optional<isl::multi_aff> affine = accessFunction(access);
  if (!affine) return true;
  for (int d = 0; d < static_cast<int>(affine->size()); ++d)
    if (involves(affine->at(d), dim)) return true;
  return false;
}

int contiguity(const isl::map& access, int dim) {
  std::optional<isl::multi_aff> affine = accessFunction(access);
  if (!affine) return 0;
  int outputs = static_cast<int>(affine->size());
  int score = 0;
  for (int d = 0; d < outputs; ++d) {
    isl::aff index = affine->at(d);
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

}  // namespace tessel::target::cpu
