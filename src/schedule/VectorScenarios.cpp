#include "schedule/VectorScenarios.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/val.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "schedule/CoefficientIlp.h"

namespace tessel::schedule {

namespace {

struct Access {
  bool write = false;
  bool resident = false;        // the whole tensor stays in the first cache level, whatever the order
  std::vector<int64_t> stride;  // elements, per statement dimension
};

// The affine accesses of `st` with their linearized strides; others are left out.
std::vector<Access> accessesOf(const poly::Scop& scop, const poly::Statement& st, int64_t residentBytes) {
  std::vector<Access> out;
  for (bool write : {true, false}) {
    (write ? st.writes : st.reads).foreach_map([&](const isl::map& m) {
      const te::TensorDecl* tensor = scop.program->findTensor(isl_map_get_tuple_name(m.get(), isl_dim_out));
      if (!tensor || !m.is_single_valued()) return;
      isl_pw_multi_aff* pma = isl_pw_multi_aff_from_map(m.copy());
      if (!pma) return;
      isl_multi_aff* ma = nullptr;
      if (isl_pw_multi_aff_n_piece(pma) == 1)
        isl_pw_multi_aff_foreach_piece(
            pma,
            [](isl_set* set, isl_multi_aff* piece, void* user) -> isl_stat {
              *static_cast<isl_multi_aff**>(user) = piece;
              isl_set_free(set);
              return isl_stat_ok;
            },
            &ma);
      isl_pw_multi_aff_free(pma);
      if (!ma) return;
      isl_size subscripts = isl_multi_aff_dim(ma, isl_dim_out);
      Access a;
      a.write = write;
      a.resident = tensor->numElements() * te::dtypeBytes(tensor->dtype) <= residentBytes;
      a.stride.assign(st.dims.size(), 0);
      bool affine = subscripts == static_cast<isl_size>(tensor->shape.size());
      for (int k = 0; k < subscripts && affine; ++k) {
        isl_aff* aff = isl_multi_aff_get_at(ma, k);
        affine = isl_aff_dim(aff, isl_dim_div) == 0;
        int64_t pitch = 1;
        for (size_t m2 = static_cast<size_t>(k) + 1; m2 < tensor->shape.size(); ++m2)
          pitch *= tensor->shape[m2];
        for (size_t d = 0; d < st.dims.size() && affine; ++d) {
          isl_val* v = isl_aff_get_coefficient_val(aff, isl_dim_in, static_cast<int>(d));
          affine = isl_val_is_int(v) == isl_bool_true;
          if (affine) a.stride[d] += isl_val_get_num_si(v) * pitch;
          isl_val_free(v);
        }
        isl_aff_free(aff);
      }
      isl_multi_aff_free(ma);
      if (affine) out.push_back(a);
    });
  }
  return out;
}

// Costs closer than this are equal: sums of the same terms in another order.
constexpr double kCostTolerance = 1e-9;

// A statement's loop order, innermost first, with its cost.
struct Order {
  std::vector<int> innermostFirst;
  double cost = 0;
};

class ScenarioBuilder {
 public:
  ScenarioBuilder(const poly::Scop& scop, const ScenarioTarget& target, const ScenarioWeights& weights)
      : scop_(scop), target_(target), w_(weights) {}

  VectorScenarios build() {
    std::vector<int> steered;  // statements with rows
    for (size_t s = 0; s < scop_.statements.size(); ++s) {
      const auto& st = scop_.statements[s];
      rows_.push_back(static_cast<int>(st.dims.size()) -
                      rank(flatDirections(st.domain), static_cast<int>(st.dims.size())));
      accesses_.push_back(accessesOf(scop_, st, target_.residentBytes));
      // A reduction's initialization is not steered: it has no order of its
      // own to choose (it rides with its update, at constant rows), and
      // constraints on it would contradict the update's.
      if (rows_.back() > 0 && st.kind != poly::StatementKind::Init) steered.push_back(static_cast<int>(s));
    }
    VectorScenarios out;
    if (steered.empty()) return out;
    std::map<int, std::vector<Order>> orders;
    for (int s : steered) orders[s] = ordersOf(s);
    // Scenarios: one order per statement, the best totals kept (a beam).
    std::vector<std::pair<double, std::map<int, Order>>> scenarios{{0.0, {}}};
    for (int s : steered) {
      std::vector<std::pair<double, std::map<int, Order>>> next;
      for (const auto& [cost, chosen] : scenarios)
        for (const auto& o : orders[s]) {
          auto more = chosen;
          more[s] = o;
          next.push_back({cost + o.cost, more});
        }
      // Equal totals (up to rounding) keep the statements' order preference.
      std::stable_sort(next.begin(), next.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first + kCostTolerance; });
      if (static_cast<int>(next.size()) > target_.maxScenarios)
        next.resize(static_cast<size_t>(target_.maxScenarios));
      scenarios = std::move(next);
    }
    std::ostringstream explain;
    for (size_t k = 0; k < scenarios.size(); ++k) {
      explain << "  scenario " << k + 1 << " (cost " << scenarios[k].first << "):";
      for (const auto& [s, o] : scenarios[k].second) {
        explain << " " << scop_.statements[static_cast<size_t>(s)].name << "[";
        for (size_t j = o.innermostFirst.size(); j-- > 0;)
          explain << scop_.statements[static_cast<size_t>(s)].dims[static_cast<size_t>(o.innermostFirst[j])]
                  << (j ? " " : "");
        explain << "]";
      }
      explain << "\n";
    }
    // Variants: fused first, then the scenarios alone, then relaxed (only the costliest statement).
    for (int variant = 0; variant < 3; ++variant)
      for (const auto& [cost, chosen] : scenarios) insert(out.tree, path(chosen, variant));
    explain << "  " << out.tree.roots.size()
            << " alternatives for row 0 (fused variants, then plain, then relaxed)\n";
    out.explanation = explain.str();
    return out;
  }

