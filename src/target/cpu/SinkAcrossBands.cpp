#include "target/cpu/SinkAcrossBands.h"

#include <isl/schedule_node.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <sstream>

#include "schedule/CheckSchedule.h"
#include "schedule/Transforms.h"
#include "schedule/TreeQueries.h"
#include "target/cpu/AccessStride.h"
#include "tessel/error.h"
#include "tile/BandModel.h"

namespace tessel::target::cpu {

namespace {

// Fewer iterations make no vector at all (the vectorizer keeps them scalar).
constexpr int64_t kMinVectorIterations = 4;

// Lines per useful lane: a loop shorter than a vector pays for the idle lanes.
double perLane(double lines, int64_t extent) {
  return extent < kVectorLanesF32 ? lines * static_cast<double>(kVectorLanesF32) /
                                        static_cast<double>(std::max<int64_t>(extent, 1))
                                  : lines;
}

// Cache lines one iteration of `member` touches over the band's statements,
// writes counted twice (as sink-contiguous weighs them); nullopt when an
// access moves by more than one element (no unit-stride vector).
std::optional<double> linesPerIteration(const poly::Scop& scop, const tile::BandModel& model, int member) {
  double total = 0;
  bool strided = false;
  auto add = [&](const isl::map& access, int dim, double weight) {
    int c = contiguity(access, dim);
    strided = strided || c < 0;
    total += weight * (c > 0 ? 1.0 / 16 : c < 0 ? 1.0 : 0.0);
  };
  for (const auto& name : model.statements()) {
    int dim = model.statementDim(name, member);
    if (dim < 0) return std::nullopt;
    const poly::Statement& st = scop.statement(name);
    st.reads.foreach_map([&](isl::map m) { add(m, dim, 1); });
    st.writes.foreach_map([&](isl::map m) { add(m, dim, 2); });
  }
  if (strided) return std::nullopt;
  return total;
}

class AcrossBands {
 public:
  AcrossBands(const poly::Scop& scop, Remarks& remarks) : scop_(scop), remarks_(remarks) {}

  // The outermost band each move applies to moves; the others are looked into.
  isl::schedule_node visit(const isl::schedule_node& root) {
    return schedule::rewriteTopDown(root,
                                    [this](isl::schedule_node node) -> std::optional<isl::schedule_node> {
                                      if (node.isa<isl::schedule_node_band>() && schedule::hasBandBelow(node))
                                        return move(node.as<isl::schedule_node_band>());
                                      return std::nullopt;
                                    });
  }

 private:
  // The innermost loops below `band` now: the last member of each innermost
  // band under it, its cost per useful lane, or +infinity when it makes no
  // unit-stride vectors at all.
  double innermostCost(const isl::schedule_node& node, bool below = false) const {
    double worst = 0;
    if (below && node.isa<isl::schedule_node_band>() && !schedule::hasBandBelow(node)) {
      tile::BandModel model(scop_, node.as<isl::schedule_node_band>(), 64);
      int last = model.members() - 1;
      auto lines = linesPerIteration(scop_, model, last);
      if (model.extent(last) < kMinVectorIterations || !lines) return std::numeric_limits<double>::infinity();
      return perLane(*lines, model.extent(last));
    }
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i)
      worst = std::max(worst, innermostCost(node.child(i), true));
    return worst;
  }

  std::optional<isl::schedule_node> move(const isl::schedule_node_band& band) {
    tile::BandModel model(scop_, band, 64);
    double now = innermostCost(band);
    int best = -1;
    double bestLines = now;
    for (int m = 0; m < model.members(); ++m) {
      // A loop shorter than a vector makes a partial one, its lines counted
      // per useful lane: better than a strided or shorter innermost loop (a
      // 7x7 convolution's w against its strided channel loop: 5x faster).
      if (!model.coincident(m) || model.extent(m) < kMinVectorIterations) continue;
      auto lines = linesPerIteration(scop_, model, m);
      if (lines) *lines = perLane(*lines, model.extent(m));
      if (lines && *lines < bestLines) {
        best = m;
        bestLines = *lines;
      }
    }
    if (best < 0) return std::nullopt;
    // The band keeps a parallel loop outside (else the moved member would be
    // the outermost coincident loop: a parallel region per outer iteration).
    bool parallelLeft = false;
    for (int m = 0; m < model.members(); ++m)
      parallelLeft = parallelLeft || (m != best && model.coincident(m));
    if (!parallelLeft) return std::nullopt;

    isl::multi_union_pw_aff partial = band.get_partial_schedule();
    isl::union_pw_aff moving = partial.at(best);
    int n = model.members();
    isl::schedule_node node = isl::manage(isl_schedule_node_delete(band.copy()));
    if (n > 1) {
      isl::union_pw_aff_list rest(band.ctx(), n - 1);
      for (int m = 0; m < n; ++m)
        if (m != best) rest = rest.add(partial.at(m));
      isl::space space = isl::manage(
          isl_space_drop_dims(partial.get_space().release(), isl_dim_set, static_cast<unsigned>(best), 1));
      auto outer = node.insert_partial_schedule(isl::multi_union_pw_aff(space, rest))
                       .as<isl::schedule_node_band>()
                       .set_permutable(band.permutable() ? 1 : 0);
      node = schedule::recomputeCoincidence(scop_, outer);
    }
    node = insertAtLeaves(node, moving);
    if (!schedule::scheduleViolation(scop_, node.schedule()).empty())
      return std::nullopt;  // keep the scheduler's tree
    std::string over;
    for (const auto& s : model.statements()) over += " " + s;
    const bool unitStrideBefore = now != std::numeric_limits<double>::infinity();
    std::ostringstream os;
    os << "band over" << over << ": member " << best << " moved below the bands under it (";
    if (!unitStrideBefore)
      os << "the innermost loops make no unit-stride vectors";
    else
      os << now << " cache lines per innermost iteration";
    os << "; " << bestLines << " after)";
    // Lines per useful lane; none before when the innermost loops made no unit-stride vectors.
    Remarks::Values values = {{"member", best}, {"unit_stride_before", unitStrideBefore}};
    if (unitStrideBefore) values.emplace_back("cache_lines_before", now);
    values.emplace_back("cache_lines_after", bestLines);
    remarks_.applied(over.empty() ? over : over.substr(1), os.str(), std::move(values));
    return node;
  }

  // Every leaf under `node` gets a band of `member` (for its instances) above it.
  isl::schedule_node insertAtLeaves(isl::schedule_node node, const isl::union_pw_aff& member) {
    if (node.isa<isl::schedule_node_leaf>()) {
      isl::union_set here = schedule::nodeDomain(node);
      isl::multi_union_pw_aff schedule(member.intersect_domain(here));
      auto band = node.insert_partial_schedule(schedule).as<isl::schedule_node_band>();
      return schedule::recomputeCoincidence(scop_, band.set_permutable(1));
    }
    return schedule::rewriteChildren(node,
                                     [&](isl::schedule_node child) { return insertAtLeaves(child, member); });
  }

  const poly::Scop& scop_;
  Remarks& remarks_;
};

}  // namespace

isl::schedule sinkAcrossBands(const poly::Scop& scop, const isl::schedule& schedule, Remarks& remarks) {
  return AcrossBands(scop, remarks).visit(schedule.root()).schedule();
}

}  // namespace tessel::target::cpu
