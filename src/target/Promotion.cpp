#include "target/Promotion.h"

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

}  // namespace tessel::target
