// Tessel's own scheduler (paper 004 §II): Pluto's algorithm on isl's sets and
// ILP. Rows are found one at a time for a group of statements, each the
// lexicographic minimum of an integer program over the row's coefficients:
// validity (Farkas, through isl's coefficient sets), proximity (isl's cost
// form: a bound w on every dependence distance, minimized first),
// coincidence when the row should be parallel, progression (Pluto's
// linear independence through the orthogonal complement of the rows so
// far). Rows that keep every dependence of the band's start non-negative
// form a permutable band; when none can be found the band ends (the
// dependences it carries are dropped), and when a new band cannot start the
// group is cut into its strongly connected components, in topological order.
// Constraint trees (ConstraintTree.h) are injected depth first, with the
// fallbacks of the paper's Algorithm 1. Anything it cannot schedule goes to
// isl's scheduler, said in the result's fallback.
#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "poly/IslWorkLimit.h"
#include "schedule/CheckSchedule.h"
#include "schedule/CoefficientIlp.h"
#include "schedule/Scheduler.h"

namespace tessel::schedule {

namespace {

// Schedule coefficients stay in {0, 1}: deep-learning operators need
// neither reversal (paper 004: negative coefficients never arose) nor skews.
constexpr int64_t kMaxCoefficient = 1;
// Shifts that fusion may use. A producer fused into a stencil needs its
// reach (a 7x7 convolution: 6); a larger shift only sequences two nests
// inside one loop (a reduction's consumer shifted past its last
// iteration), which SCC separation does without guards. (Max fusion with
// shifts up to the extents, as isl is set up, made single ILPs take
// seconds: harris, interpolate.)
constexpr int64_t kMaxFusionShift = 8;

// isl operations one row's program may take. Rows of operators take
// thousands; max fusion over interpolate's dozen statements took minutes
// (treated as infeasible past this, so the group is cut instead).
constexpr unsigned long kOperationsPerRow = 2'000'000;

// A dependence between two statements of a group, as Farkas constraints on
// the coefficients (c_cst, c_source..., c_sink...), or (c_cst, c...) on the
// distance vector of a statement's dependence on itself.
struct Edge {
  int source = 0;  // indices into the group
  int sink = 0;
  std::vector<LinearConstraint> farkas;
};

// The rows found so far on the current search path, per Scop statement.
struct Path {
  std::vector<std::vector<AffineRow>> rows;
  int depth = 0;
};

// Where the constraint tree stands: the alternatives for the next row (null:
// no influence left, either none was given or a leaf was reached).
struct Cursor {
  const std::vector<ConstraintNode>* alternatives = nullptr;
  std::string branch;  // the chosen alternatives so far, for --explain ("1.2")
};

struct Outcome {
  std::optional<isl::schedule> tree;
  // No tree because a constraint node cannot hold on this path: the search
  // tries another branch. Otherwise no tree means the group is beyond this
  // scheduler (isl's takes over).
  bool influenceFailed = false;
  // Smart fusion found, inside a band, that a part of the group would be
  // parallel on its own: the group is cut where the band starts, each part
  // keeping its whole band (isl's smart fusion does the same; the
  // fuse-outer pass shares outer loops again where that costs nothing).
  bool cutAtBandStart = false;
  // The constraint-tree branches that held on the path that made the tree.
  std::string explanation;
};

// What a band under construction holds.
struct Band {
  int firstRow = 0;
  int rows = 0;
};

// The statements the constraints of these nodes and their descendants name.
std::set<int> statementsNamed(const std::vector<ConstraintNode>& nodes) {
  std::set<int> named;
  for (const auto& n : nodes) {
    for (const auto& c : n.constraints)
      for (const auto& t : c.terms) named.insert(t.first.statement);
    named.merge(statementsNamed(n.children));
  }
  return named;
}

class Run {
 public:
  Run(const poly::Scop& scop, const SchedulerOptions& options, FusionStrategy fusion)
      : scop_(scop), options_(options), fusion_(fusion), ctx_(scop.domain.ctx()) {
    for (size_t s = 0; s < scop.statements.size(); ++s) {
      index_[scop.statements[s].name] = static_cast<int>(s);
      flat_.push_back(flatDirections(scop.statements[s].domain));
    }
    for (const auto& stage : scop.program->stages)
      for (const auto& [v, r] : stage.ranges) longestLoop_ = std::max(longestLoop_, r.extent());
  }

