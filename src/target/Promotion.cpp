#include "target/Promotion.h"

#include <algorithm>

#include "schedule/Marks.h"

namespace tessel::target {

namespace {
isl::union_map accessesOf(const isl::union_map& accesses, const isl::union_set& domain,
                          const std::string& tensor) {
  isl::union_map out = isl::union_map::empty(accesses.ctx());
  accesses.intersect_domain(domain).foreach_map([&](isl::map m) {
    if (isl::manage(isl_map_get_tuple_id(m.get(), isl_dim_out)).name() == tensor) out = out.unite(m);
  });
  return out;
}

}  // namespace

std::string PromotionPlan::markName(size_t site) {
  return schedule::kPromotionMarkPrefix + std::to_string(site);
}

std::optional<size_t> PromotionPlan::siteOfMark(const std::string& mark) const {
  for (size_t i = 0; i < sites.size(); ++i)
    if (mark == markName(i)) return i;
  return std::nullopt;
}

std::string PromotionPlan::bufferName(size_t site, const std::string& tensor) {
  return "tessel_p" + std::to_string(site) + "_" + tensor;
}

isl::union_map readsOf(const poly::Scop& scop, const isl::union_set& domain, const std::string& tensor) {
  return accessesOf(scop.reads, domain, tensor);
}

isl::union_map writesOf(const poly::Scop& scop, const isl::union_set& domain, const std::string& tensor) {
  return accessesOf(scop.writes, domain, tensor);
}

bool promotableRead(const poly::Scop& scop, const te::ExprNode& read) {
  return !scop.checkedReads.count(&read);
}

void collectReads(const te::Expr& e, const std::string& tensor, std::vector<const te::ExprNode*>& out) {
  if (e->kind == te::ExprKind::Access && e->name == tensor) out.push_back(e.get());
  for (const auto& o : e->operands) collectReads(o, tensor, out);
}

std::optional<std::vector<int64_t>> boxSizes(const isl::union_map& relation) {
  isl::fixed_box box = relation.as_map().range_simple_fixed_box_hull();
  if (!box.is_valid()) return std::nullopt;
  isl::multi_val size = box.size();
  std::vector<int64_t> out;
  for (unsigned d = 0; d < size.size(); ++d) out.push_back(size.at(static_cast<int>(d)).num_si());
  return out;
}

isl::map alongRangeDimension(const isl::map& relation, unsigned d) {
  const auto n = static_cast<unsigned>(relation.range_tuple_dim());
  isl_map* along = isl_map_project_out(relation.copy(), isl_dim_out, d + 1, n - d - 1);
  return isl::manage(isl_map_project_out(along, isl_dim_out, 0, d));
}

std::optional<std::vector<int64_t>> spanSizes(const isl::union_map& relation) {
  if (auto box = boxSizes(relation)) return box;
  isl::map map = relation.as_map();
  const auto n = static_cast<unsigned>(map.range_tuple_dim());
  std::vector<int64_t> sizes;
  for (unsigned d = 0; d < n; ++d) {
    isl::map one = alongRangeDimension(map, d);
    isl::val widest = one.reverse().apply_range(one).deltas().dim_max_val(0);
    if (!widest.is_int()) return std::nullopt;
    sizes.push_back(widest.get_num_si() + 1);
  }
  return sizes;
}

int64_t product(const std::vector<int64_t>& sizes) {
  int64_t p = 1;
  for (int64_t x : sizes) p *= x;
  return p;
}

std::string boxText(const std::vector<int64_t>& box) {
  std::string s;
  for (size_t d = 0; d < box.size(); ++d) s += (d ? "x" : "") + std::to_string(box[d]);
  return s;
}

}  // namespace tessel::target
