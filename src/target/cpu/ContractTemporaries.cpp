#include "target/cpu/ContractTemporaries.h"

#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "lir/RegisterTile.h"
#include "schedule/FlattenSchedule.h"
#include "schedule/Marks.h"
#include "schedule/Transforms.h"
#include "schedule/TreeQueries.h"
#include "target/cpu/MarkUnrollJam.h"
#include "target/cpu/MarkVectorLoops.h"

namespace tessel::target::cpu {

namespace {

// The buffers of a site live on the stack of the thread that runs the
// iteration: all of them together stay within this.
constexpr int64_t kMaxSiteBytes = 256 * 1024;

// What contraction needs to know about one temporary.
struct Temporary {
  const te::TensorDecl* decl = nullptr;
  isl::union_set accessors;  // the instances that read or write it
  isl::union_map accesses;   // instance -> element, reads and writes
  isl::union_map flow;       // write instance -> read instance of the same element
};

class Contractor {
 public:
  Contractor(const poly::Scop& scop, PromotionPlan& plan, Remarks& remarks)
      : scop_(scop), plan_(plan), remarks_(remarks) {}

  isl::schedule run(const isl::schedule& schedule) {
    // Recomputation (extension nodes) may leave instances whose values
    // nothing reads unexecuted; only executed accesses count.
    isl::union_set executed = scop_.domain;
    bool extended = false;
    schedule.root().foreach_descendant_top_down([&](const isl::schedule_node& n) {
      extended = extended || n.isa<isl::schedule_node_extension>();
      return !extended;
    });
    if (extended) executed = schedule::flattenSchedule(schedule).domain();
    // Placements by path from the root (child positions), one site each.
    std::map<std::vector<int>, std::vector<PromotedTensor>> sites;
    for (const te::TensorDecl* t : scop_.program->temporaries()) {
      std::string why;
      std::optional<Temporary> temporary = analyze(*t, executed, why);
      std::optional<isl::union_set> recomputed;
      if (temporary && extended) {
        isl::union_set writers = writesOf(scop_, temporary->accessors, t->name).domain();
        isl::union_set copies = writers.intersect(extensionRange(schedule));
        if (!copies.is_empty()) recomputed = copies;
      }
      std::vector<Part> parts;
      if (temporary) parts = placeParts(schedule.root(), *temporary, recomputed);
      if (parts.empty()) {
        const std::string reason =
            why.empty() ? std::string("no loop keeps each of its values within one iteration") : why;
        remarks_.missed(t->name, "contraction: " + t->name + " stays a full array (" + reason + ")",
                        {{"reason", reason}});
        continue;
      }
      bool fits = true;
      for (const auto& part : parts) {
        int64_t bytes = product(part.placement.box) * te::dtypeBytes(t->dtype);
        for (const auto& other : sites[part.placement.path])
          bytes += product(other.box) * te::dtypeBytes(scop_.program->tensor(other.tensor).dtype);
        fits = fits && bytes <= kMaxSiteBytes;
      }
      if (!fits) {
        const std::string reason =
            "its site's buffers would pass " + std::to_string(kMaxSiteBytes / 1024) + " KiB";
        remarks_.missed(t->name, "contraction: " + t->name + " stays a full array (" + reason + ")",
                        {{"reason", reason}, {"limit_bytes", kMaxSiteBytes}});
        continue;
      }
      for (size_t k = 0; k < parts.size(); ++k) {
        const Part& part = parts[k];
        sites[part.placement.path].push_back(
            PromotedTensor{t->name, "", part.placement.box, true, part.temporary.flow, part.recomputed, {}});
        const std::string shape = boxText(t->shape), buffer = boxText(part.placement.box);
        const std::string statements = schedule::statementNames(part.temporary.accessors);
        Remarks::Values values = {{"shape", shape},
                                  {"buffer", buffer},
                                  {"bytes", product(part.placement.box) * te::dtypeBytes(t->dtype)},
                                  {"statements", statements},
                                  {"recomputed", part.recomputed.has_value()}};
        if (parts.size() > 1) {
          values.emplace_back("part", k + 1);
          values.emplace_back("parts", parts.size());
        }
        remarks_.applied(
            t->name,
            "contraction: " + t->name + " (" + shape + ") becomes a " + buffer +
                " buffer per iteration of the loops around " + statements +
                (part.recomputed
                     ? std::string(", recomputed in each")
                     : std::string(" (where code generation splits them apart, the array stays)")) +
                (parts.size() > 1
                     ? " (part " + std::to_string(k + 1) + " of " + std::to_string(parts.size()) +
                           ": each nest computes the values it reads)"
                     : std::string()),
            std::move(values));
      }
    }
    // Deepest paths first: a mark inserted higher up does not move them.
    std::vector<std::vector<int>> paths;
    for (const auto& [path, tensors] : sites) paths.push_back(path);
    std::stable_sort(paths.begin(), paths.end(),
                     [](const auto& a, const auto& b) { return a.size() > b.size(); });
    isl::schedule result = schedule;
    for (const auto& path : paths) {
      isl::schedule_node node = result.root();
      for (int i : path) node = node.child(i);
      // Below an extension node, so that the recomputed writers are inside
      // the site too.
      while (node.isa<isl::schedule_node_extension>()) node = node.child(0);
      PromotionSite site;
      site.level = "iteration";
      for (PromotedTensor t : sites[path]) {
        t.buffer = PromotionPlan::bufferName(plan_.sites.size(), t.tensor);
        site.tensors.push_back(t);
      }
      plan_.sites.push_back(site);
      result = schedule::insertMark(node, PromotionPlan::markName(plan_.sites.size() - 1)).schedule();
    }
    return result;
  }