  isl::schedule schedule(const isl::union_set& domain, std::string& explanation) {
    std::vector<int> group;
    domain.foreach_set(
        [&](const isl::set& s) { group.push_back(index_.at(isl_set_get_tuple_name(s.get()))); });
    std::sort(group.begin(), group.end());
    domain_ = domain;
    isl::union_map deps = scop_.deps.validity().intersect_domain(domain).intersect_range(domain);
    Path path;
    path.rows.resize(scop_.statements.size());
    Cursor cursor;
    if (options_.constraints && !options_.constraints->empty()) {
      cursor.alternatives = &options_.constraints->roots;
      namedByTree_ = statementsNamed(options_.constraints->roots);
    }
    Outcome o = scheduleGroup(group, deps, path, cursor);
    if (!o.tree && cursor.alternatives) {
      bool influenceFailed = o.influenceFailed;
      o = scheduleGroup(group, deps, path, Cursor{});
      o.explanation = influenceFailed ? "  no branch of the constraint tree holds; scheduled without it\n"
                                      : "  the constraint tree's schedule found no row for a dependence "
                                        "cycle; scheduled without the tree\n";
    }
    if (!o.tree) throw Unschedulable{};
    explanation = explanation_ + o.explanation;
    return recomputeCoincidence(scop_, *o.tree);
  }

  // Thrown when a group needs what this scheduler does not do (a dependence
  // cycle between statements that only negative coefficients could order).
  struct Unschedulable {};

 private:
  const poly::Statement& statement(int s) const { return scop_.statements[s]; }
  int dims(int s) const { return static_cast<int>(statement(s).dims.size()); }

  // The rows so far, and the directions the domain does not extend in.
  std::vector<std::vector<int64_t>> iteratorRows(const Path& path, int s) const {
    std::vector<std::vector<int64_t>> rows = flat_[s];
    for (const auto& r : path.rows[s]) rows.push_back(r.coefficients);
    return rows;
  }
  bool fullRank(const Path& path, int s) const { return rank(iteratorRows(path, s), dims(s)) == dims(s); }

  std::vector<Edge> edgesOf(const std::vector<int>& group, const isl::union_map& deps) const {
    std::map<int, int> position;
    for (size_t i = 0; i < group.size(); ++i) position[group[i]] = static_cast<int>(i);
    std::vector<Edge> edges;
    deps.foreach_map([&](const isl::map& m) {
      if (m.is_empty()) return;
      Edge e;
      e.source = position.at(index_.at(isl_map_get_tuple_name(m.get(), isl_dim_in)));
      e.sink = position.at(index_.at(isl_map_get_tuple_name(m.get(), isl_dim_out)));
      e.farkas = farkasConstraints(e.source == e.sink ? m.deltas() : m.wrap());
      edges.push_back(std::move(e));
    });
    return edges;
  }

  // The coefficients of (c_cst, c...) as forms in the row's variables for
  // sign * (phi_sink - phi_source) (+ w when `bound`: proximity).
  AffineSubstitution forms(const Edge& e, const RowVariables& v, const std::vector<int>& group, int sign,
                           bool bound) const {
    AffineSubstitution f;
    LinearConstraint cst = v.zero();
    if (e.source != e.sink) {
      cst.coefficients[v.constant(e.sink)] += sign;
      cst.coefficients[v.constant(e.source)] -= sign;
    }
    if (bound) cst.coefficients[RowVariables::proximityBound()] += 1;
    f.components.push_back(cst);
    auto add = [&](int member, int factor) {
      for (int d = 0; d < dims(group[member]); ++d) {
        LinearConstraint c = v.zero();
        c.coefficients[v.iterator(member, d)] = factor;
        f.components.push_back(c);
      }
    };
    if (e.source == e.sink) {
      add(e.sink, sign);
    } else {
      add(e.source, -sign);
      add(e.sink, sign);
    }
    return f;
  }

