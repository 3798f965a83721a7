#include "target/Promotion.h"

#include <algorithm>

namespace tessel::target {

namespace {
constexpr const char* kPrefix = "promote_";
}

std::string PromotionPlan::markName(size_t site) { return kPrefix + std::to_string(site); }

std::optional<size_t> PromotionPlan::siteOfMark(const std::string& mark) const {
  for (size_t i = 0; i < sites.size(); ++i)
    if (mark == markName(i)) return i;
  return std::nullopt;
}

isl::union_map readsOf(const poly::Scop& scop, const isl::union_set& domain, const std::string& tensor) {
  isl::union_map out = isl::union_map::empty(scop.reads.ctx());
  scop.reads.intersect_domain(domain).foreach_map([&](isl::map m) {
    if (isl::manage(isl_map_get_tuple_id(m.get(), isl_dim_out)).name() == tensor) out = out.unite(m);
  });
  return out;
}

bool promotableRead(const poly::Scop& scop, const te::ExprNode& read) {
  return !scop.checkedReads.count(&read) &&
         std::all_of(read.operands.begin(), read.operands.end(),
                     [](const te::Expr& i) { return te::toAffine(i).has_value(); });
}

}  // namespace tessel::target