 private:
  // The instances extension nodes run (again) inside the subtrees they head.
  static isl::union_set extensionRange(const isl::schedule& schedule) {
    isl::union_set out = isl::union_set::empty(schedule.ctx());
    schedule.root().foreach_descendant_top_down([&](const isl::schedule_node& n) {
      if (n.isa<isl::schedule_node_extension>())
        out = out.unite(n.as<isl::schedule_node_extension>().extension().range());
      return true;
    });
    return out;
  }

  struct Placement {
    std::vector<int> path;
    std::vector<int64_t> box;
  };

  // One site of a temporary: where, and the accesses it covers.
  struct Part {
    Placement placement;
    Temporary temporary;
    std::optional<isl::union_set> recomputed;
  };

  // The sites of a temporary: one where a loop keeps all its values, or,
  // where sibling nests each compute the values they read (basteln's
  // disjoint case: each reader recomputes its own part of a producer), one
  // per nest. Empty when neither holds.
  std::vector<Part> placeParts(const isl::schedule_node& root, const Temporary& t,
                               const std::optional<isl::union_set>& recomputed) const {
    auto partOf = [&](const isl::union_set& instances) {
      Temporary part = t;
      part.accessors = t.accessors.intersect(instances);
      part.accesses = t.accesses.intersect_domain(instances);
      part.flow = t.flow.intersect_domain(instances).intersect_range(instances);
      std::optional<isl::union_set> copies;
      if (recomputed && !recomputed->intersect(instances).is_empty())
        copies = recomputed->intersect(instances);
      return std::pair{part, copies};
    };
    if (auto whole = place(root, {}, t, recomputed.has_value(), PathState()))
      return {Part{*whole, t, recomputed}};
    // Down to the node whose children split the accessors.
    isl::schedule_node node = root;
    std::vector<int> path;
    PathState state;
    for (;;) {
      state = entering(node, recomputed.has_value(), state);
      int holder = -1;
      for (int i = 0; i < static_cast<int>(node.n_children()); ++i)
        if (t.accessors.is_subset(schedule::executedBelow(node.child(i)))) holder = i;
      if (holder < 0) break;
      node = node.child(holder);
      path.push_back(holder);
    }
    if (!node.isa<isl::schedule_node_sequence>()) return {};
    std::vector<Part> parts;
    isl::union_set covered = isl::union_set::empty(t.accessors.ctx());
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i) {
      isl::union_set instances = t.accessors.intersect(schedule::executedBelow(node.child(i)));
      if (instances.is_empty()) continue;
      // Each instance runs in one nest, and reads only values written there.
      if (!instances.intersect(covered).is_empty()) return {};
      if (!t.flow.intersect_range(instances).domain().is_subset(instances)) return {};
      covered = covered.unite(instances);
      auto [part, copies] = partOf(instances);
      std::vector<int> childPath = path;
      childPath.push_back(i);
      auto placement = place(node.child(i), childPath, part, copies.has_value(), state);
      if (!placement) return {};
      parts.push_back(Part{*placement, part, copies});
    }
    if (parts.size() < 2 || !t.accessors.is_subset(covered)) return {};
    return parts;
  }