  // The row of every group member at path.depth, or nothing when the
  // program is infeasible.
  std::optional<std::vector<AffineRow>> solveRow(const std::vector<int>& group,
                                                 const std::vector<Edge>& edges, const Path& path,
                                                 bool coincident, const ConstraintNode* node) {
    std::vector<int> dimsOf;
    for (int s : group) dimsOf.push_back(dims(s));
    RowVariables v(dimsOf);
    std::vector<LinearConstraint> all;
    auto bound = [&](int var, int64_t lower, std::optional<int64_t> upper) {
      LinearConstraint c = v.zero();
      c.coefficients[var] = 1;
      c.constant = -lower;
      all.push_back(c);
      if (upper) {
        c.coefficients[var] = -1;
        c.constant = *upper;
        all.push_back(c);
      }
    };
    bound(RowVariables::proximityBound(), 0, std::nullopt);
    LinearConstraint sum = v.zero();
    sum.equality = true;
    sum.coefficients[RowVariables::coefficientSum()] = 1;
    for (int m = 0; m < v.statements(); ++m) {
      bound(v.constant(m), 0, std::nullopt);
      // A shift is at most kMaxFusionShift on a row with an iterator. A row
      // without iterators has constant 0, or, for a statement that has all
      // its rows, up to the longest loop: it then runs after the others'
      // loop (a bias after its convolution's c loop, as isl places it),
      // which keeps that loop in the band: tiled with the others, not only
      // under them.
      LinearConstraint shift = v.zero();
      int64_t afterLoops = fullRank(path, group[m]) ? longestLoop_ : 0;
      shift.coefficients[v.constant(m)] = -1;
      shift.constant = afterLoops;
      for (int d = 0; d < v.dims(m); ++d) {
        bound(v.iterator(m, d), 0, kMaxCoefficient);
        sum.coefficients[v.iterator(m, d)] = -1;
        shift.coefficients[v.iterator(m, d)] = kMaxFusionShift - afterLoops;
      }
      all.push_back(shift);
      // One iterator per row at most: permutations and shifts, no skew
      // (paper 004's scenarios assume as much). A skewed row such as
      // 2c + kh keeps a reduction's inner loop in its band at the price of
      // diagonal tiles and loops no vector unit follows.
      LinearConstraint small = v.zero();
      small.constant = 1;
      for (int d = 0; d < v.dims(m); ++d) small.coefficients[v.iterator(m, d)] = -1;
      all.push_back(small);
    }
    all.push_back(sum);
    for (const auto& e : edges) {
      auto add = [&](int sign, bool proximity) {
        auto rows = substitute(e.farkas, forms(e, v, group, sign, proximity), v.count());
        all.insert(all.end(), rows.begin(), rows.end());
      };
      add(+1, false);  // validity
      if (coincident) add(-1, false);
      add(-1, true);  // proximity
    }
    // Progression (paper 004 eq. 3, 4) for the statements still short of rows.
    bool needsRow = false;
    for (int m = 0; m < v.statements(); ++m) {
      if (fullRank(path, group[m])) continue;
      needsRow = true;
      LinearConstraint total = v.zero();
      total.constant = -1;
      for (const auto& comp : orthogonalComplement(iteratorRows(path, group[m]), v.dims(m))) {
        LinearConstraint c = v.zero();
        for (int d = 0; d < v.dims(m); ++d) {
          c.coefficients[v.iterator(m, d)] = comp[d];
          total.coefficients[v.iterator(m, d)] += comp[d];
        }
        all.push_back(c);
      }
      all.push_back(total);
    }
    if (!needsRow && !node) return std::nullopt;
    if (node && !addInfluence(*node, group, v, path, all)) return std::nullopt;
    auto solution = lexicographicMinimum(ctx_, v.count(), all, kOperationsPerRow);
    if (solution.tooHard && tooHard_.insert(names(group)).second)
      explanation_ += "  a row for" + names(group) + " was too hard for isl's ILP; cut the group instead\n";
    if (!solution.point) return std::nullopt;
    return v.rows(*solution.point);
  }

  // The node's constraints on the row at path.depth, with rows above
  // replaced by their values. Constraints on statements all outside the
  // group (scheduled apart after a cut) are left to their own groups. False
  // when a constraint relates the group to a statement outside it (the
  // fusion it asks for was cut) or a constraint on fixed rows is violated.
  bool addInfluence(const ConstraintNode& node, const std::vector<int>& group, const RowVariables& v,
                    const Path& path, std::vector<LinearConstraint>& all) const {
    std::map<int, int> position;
    for (size_t i = 0; i < group.size(); ++i) position[group[i]] = static_cast<int>(i);
    for (const auto& c : node.constraints) {
      auto inGroup = [&](const auto& t) { return position.count(t.first.statement) != 0; };
      if (std::none_of(c.terms.begin(), c.terms.end(), inGroup)) continue;
      if (!std::all_of(c.terms.begin(), c.terms.end(), inGroup)) return false;
      LinearConstraint row = v.zero();
      row.constant = c.constant;
      row.equality = c.equality;
      bool free = false;
      for (const auto& [ref, factor] : c.terms) {
        int m = position.at(ref.statement);
        if (ref.row == path.depth) {
          row.coefficients[ref.dim < 0 ? v.constant(m) : v.iterator(m, ref.dim)] += factor;
          free = true;
        } else {
          const AffineRow& fixed = path.rows[ref.statement][ref.row];
          row.constant += factor * (ref.dim < 0 ? fixed.constant : fixed.coefficients[ref.dim]);
        }
      }
      if (!free && (row.equality ? row.constant != 0 : row.constant < 0)) return false;
      if (free) all.push_back(row);
    }
    return true;
  }