 private:
  int64_t extent(int s, int d) const {
    const auto& st = scop_.statements[static_cast<size_t>(s)];
    const auto& stage = scop_.program->stages[static_cast<size_t>(st.stage)];
    auto it = stage.ranges.find(st.dims[static_cast<size_t>(d)]);
    return it == stage.ranges.end() ? 1 : it->second.extent();
  }

  // Algorithm 2's cost of placing dimension d next (outward) after `chosen`.
  double cost(int s, int d, const std::vector<int>& chosen) const {
    const auto& accesses = accesses_[static_cast<size_t>(s)];
    double vectorStores = 0, vectorLoads = 0;
    int64_t shortest = 0;
    for (const auto& a : accesses) {
      int64_t stride = std::abs(a.stride[static_cast<size_t>(d)]);
      bool vectorizable = a.stride[static_cast<size_t>(d)] == 0 || a.stride[static_cast<size_t>(d)] == 1;
      if (chosen.empty() && vectorizable) (a.write ? vectorStores : vectorLoads) += 1;
      if (!a.resident && stride > 0 && (shortest == 0 || stride < shortest)) shortest = stride;
    }
    int atShortest = 0;
    for (const auto& a : accesses)
      atShortest += !a.resident && shortest > 0 && std::abs(a.stride[static_cast<size_t>(d)]) == shortest;
    double width =
        static_cast<double>(std::min<int64_t>(extent(s, d), target_.widthLimit)) / target_.widthLimit;
    // Accesses sharing a stride gain from it only while it is short: each
    // counts in full up to L elements, then by L / stride.
    double shortness =
        shortest > 0 ? std::min(1.0, static_cast<double>(target_.widthLimit) / static_cast<double>(shortest))
                     : 0;
    return w_.store * vectorStores + w_.load * vectorLoads +
           (shortest > 0 ? w_.shortStride / static_cast<double>(shortest) : 0) +
           w_.shortStrideCount * atShortest * shortness + w_.width * width;
  }

