#include "target/cpu/PromoteOperands.h"

#include <isl/schedule_node.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "schedule/Transforms.h"
#include "schedule/TreeQueries.h"
#include "target/cpu/MarkVectorLoops.h"
#include "tile/TileBands.h"

namespace tessel::target::cpu {

namespace {

// The memory level of a tile mark ("tile_L1" -> "L1"), "" for other nodes.
std::string tileLevel(const isl::schedule_node& node) {
  std::string name = schedule::markName(node);
  const std::string prefix = tile::tileMarkName("");
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : "";
}

bool hasTileMarkBelow(const isl::schedule_node& node) {
  for (int i = 0; i < static_cast<int>(node.n_children()); ++i) {
    isl::schedule_node child = node.child(i);
    if (!tileLevel(child).empty() || hasTileMarkBelow(child)) return true;
  }
  return false;
}

// The last of the read's indices that moves with one of `vectorDims`, -1 if
// none does. The last one (the contiguous index): vector code loads whole
// vectors from the footprint's rows, which a copy makes contiguous. Another
// one: vector code would gather from a column, which a transposing copy makes
// a row. A read that stays put over the vector loop is one broadcast per
// iteration, and a copy buys it nothing.
int indexAlongVectors(const te::ExprNode& read, const poly::Statement& s, const std::set<int>& vectorDims) {
  for (size_t i = read.operands.size(); i-- > 0;) {
    auto index = te::toAffine(read.operands[i]);
    if (!index) continue;
    for (int d : vectorDims) {
      auto c = index->coeffs.find(s.dims[static_cast<size_t>(d)]);
      if (c != index->coeffs.end() && c->second != 0) return static_cast<int>(i);
    }
  }
  return -1;
}

std::string tupleName(const isl::set& s) { return isl::manage(isl_set_get_tuple_id(s.get())).name(); }

std::string kib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  return buf;
}

class Promoter {
 public:
  Promoter(const poly::Scop& scop, const PromotionOptions& options, PromotionPlan& plan, Remarks& remarks)
      : scop_(scop), options_(options), plan_(plan), remarks_(remarks) {}

  // Under each innermost tile band, its level's promotions.
  isl::schedule_node visit(const isl::schedule_node& root) {
    return schedule::rewriteTopDown(
        root, [this](isl::schedule_node node) -> std::optional<isl::schedule_node> {
          std::string level = tileLevel(node);
          if (level.empty() || node.n_children() != 1 || !node.child(0).isa<isl::schedule_node_band>() ||
              hasTileMarkBelow(node.child(0)))
            return std::nullopt;
          return promoteUnder(node.child(0).child(0), level).parent().parent();
        });
  }