  // A row for the group, every statement's row in one union_pw_aff.
  isl::union_map rowMap(const std::vector<int>& group, const std::vector<AffineRow>& rows) const {
    isl::union_map out = isl::union_map::empty(ctx_);
    for (size_t m = 0; m < group.size(); ++m) out = out.unite(isl::union_map(rowAff(group[m], rows[m])));
    return out;
  }

  std::string rowText(int s, const AffineRow& row) const {
    std::ostringstream os;
    os << "{ " << statement(s).name << "[";
    // The statement's own iterator names (as its domain has them), so dumps read like isl's.
    const auto& names = statement(s).dims;
    for (int d = 0; d < dims(s); ++d) os << (d ? ", " : "") << names[static_cast<size_t>(d)];
    os << "] -> [(" << row.constant;
    for (int d = 0; d < dims(s); ++d)
      if (row.coefficients[d] != 0) os << " + " << row.coefficients[d] << "*" << names[static_cast<size_t>(d)];
    os << ")] }";
    return os.str();
  }
  isl::map rowAff(int s, const AffineRow& row) const {
    return isl::map(ctx_, rowText(s, row)).intersect_domain(statement(s).domain);
  }

  // Schedules `group` under `deps` from path.depth on, starting a band.
  Outcome scheduleGroup(const std::vector<int>& group, const isl::union_map& deps, const Path& path,
                        const Cursor& cursor) {
    // Min fusion cuts every group into its components. So do the others for
    // a band below another where some statements have all their rows: they
    // would only ride along as constants, behind guards in the inner loops.
    bool someDone = std::any_of(group.begin(), group.end(), [&](int s) { return fullRank(path, s); });
    if ((fusion_ == FusionStrategy::Min || someDone) && !cursor.alternatives) {
      auto sccs = components(group, deps);
      if (sccs.size() > 1) return sequence(sccs, deps, path, cursor);
    }
    return extendBand(group, deps, edgesOf(group, deps), Band{path.depth, 0}, path, cursor);
  }

  Outcome extendBand(const std::vector<int>& group, const isl::union_map& deps,
                     const std::vector<Edge>& edges, Band band, const Path& path, const Cursor& cursor) {
    static const std::vector<ConstraintNode> uninfluenced(1);
    const std::vector<ConstraintNode>& alternatives =
        cursor.alternatives ? *cursor.alternatives : uninfluenced;
    for (size_t a = 0; a < alternatives.size(); ++a) {
      const ConstraintNode* node = cursor.alternatives ? &alternatives[a] : nullptr;
      if (node && node->requirePermutable && band.rows == 0 && path.depth > 0) continue;
      for (bool coincident : {true, false}) {
        if (!coincident && node && node->requireCoincident) continue;
        // Smart fusion: rather than a shared row that runs sequentially,
        // end the band and cut the group where a part would get a parallel
        // row of its own (a convolution's input fused by a shift would
        // serialize h and w).
        if (!coincident && !node && fusion_ == FusionStrategy::Smart &&
            cuttingGainsParallelism(group, deps, path)) {
          if (band.rows > 0) return {std::nullopt, false, true, ""};  // cut where the band starts
          return sequence(cut(group, deps, path, cursor), deps, path, cursor);
        }
        auto rows = solveRow(group, edges, path, coincident, node);
        if (!rows) continue;
        Path next = path;
        for (size_t m = 0; m < group.size(); ++m) next.rows[group[m]].push_back((*rows)[m]);
        ++next.depth;
        Cursor below;
        if (node) {
          below.branch = cursor.branch + (cursor.branch.empty() ? "" : ".") + std::to_string(a + 1);
          if (!node->children.empty()) below.alternatives = &node->children;
        }
        Outcome o = extendBand(group, deps, edges, Band{band.firstRow, band.rows + 1}, next, below);
        if (o.cutAtBandStart && band.rows == 0)
          return sequence(cut(group, deps, path, cursor), deps, path, cursor);
        // Said only once the whole path below has succeeded (a later failure backtracks).
        if (o.tree && node && node->children.empty())
          o.explanation = "  constraint tree: branch " + below.branch + " holds for" + names(group) +
                          (namesAny(group) ? "" : " (which no constraint names)") + "\n" + o.explanation;
        if (o.tree || !o.influenceFailed) return o;
        break;  // this alternative fails deeper: the next one
      }
    }
    // No row extends the band: end it (its carried dependences drop out),
    // or, for a band with no row, cut the group into its SCCs.
    if (band.rows > 0) return closeBand(group, deps, band, path, cursor);
    bool done = std::all_of(group.begin(), group.end(), [&](int s) { return fullRank(path, s); });
    if (done && deps.is_empty() && !cursor.alternatives) return {leaf(group), false, false, ""};
    if (cursor.alternatives) {
      // Statements the constraints do not name may block them (a
      // reduction's initialization that must run before every update): run
      // those apart, before or after, and retry the constraints on the rest.
      auto parts = peelUnnamed(group, deps, *cursor.alternatives);
      if (parts.size() > 1) return sequence(parts, deps, path, cursor);
    }
    auto parts = cut(group, deps, path, cursor);
    if (parts.size() > 1) return sequence(parts, deps, path, cursor);
    if (cursor.alternatives) return {std::nullopt, true, false, ""};
    return {std::nullopt, false, false, ""};
  }