  // The statement's best innermost orders: two candidates per position.
  std::vector<Order> ordersOf(int s) const {
    int dims = static_cast<int>(scop_.statements[static_cast<size_t>(s)].dims.size());
    int positions = std::min(target_.innermostLoops, rows_[static_cast<size_t>(s)]);
    std::vector<Order> beam{{}};
    for (int p = 0; p < positions; ++p) {
      std::vector<Order> next;
      for (const auto& o : beam) {
        std::vector<std::pair<double, int>> candidates;
        for (int d = 0; d < dims; ++d) {
          if (std::find(o.innermostFirst.begin(), o.innermostFirst.end(), d) != o.innermostFirst.end())
            continue;
          if (extent(s, d) <= 1) continue;  // a fixed dimension has no loop
          candidates.push_back({cost(s, d, o.innermostFirst), d});
        }
        std::stable_sort(candidates.begin(), candidates.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        for (size_t c = 0; c < candidates.size() && c < 2; ++c) {
          Order more = o;
          more.innermostFirst.push_back(candidates[c].second);
          more.cost += candidates[c].first;
          next.push_back(more);
        }
      }
      if (next.empty()) break;
      beam = std::move(next);
    }
    // The cost of a loop away from the innermost position does not depend on
    // the loops inside it, so orders of the same loops tie; the one closest to
    // the statement's own order (fewest inversions) goes first: NHWC -> NCHW
    // then keeps c outside h, writing whole rows of h per channel block.
    auto inversions = [](const Order& o) {
      int count = 0;
      for (size_t a = 0; a < o.innermostFirst.size(); ++a)
        for (size_t b = a + 1; b < o.innermostFirst.size(); ++b)
          count += o.innermostFirst[a] < o.innermostFirst[b];
      return count;
    };
    std::stable_sort(beam.begin(), beam.end(), [&](const Order& a, const Order& b) {
      if (std::abs(a.cost - b.cost) > kCostTolerance) return a.cost > b.cost;
      return inversions(a) < inversions(b);
    });
    return beam;
  }

  CoefficientConstraint fix(int s, int row, int d, int64_t value) const {
    CoefficientConstraint c;
    c.terms.push_back({CoefficientRef{s, row, d}, 1});
    c.constant = -value;
    c.equality = true;
    const auto& st = scop_.statements[static_cast<size_t>(s)];
    c.text = st.name + "." + st.dims[static_cast<size_t>(d)] + " = " + std::to_string(value);
    return c;
  }

  // Constraints per row for one scenario: the order's loops innermost in
  // each statement's own rows, zero above; with `variant` 0 also the
  // statements that depend on each other scheduled alike above their
  // innermost rows (shared iterator names and constants); with 2 only the
  // costliest statement.
  std::vector<std::vector<CoefficientConstraint>> path(const std::map<int, Order>& chosen,
                                                       int variant) const {
    int depth = 0;
    for (const auto& [s, o] : chosen) depth = std::max(depth, rows_[static_cast<size_t>(s)]);
    std::vector<std::vector<CoefficientConstraint>> rows(static_cast<size_t>(depth));
    int costliest = chosen.begin()->first;
    for (const auto& [s, o] : chosen)
      if (o.cost > chosen.at(costliest).cost) costliest = s;
    for (const auto& [s, o] : chosen) {
      if (variant == 2 && s != costliest) continue;
      int n = rows_[static_cast<size_t>(s)];
      for (size_t j = 0; j < o.innermostFirst.size(); ++j) {
        int at = n - 1 - static_cast<int>(j);
        rows[static_cast<size_t>(at)].push_back(fix(s, at, o.innermostFirst[j], 1));
        for (int r = 0; r < at; ++r)
          rows[static_cast<size_t>(r)].push_back(fix(s, r, o.innermostFirst[j], 0));
      }
    }
    if (variant == 0) {
      for (const auto& [s, os] : chosen)
        for (const auto& [t, ot] : chosen) {
          if (t <= s || !dependent(s, t)) continue;
          const auto& a = scop_.statements[static_cast<size_t>(s)];
          const auto& b = scop_.statements[static_cast<size_t>(t)];
          int shared = std::min(rows_[static_cast<size_t>(s)], rows_[static_cast<size_t>(t)]);
          for (int r = 0; r < shared; ++r) {
            auto equate = [&](int da, int db, const std::string& name) {
              CoefficientConstraint c;
              c.terms = {{CoefficientRef{s, r, da}, 1}, {CoefficientRef{t, r, db}, -1}};
              c.equality = true;
              c.text = a.name + "." + name + " = " + b.name + "." + name;
              rows[static_cast<size_t>(r)].push_back(c);
            };
            for (size_t da = 0; da < a.dims.size(); ++da)
              for (size_t db = 0; db < b.dims.size(); ++db)
                if (a.dims[da] == b.dims[db]) equate(static_cast<int>(da), static_cast<int>(db), a.dims[da]);
            equate(-1, -1, "1");
          }
        }
    }
    return rows;
  }

  bool dependent(int s, int t) const {
    isl::union_map deps = scop_.deps.validity();
    isl::union_set a(scop_.statements[static_cast<size_t>(s)].domain),
        b(scop_.statements[static_cast<size_t>(t)].domain);
    return !deps.intersect_domain(a).intersect_range(b).is_empty() ||
           !deps.intersect_domain(b).intersect_range(a).is_empty();
  }

  // A node's constraints as a set: scenarios that put the same loops below a
  // row list them in another order.
  static std::string key(const std::vector<CoefficientConstraint>& constraints) {
    std::vector<std::string> texts;
    for (const auto& c : constraints) texts.push_back(c.text);
    std::sort(texts.begin(), texts.end());
    std::string k;
    for (const auto& t : texts) k += t + ";";
    return k;
  }

  // Adds the path to the tree, sharing the nodes of equal prefixes.
  static void insert(ConstraintTree& tree, const std::vector<std::vector<CoefficientConstraint>>& path) {
    std::vector<ConstraintNode>* level = &tree.roots;
    for (const auto& constraints : path) {
      std::string k = key(constraints);
      auto it = std::find_if(level->begin(), level->end(),
                             [&](const ConstraintNode& n) { return key(n.constraints) == k; });
      if (it == level->end()) {
        ConstraintNode node;
        node.constraints = constraints;
        level->push_back(node);
        it = level->end() - 1;
      }
      level = &it->children;
    }
  }

  const poly::Scop& scop_;
  ScenarioTarget target_;
  ScenarioWeights w_;
  std::vector<int> rows_;  // per statement: rows it needs
  std::vector<std::vector<Access>> accesses_;
};

}  // namespace

VectorScenarios buildVectorScenarios(const poly::Scop& scop, const ScenarioTarget& target,
                                     const ScenarioWeights& weights) {
  return ScenarioBuilder(scop, target, weights).build();
}

}  // namespace tessel::schedule