  std::optional<Temporary> analyze(const te::TensorDecl& t, const isl::union_set& executed,
                                   std::string& why) const {
    if (t.shape.empty()) {
      why = "a scalar";
      return std::nullopt;
    }
    Temporary temp{&t, isl::union_set::empty(scop_.domain.ctx()), {}, {}};
    for (const auto& s : scop_.statements) {
      const te::Stage& stage = scop_.program->stages[s.stage];
      std::vector<const te::ExprNode*> reads;
      if (s.kind != poly::StatementKind::Init) collectReads(stage.rhs, t.name, reads);
      for (const auto* r : reads)
        if (!promotableRead(scop_, *r)) {
          why = "a read's index is data-dependent or not proven in range";
          return std::nullopt;
        }
      if (!reads.empty() || stage.output == t.name)
        temp.accessors = temp.accessors.unite(isl::union_set(s.domain));
    }
    temp.accessors = temp.accessors.intersect(executed);
    if (temp.accessors.is_empty()) {
      why = "nothing reads or writes it";
      return std::nullopt;
    }
    isl::union_map reads = readsOf(scop_, temp.accessors, t.name);
    isl::union_map writes = writesOf(scop_, temp.accessors, t.name);
    temp.accesses = reads.unite(writes);
    isl::union_flow flow = isl::union_access_info(reads)
                               .set_must_source(writes)
                               .set_schedule(scop_.initialSchedule)
                               .compute_flow();
    if (!flow.may_no_source().is_empty()) {
      why = "some read sees the array's initial zeros";
      return std::nullopt;
    }
    temp.flow = flow.may_dependence();
    return temp;
  }

  // Where the search stands on the path from the root: recomputed
  // temporaries care about the bands between an extension node and the site.
  struct PathState {
    bool belowExtension = false;
    bool generatedWhole = true;  // no band there may be generated in pieces
  };

  // The state below `node`.
  static PathState entering(const isl::schedule_node& node, bool recomputed, PathState state) {
    if (recomputed && node.isa<isl::schedule_node_extension>()) state.belowExtension = true;
    if (state.belowExtension && node.isa<isl::schedule_node_band>())
      state.generatedWhole = state.generatedWhole && generatedWhole(node);
    return state;
  }

  // The deepest point under a band, at or below `node`, where the temporary
  // qualifies; `node` runs all its accesses.
  //
  // A recomputed temporary has no array to fall back on when AST generation
  // splits its site (see AstToLir), so below an extension node its site goes
  // only under bands that isl generates whole (`generatedWhole`). No band
  // above an extension node splits: isl's after_in_extension links every
  // statement around one, so they form one group.
  std::optional<Placement> place(const isl::schedule_node& node, std::vector<int> path, const Temporary& t,
                                 bool recomputed, PathState state) const {
    std::optional<Placement> best;
    state = entering(node, recomputed, state);
    if (node.isa<isl::schedule_node_band>() && node.has_parent()) {
      std::string mark = schedule::markName(node.parent());
      if (mark == schedule::kVectorMark || mark == schedule::kVectorReductionMark) return std::nullopt;
      // The register tiler keeps several iterations of an unroll-jam loop in
      // flight over the sequential loops inside (a matmul's rows over k):
      // one buffer per iteration would be shared by them all.
      if (mark == schedule::kUnrollJamMark && registerTileNest(node)) return std::nullopt;
    }
    if (node.isa<isl::schedule_node_band>() && state.generatedWhole) {
      std::vector<int> below = path;
      below.push_back(0);
      if (auto box = boxPerIteration(node.child(0), t)) best = Placement{below, *box};
    }
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i) {
      isl::schedule_node child = node.child(i);
      if (!t.accessors.is_subset(schedule::executedBelow(child))) continue;
      std::vector<int> childPath = path;
      childPath.push_back(i);
      if (auto deeper = place(child, childPath, t, recomputed, state)) best = deeper;
      break;
    }
    return best;
  }