  Outcome closeBand(const std::vector<int>& group, const isl::union_map& deps, const Band& band,
                    const Path& path, const Cursor& cursor) {
    // Dependences whose instances the band runs at the same time remain.
    isl::union_map time = isl::union_map::empty(ctx_);
    std::vector<isl::union_map> members;
    for (int r = band.firstRow; r < band.firstRow + band.rows; ++r) {
      std::vector<AffineRow> rows;
      for (int s : group) rows.push_back(path.rows[s][r]);
      members.push_back(rowMap(group, rows));
    }
    isl::union_map remaining = deps;
    for (const auto& m : members) remaining = remaining.intersect(m.apply_range(m.reverse()));
    Outcome child = scheduleGroup(group, remaining, path, cursor);
    if (!child.tree) return child;
    // Rows that are one constant for the whole group order nothing: no loop.
    std::vector<int> kept;
    for (int r = 0; r < band.rows; ++r) {
      bool constant = true;
      for (int s : group) {
        const AffineRow& row = path.rows[s][band.firstRow + r];
        constant =
            constant && row.isConstant() && row.constant == path.rows[group[0]][band.firstRow + r].constant;
      }
      if (!constant) kept.push_back(r);
    }
    if (kept.empty()) return child;
    std::ostringstream os;
    os << "[";
    for (size_t k = 0; k < kept.size(); ++k) {
      os << (k ? ", " : "") << "{ ";
      for (size_t m = 0; m < group.size(); ++m) {
        std::string text = rowText(group[m], path.rows[group[m]][band.firstRow + kept[k]]);
        os << (m ? "; " : "") << text.substr(2, text.size() - 4);
      }
      os << " }";
    }
    os << "]";
    isl::multi_union_pw_aff partial(ctx_, os.str());
    isl::schedule_node node = child.tree->root().child(0).insert_partial_schedule(partial);
    auto bandNode = node.as<isl::schedule_node_band>().set_permutable(true);
    return {bandNode.schedule(), false, false, child.explanation};
  }

  isl::schedule leaf(const std::vector<int>& group) const {
    std::optional<isl::schedule> out;
    for (int s : group) {
      isl::schedule one = isl::schedule::from_domain(domain_.intersect(isl::union_set(statement(s).domain)));
      out = out ? isl::manage(isl_schedule_sequence(out->release(), one.release())) : one;
    }
    return *out;
  }

  Outcome sequence(const std::vector<std::vector<int>>& parts, const isl::union_map& deps, const Path& path,
                   const Cursor& cursor) {
    std::optional<isl::schedule> out;
    std::string explanation;
    for (const auto& part : parts) {
      isl::union_set instances = isl::union_set::empty(ctx_);
      for (int s : part) instances = instances.unite(isl::union_set(statement(s).domain));
      Outcome o =
          scheduleGroup(part, deps.intersect_domain(instances).intersect_range(instances), path, cursor);
      if (!o.tree) return o;
      out = out ? isl::manage(isl_schedule_sequence(out->release(), o.tree->release())) : *o.tree;
      explanation += o.explanation;
    }
    return {out, false, false, explanation};
  }