 private:
  // `node`: right under the innermost tile band of `level`.
  isl::schedule_node promoteUnder(isl::schedule_node node, const std::string& level) {
    isl::union_set domain = schedule::nodeDomain(node);
    isl::union_map tileToInstances = node.prefix_schedule_union_map().intersect_domain(domain).reverse();
    vectorDims_ = vectorLoopDims(node);
    std::string statements;
    domain.foreach_set([&](isl::set s) { statements += (statements.empty() ? "" : " ") + tupleName(s); });

    PromotionSite site;
    site.level = level;
    int64_t budget = options_.ignoreCost ? kMaxPromotionSiteBytes : promotionBudget(options_, level);
    const int64_t siteBudget = budget;
    std::string notes;
    // The remark's values: the tensors copied and kept, by name, and each one's facts ("B.box").
    std::string promoted, kept;
    Remarks::Values tensorValues;
    for (const te::TensorDecl* t : scop_.program->inputs()) {
      std::string why;
      double reuse = -1;
      std::optional<PromotedTensor> p = consider(*t, domain, tileToInstances, budget, why, reuse);
      if (p) {
        int64_t bytes = product(p->box) * te::dtypeBytes(t->dtype);
        budget -= bytes;
        notes += (notes.empty() ? ": " : "; ") + t->name + " " + boxText(p->box) + " (" + kib(bytes) + ", " +
                 why + ")";
        promoted += (promoted.empty() ? "" : " ") + t->name;
        tensorValues.emplace_back(t->name + ".box", boxText(p->box));
        tensorValues.emplace_back(t->name + ".bytes", bytes);
        if (std::isfinite(reuse)) tensorValues.emplace_back(t->name + ".reuse", reuse);
        tensorValues.emplace_back(t->name + ".transposed", !p->layout.empty());
        site.tensors.push_back(*p);
      } else if (!why.empty()) {
        notes += (notes.empty() ? ": " : "; ") + t->name + " stays: " + why;
        kept += (kept.empty() ? "" : " ") + t->name;
        tensorValues.emplace_back(t->name + ".reason", why);
        if (reuse >= 0 && std::isfinite(reuse)) tensorValues.emplace_back(t->name + ".reuse", reuse);
      }
    }
    if (notes.empty()) return node;
    const std::string message = "promotion under the " + level + " tiles over " + statements + notes;
    Remarks::Values values = {
        {"level", level}, {"budget_bytes", siteBudget}, {"promoted", promoted}, {"kept", kept}};
    if (site.tensors.empty()) {
      values.emplace_back("reason", notes.substr(2));  // "A stays: ...; B stays: ..."
      values.insert(values.end(), tensorValues.begin(), tensorValues.end());
      remarks_.missed(statements, message, std::move(values));
      return node;
    }
    values.insert(values.end(), tensorValues.begin(), tensorValues.end());
    remarks_.applied(statements, message, std::move(values));
    plan_.sites.push_back(site);
    return schedule::insertMark(node, PromotionPlan::markName(plan_.sites.size() - 1));
  }