  // Whether the subtree under `node` has the register tiler's shape: loops
  // that carry a dependence (a reduction) around vector loops of at most 64
  // elements per iteration of the loops around them, nothing else (no
  // coincident loop, no recomputation).
  static bool registerTileNest(const isl::schedule_node& node) {
    bool sequential = false, other = false;
    node.child(0).foreach_descendant_top_down([&](const isl::schedule_node& n) {
      if (other) return false;
      if (n.isa<isl::schedule_node_extension>()) other = true;
      if (!n.isa<isl::schedule_node_band>()) return !other;
      auto band = n.as<isl::schedule_node_band>();
      std::string mark = n.has_parent() ? schedule::markName(n.parent()) : "";
      if (mark == schedule::kVectorMark || mark == schedule::kVectorReductionMark) {
        isl::union_map values = isl::union_map::from(band.get_partial_schedule());
        isl::union_map perIteration = schedule::prefixRelation(n).reverse().apply_range(
            values.intersect_domain(schedule::nodeDomain(n)));
        // One map per space of the loops around (they differ where
        // extension nodes add instances).
        perIteration.foreach_map([&](isl::map m) {
          std::optional<std::vector<int64_t>> span = spanSizes(isl::union_map(m));
          other = other || !span || span->empty() || span->front() > lir::kMaxRegisterTileVectorElements;
        });
        return !other;
      }
      for (int m = 0; m < static_cast<int>(band.n_member()); ++m)
        (band.member_get_coincident(m) ? other : sequential) = true;
      return !other;
    });
    return sequential && !other;
  }

  // Whether isl's AST generator builds the subtree under `band` once per
  // iteration of its loops. It builds it once per group of statements that
  // the band's members interleave: at each member it links two statements
  // when, with the members before held equal, one may run after the other
  // somewhere from that member on; where no member does (a member constant
  // over both, as in a recomputed column), the order of the subtree splits
  // them. A sufficient condition: every statement has the same schedule
  // domain over the band's prefix, and at every value of the members before
  // it the innermost member takes at least two values.
  static bool generatedWhole(const isl::schedule_node& band) {
    isl::union_map prefix =
        schedule::prefixRelation(band.child(0)).intersect_domain(schedule::executedBelow(band.child(0)));
    std::optional<isl::set> domain;
    bool identical = true;
    int statements = 0;
    prefix.foreach_map([&](isl::map m) {
      ++statements;
      isl::set range = m.range();
      if (!domain)
        domain = range;
      else
        identical = identical && range.is_equal(*domain);
    });
    if (!domain || !identical) return false;
    if (statements == 1) return true;
    int last = static_cast<int>(domain->tuple_dim()) - 1;
    if (last < 0) return false;
    // x -> y in the domain, equal before the innermost member, y after x there.
    isl_map* pairs = isl_map_from_domain_and_range(domain->copy(), domain->copy());
    for (int d = 0; d < last; ++d) pairs = isl_map_equate(pairs, isl_dim_in, d, isl_dim_out, d);
    pairs = isl_map_order_lt(pairs, isl_dim_in, last, isl_dim_out, last);
    auto outer = [last](isl_set* set) {
      return isl::manage(isl_set_project_out(set, isl_dim_set, static_cast<unsigned>(last), 1));
    };
    isl::set varying = outer(isl_map_domain(pairs));
    return outer(domain->copy()).is_subset(varying);
  }

  // The buffer for one iteration of the loops above `node`, when every value
  // of the temporary is consumed in the iteration that produced it. With
  // recomputed producers (extension nodes) an instance runs in several
  // iterations: each iteration that reads a value must run its writer too.
  std::optional<std::vector<int64_t>> boxPerIteration(const isl::schedule_node& node,
                                                      const Temporary& t) const {
    // The site's mark goes below extension nodes (see run), where the
    // instances they add are there too.
    isl::schedule_node site = node;
    while (site.isa<isl::schedule_node_extension>()) site = site.child(0);
    isl::union_map iterations = schedule::prefixRelation(site).intersect_domain(t.accessors);
    bool outerLoops = false;
    iterations.foreach_map([&](isl::map m) { outerLoops = outerLoops || m.range_tuple_dim() > 0; });
    if (!outerLoops || !t.accessors.is_subset(iterations.domain())) return std::nullopt;
    if (!t.flow.apply_range(iterations).is_subset(iterations)) return std::nullopt;
    // The code generator places a box isl cannot fix at the least
    // elements of each iteration's footprint.
    std::optional<std::vector<int64_t>> sizes = spanSizes(iterations.reverse().apply_range(t.accesses));
    if (!sizes || product(*sizes) * te::dtypeBytes(t.decl->dtype) > kMaxSiteBytes) return std::nullopt;
    return sizes;
  }

  const poly::Scop& scop_;
  PromotionPlan& plan_;
  Remarks& remarks_;
};

}  // namespace

isl::schedule contractTemporaries(const poly::Scop& scop, const isl::schedule& schedule, PromotionPlan& plan,
                                  Remarks& remarks) {
  return Contractor(scop, plan, remarks).run(schedule);
}

}  // namespace tessel::target::cpu