  // The group cut into its components, then, except under min fusion or
  // constraints, neighbours merged back where the merged group's band keeps
  // every statement's rows and parallel rows (isl's smart clustering): a
  // reduction's initialization stays in its update's nest. Statements that
  // have all their rows stay apart (they would only ride along as constants).
  std::vector<std::vector<int>> cut(const std::vector<int>& group, const isl::union_map& deps,
                                    const Path& path, const Cursor& cursor) {
    auto parts = components(group, deps);
    if (fusion_ == FusionStrategy::Min || cursor.alternatives || parts.size() < 2) return parts;
    auto done = [&](const std::vector<int>& part) {
      return std::all_of(part.begin(), part.end(), [&](int s) { return fullRank(path, s); });
    };
    Reach reach = reachability(group, deps);
    auto tryMerge = [&](size_t a, size_t b) {
      if (done(parts[a]) || done(parts[b])) return false;
      // Merging a and b must leave the parts acyclic: no part on a path between them.
      for (size_t c = 0; c < parts.size(); ++c)
        if (c != a && c != b &&
            ((reach.from(parts[a], parts[c], false) && reach.from(parts[c], parts[b], false)) ||
             (reach.from(parts[b], parts[c], false) && reach.from(parts[c], parts[a], false))))
          return false;
      std::vector<int> both = parts[a];
      both.insert(both.end(), parts[b].begin(), parts[b].end());
      std::sort(both.begin(), both.end());
      if (!fusesWell(parts[a], parts[b], both, deps, path)) return false;
      parts[a] = both;
      parts.erase(parts.begin() + static_cast<long>(b));
      return true;
    };
    // Producers with their consumers first (a reduction's initialization
    // with its update, not with an unrelated statement before it), then
    // neighbours in the order.
    for (bool direct : {true, false}) {
      for (bool merged = true; merged;) {
        merged = false;
        parts = ordered(parts, reach);
        for (size_t a = 0; a < parts.size() && !merged; ++a)
          for (size_t b = a + 1; b < parts.size() && !merged; ++b)
            if (direct ? reach.from(parts[a], parts[b], true) : b == a + 1) merged = tryMerge(a, b);
      }
    }
    if (parts.size() < 2) return components(group, deps);
    return ordered(parts, reach);
  }

  // Per statement: rows of the first band it would get (non-constant ones)
  // and how many of them, from the outermost, are parallel.
  struct BandProfile {
    int rows = 0;
    int parallel = 0;
  };
  std::map<int, BandProfile> bandProfile(const std::vector<int>& group, const isl::union_map& deps,
                                         Path path) {
    std::map<int, BandProfile> profile;
    auto inside = restrictedTo(group, deps);
    auto edges = edgesOf(group, inside);
    for (int row = 0;; ++row) {
      bool coincident = true;
      auto rows = solveRow(group, edges, path, true, nullptr);
      if (!rows) {
        if (fusion_ == FusionStrategy::Smart && cuttingGainsParallelism(group, inside, path)) break;
        coincident = false;
        rows = solveRow(group, edges, path, false, nullptr);
      }
      if (!rows) break;
      for (size_t m = 0; m < group.size(); ++m) {
        path.rows[group[m]].push_back((*rows)[m]);
        if ((*rows)[m].isConstant()) continue;
        BandProfile& p = profile[group[m]];
        if (coincident && p.parallel == p.rows) ++p.parallel;
        ++p.rows;
      }
    }
    return profile;
  }

  bool fusesWell(const std::vector<int>& first, const std::vector<int>& second, const std::vector<int>& both,
                 const isl::union_map& deps, const Path& path) {
    auto together = bandProfile(both, deps, path);
    if (fusion_ == FusionStrategy::Max) {
      // Max fusion: whenever the group shares a loop at all.
      return std::any_of(first.begin(), first.end(), [&](int s) { return together[s].rows > 0; }) &&
             std::any_of(second.begin(), second.end(), [&](int s) { return together[s].rows > 0; });
    }
    for (const auto* part : {&first, &second})
      for (const auto& [s, alone] : bandProfile(*part, deps, path))
        if (together[s].rows < alone.rows || together[s].parallel < alone.parallel) return false;
    return true;
  }

  isl::union_map restrictedTo(const std::vector<int>& group, const isl::union_map& deps) const {
    isl::union_set instances = isl::union_set::empty(ctx_);
    for (int s : group) instances = instances.unite(isl::union_set(statement(s).domain));
    return deps.intersect_domain(instances).intersect_range(instances);
  }

