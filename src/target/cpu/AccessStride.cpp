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

}  // namespace

bool movesWith(const isl::map& access, int dim) {
  std::optional<isl::multi_aff> affine = accessFunction(access);
  if (!affine) return true;
  for (int d = 0; d < static_cast<int>(affine->size()); ++d)
    if (!isl::manage(isl_aff_get_coefficient_val(affine->at(d).get(), isl_dim_in, dim)).is_zero())
      return true;
  return false;
}

int contiguity(const isl::map& access, int dim) {
  std::optional<isl::multi_aff> affine = accessFunction(access);
  if (!affine) return 0;
  int outputs = static_cast<int>(affine->size());
  int score = 0;
  for (int d = 0; d < outputs; ++d) {
    isl::val c = isl::manage(isl_aff_get_coefficient_val(affine->at(d).get(), isl_dim_in, dim));
    if (c.is_zero()) continue;
    if (d < outputs - 1) return -1;
    score = c.abs().is_one() ? 1 : -1;
  }
  return score;
}

}  // namespace tessel::target::cpu