  // A promotion of `t` at the site, or nullopt and why not ("" when the
  // site does not read `t`); `reuse`: its reads per element, once known.
  std::optional<PromotedTensor> consider(const te::TensorDecl& t, const isl::union_set& domain,
                                         const isl::union_map& tileToInstances, int64_t budget,
                                         std::string& why, double& reuse) {
    isl::union_map readsOfT = readsOf(scop_, domain, t.name);
    if (readsOfT.is_empty()) return std::nullopt;
    if (t.shape.empty()) {
      why = "a scalar";
      return std::nullopt;
    }

    double accesses = 0;
    // The tensor dimension the vector loops run along, -2 while no read has
    // said, -3 when reads disagree.
    int vectorIndex = -2;
    // A read of another tensor strided along the vector loops keeps them
    // scalar: a transposing copy would then buy nothing.
    bool otherReadStrided = false;
    for (const auto& s : scop_.statements) {
      if (domain.intersect(isl::union_set(s.domain)).is_empty()) continue;
      std::vector<const te::ExprNode*> rs;
      if (s.kind != poly::StatementKind::Init) collectReads(scop_.program->stages[s.stage].rhs, t.name, rs);
      for (const auto* r : rs) {
        if (!promotableRead(scop_, *r)) {
          why = "a read's index is data-dependent or not proven in range";
          return std::nullopt;
        }
      }
      if (rs.empty()) continue;
      for (const auto* r : rs) {
        int i = indexAlongVectors(*r, s, vectorDims_[s.name]);
        if (i >= 0) vectorIndex = vectorIndex == -2 || vectorIndex == i ? i : -3;
      }
      otherReadStrided =
          otherReadStrided || stridedReadOfOthers(scop_.program->stages[s.stage].rhs, t.name, s);
      auto instances = boxSizes(tileToInstances.intersect_range(isl::union_set(s.domain)));
      if (!instances) {
        why = "no fixed-size box bounds a tile of " + s.name;
        return std::nullopt;
      }
      accesses += static_cast<double>(product(*instances)) * static_cast<double>(rs.size());
    }

    auto box = boxSizes(tileToInstances.apply_range(readsOfT));
    if (!box) {
      why = "no fixed-size box bounds its footprint";
      return std::nullopt;
    }
    // Already one contiguous range: every dimension inside the first one of
    // several elements spans the whole tensor.
    size_t outer = 0;
    while (outer < box->size() && (*box)[outer] == 1) ++outer;
    // Vector loops along one column of every read: the copy transposes it
    // into the buffer's last dimension.
    const int rank = static_cast<int>(box->size());
    std::vector<int> layout;
    if (vectorIndex >= 0 && vectorIndex != rank - 1 && (*box)[static_cast<size_t>(vectorIndex)] > 1 &&
        !otherReadStrided) {
      for (int d = 0; d < rank; ++d)
        if (d != vectorIndex) layout.push_back(d);
      layout.push_back(vectorIndex);
    }
    bool alongVectors = vectorIndex == rank - 1 || !layout.empty();
    std::string transposed = layout.empty() ? "" : ", transposed";
    bool contiguous = layout.empty();
    for (size_t d = outer + 1; d < box->size(); ++d) contiguous = contiguous && (*box)[d] >= t.shape[d];
    int64_t elements = product(*box);
    reuse = accesses / static_cast<double>(elements);
    char reuseText[48];
    std::snprintf(reuseText, sizeof reuseText, "%.1f reads per element", reuse);
    if (options_.ignoreCost && elements * te::dtypeBytes(t.dtype) <= budget) {
      why = reuseText + transposed;
      return PromotedTensor{t.name, bufferName(t.name), *box, false, std::nullopt, std::nullopt, layout};
    }
    if (contiguous) {
      why = "its footprint " + boxText(*box) + " is contiguous";
      return std::nullopt;
    }
    if (!alongVectors || t.dtype != te::DType::F32) {
      why = t.dtype != te::DType::F32 ? "copies are made of f32 tensors only"
                                      : "no vector loop reads it along its rows";
      return std::nullopt;
    }
    if (reuse < kMinPromotionReuse) {
      why = reuseText;
      return std::nullopt;
    }
    if (elements * te::dtypeBytes(t.dtype) > budget) {
      why = "its footprint " + boxText(*box) + " does not fit the level's budget";
      return std::nullopt;
    }
    why = reuseText + transposed;
    return PromotedTensor{t.name, bufferName(t.name), *box, false, std::nullopt, std::nullopt, layout};
  }

  // Whether `e` reads a tensor other than `tensor` through an index other
  // than its last that moves with the statement's vector loops.
  bool stridedReadOfOthers(const te::Expr& e, const std::string& tensor, const poly::Statement& s) {
    if (!e) return false;
    if (e->kind == te::ExprKind::Access && e->name != tensor) {
      int i = indexAlongVectors(*e, s, vectorDims_[s.name]);
      if (i >= 0 && i + 1 != static_cast<int>(e->operands.size())) return true;
    }
    for (const auto& operand : e->operands)
      if (stridedReadOfOthers(operand, tensor, s)) return true;
    return false;
  }

  std::string bufferName(const std::string& tensor) const {
    return PromotionPlan::bufferName(plan_.sites.size(), tensor);
  }

  const poly::Scop& scop_;
  const PromotionOptions& options_;
  PromotionPlan& plan_;
  Remarks& remarks_;
  std::map<std::string, std::set<int>> vectorDims_;  // at the current site
};

}  // namespace

int64_t promotionBudget(const PromotionOptions& options, const std::string& level) {
  int64_t budget = 0;
  for (const auto& l : options.levels)
    if (l.name == level) budget = l.capacityBytes / 2;
  if (!options.levels.empty() && options.levels.front().name == level)
    budget = std::max(budget, options.panelBytes);
  return std::min(budget, kMaxPromotionSiteBytes);
}

isl::schedule promoteOperands(const poly::Scop& scop, const isl::schedule& schedule,
                              const PromotionOptions& options, PromotionPlan& plan, Remarks& remarks) {
  return Promoter(scop, options, plan, remarks).visit(schedule.root()).schedule();
}

}  // namespace tessel::target::cpu