  // The group as a sequence: components no constraint of `alternatives` (or
  // below) names that can run first, then the rest together, then unnamed
  // components that can run last. One part when nothing can be peeled.
  std::vector<std::vector<int>> peelUnnamed(const std::vector<int>& group, const isl::union_map& deps,
                                            const std::vector<ConstraintNode>& alternatives) const {
    std::set<int> named = statementsNamed(alternatives);
    auto sccs = components(group, deps);
    int n = static_cast<int>(sccs.size());
    auto precedes = [&](int a, int b) {  // some dependence from part a to part b
      isl::union_set from = isl::union_set::empty(ctx_), to = isl::union_set::empty(ctx_);
      for (int s : sccs[a]) from = from.unite(isl::union_set(statement(s).domain));
      for (int s : sccs[b]) to = to.unite(isl::union_set(statement(s).domain));
      return !deps.intersect_domain(from).intersect_range(to).is_empty();
    };
    auto unnamed = [&](int a) {
      return std::none_of(sccs[a].begin(), sccs[a].end(), [&](int s) { return named.count(s) != 0; });
    };
    std::vector<int> place(n, 0);  // -1: head, 1: tail, 0: middle
    std::vector<int> head, tail;
    for (bool changed = true; changed;) {
      changed = false;
      for (int a = 0; a < n; ++a) {
        if (place[a] != 0 || !unnamed(a)) continue;
        bool ready = true;
        for (int b = 0; b < n && ready; ++b) ready = place[b] == -1 || b == a || !precedes(b, a);
        if (ready) place[a] = -1, head.push_back(a), changed = true;
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (int a = n - 1; a >= 0; --a) {
        if (place[a] != 0 || !unnamed(a)) continue;
        bool ready = true;
        for (int b = 0; b < n && ready; ++b) ready = place[b] == 1 || b == a || !precedes(a, b);
        if (ready) place[a] = 1, tail.insert(tail.begin(), a), changed = true;
      }
    }
    std::vector<std::vector<int>> parts;
    for (int a : head) parts.push_back(sccs[a]);
    std::vector<int> middle;
    for (int a = 0; a < n; ++a)
      if (place[a] == 0) middle.insert(middle.end(), sccs[a].begin(), sccs[a].end());
    std::sort(middle.begin(), middle.end());
    if (!middle.empty()) parts.push_back(middle);
    for (int a : tail) parts.push_back(sccs[a]);
    return parts;
  }

  // Smart fusion: a first row shared by the whole group cannot be parallel,
  // but some component that still needs rows would have a parallel one alone.
  bool cuttingGainsParallelism(const std::vector<int>& group, const isl::union_map& deps, const Path& path) {
    auto sccs = components(group, deps);
    if (sccs.size() < 2) return false;
    for (const auto& part : sccs) {
      if (std::all_of(part.begin(), part.end(), [&](int s) { return fullRank(path, s); })) continue;
      isl::union_set instances = isl::union_set::empty(ctx_);
      for (int s : part) instances = instances.unite(isl::union_set(statement(s).domain));
      isl::union_map inside = deps.intersect_domain(instances).intersect_range(instances);
      if (solveRow(part, edgesOf(part, inside), path, true, nullptr)) return true;
    }
    return false;
  }

  // Which statements of a group depend on which: directly (an edge) and
  // through any chain (reaches).
  struct Reach {
    std::map<int, int> position;  // statement -> index in the group
    std::vector<std::vector<bool>> edge, reaches;
    bool from(const std::vector<int>& a, const std::vector<int>& b, bool direct) const {
      for (int s : a)
        for (int t : b)
          if (s != t && (direct ? edge : reaches)[position.at(s)][position.at(t)]) return true;
      return false;
    }
  };
  Reach reachability(const std::vector<int>& group, const isl::union_map& deps) const {
    Reach r;
    int n = static_cast<int>(group.size());
    for (int i = 0; i < n; ++i) r.position[group[i]] = i;
    r.edge.assign(n, std::vector<bool>(n, false));
    deps.foreach_map([&](const isl::map& m) {
      if (m.is_empty()) return;
      int from = r.position.at(index_.at(isl_map_get_tuple_name(m.get(), isl_dim_in)));
      int to = r.position.at(index_.at(isl_map_get_tuple_name(m.get(), isl_dim_out)));
      r.edge[from][to] = true;
    });
    r.reaches = r.edge;
    for (int i = 0; i < n; ++i) r.reaches[i][i] = true;
    for (int k = 0; k < n; ++k)  // transitive closure: groups are small
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) r.reaches[i][j] = r.reaches[i][j] || (r.reaches[i][k] && r.reaches[k][j]);
    return r;
  }

  // `parts` (an acyclic partition) in a topological order, the part with
  // the earliest statement first among those ready (source order when free).
  static std::vector<std::vector<int>> ordered(std::vector<std::vector<int>> parts, const Reach& reach) {
    std::vector<std::vector<int>> out;
    while (!parts.empty()) {
      size_t next = parts.size();
      for (size_t a = 0; a < parts.size(); ++a) {
        bool ready = true;
        for (size_t b = 0; b < parts.size() && ready; ++b)
          ready = a == b || !reach.from(parts[b], parts[a], false);
        if (ready && (next == parts.size() || parts[a][0] < parts[next][0])) next = a;
      }
      out.push_back(parts[next]);
      parts.erase(parts.begin() + static_cast<long>(next));
    }
    return out;
  }

  // The strongly connected components of the dependence graph on `group`,
  // in a topological order that keeps source order where it is free.
  std::vector<std::vector<int>> components(const std::vector<int>& group, const isl::union_map& deps) const {
    Reach reach = reachability(group, deps);
    std::vector<std::vector<int>> parts;
    std::set<int> placed;
    for (int s : group) {
      if (placed.count(s)) continue;
      parts.emplace_back();
      for (int t : group)
        if (reach.reaches[reach.position.at(s)][reach.position.at(t)] &&
            reach.reaches[reach.position.at(t)][reach.position.at(s)])
          parts.back().push_back(t), placed.insert(t);
    }
    return ordered(parts, reach);
  }

  // Whether a constraint of the tree names a statement of `group`.
  bool namesAny(const std::vector<int>& group) const {
    return std::any_of(group.begin(), group.end(), [&](int s) { return namedByTree_.count(s) > 0; });
  }

  std::string names(const std::vector<int>& group) const {
    std::string out;
    for (int s : group) out += " " + statement(s).name;
    return out;
  }

  const poly::Scop& scop_;
  const SchedulerOptions& options_;
  FusionStrategy fusion_;
  isl::ctx ctx_;
  std::map<std::string, int> index_;
  std::vector<std::vector<std::vector<int64_t>>> flat_;  // per statement: flatDirections
  int64_t longestLoop_ = 1;
  isl::union_set domain_;
  std::string explanation_;        // what holds whatever the path: programs too hard for isl
  std::set<std::string> tooHard_;  // groups whose row programs ran out of operations (said once)
  std::set<int> namedByTree_;      // statements some constraint of the tree names
};

class TesselScheduler final : public Scheduler {
 public:
  const char* name() const override { return "tessel"; }

  ScheduleResult run(const poly::Scop& scop, const SchedulerOptions& options) const override {
    isl::union_set domain = options.instances ? scop.domain.intersect(*options.instances) : scop.domain;
    if (options.fusion != FusionStrategy::None) return schedule(scop, domain, options.fusion, options);
    return schedulePerStatement(scop, domain, [&](const isl::union_set& part) {
      return schedule(scop, part, FusionStrategy::Smart, options);
    });
  }

 private:
  static ScheduleResult schedule(const poly::Scop& scop, const isl::union_set& domain, FusionStrategy fusion,
                                 const SchedulerOptions& options) {
    ScheduleResult out;
    std::string explanation;
    bool unschedulable = false;
    poly::IslWorkLimit limit{options.operationLimit, options.timeLimit};
    auto attempt = poly::runBounded(domain.ctx(), limit, [&]() -> isl::schedule {
      try {
        return Run(scop, options, fusion).schedule(domain, explanation);
      } catch (const Run::Unschedulable&) {
        unschedulable = true;
        return isl::schedule::from_domain(domain);
      }
    });
    if (attempt.value && !unschedulable) {
      out.tree = *attempt.value;
      out.explanation = explanation;
      return out;
    }
    std::string why = unschedulable
                          ? "Tessel's scheduler found no row for a dependence cycle"
                          : std::string("Tessel's scheduler stopped at ") +
                                (attempt.stop == poly::IslStop::Quota ? "isl's operation quota"
                                                                      : "the scheduling time limit");
    SchedulerOptions islOptions = options;
    islOptions.instances = domain;
    islOptions.fusion = fusion;
    ScheduleResult byIsl = makeIslScheduler()->run(scop, islOptions);
    byIsl.fallback =
        why + "; used isl's scheduler" + (byIsl.fallback.empty() ? "" : " (" + byIsl.fallback + ")");
    byIsl.madeBy = "isl's scheduler";
    return byIsl;
  }
};

}  // namespace

std::unique_ptr<Scheduler> makeTesselScheduler() { return std::make_unique<TesselScheduler>(); }

}  // namespace tessel::schedule
