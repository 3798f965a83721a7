#include "target/cpu/SinkContiguousMember.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "schedule/CheckSchedule.h"
#include "schedule/TreeQueries.h"
#include "target/cpu/AccessStride.h"
#include "target/cpu/PromoteOperands.h"
#include "tile/BandModel.h"
#include "tile/TileBands.h"

namespace tessel::target::cpu {

namespace {

// f32 lanes of the widest vectors (AVX-512).
constexpr int64_t kVectorLanes = 16;

class Sinker {
 public:
  Sinker(const poly::Scop& scop, std::string& explain) : scop_(scop), explain_(explain) {}

  isl::schedule_node visit(isl::schedule_node node, bool insideBand = false) {
    if (node.isa<isl::schedule_node_band>()) {
      auto band = node.as<isl::schedule_node_band>();
      if (band.n_member() > 1 && band.permutable() && !schedule::hasBandBelow(node))
        return sink(band, !insideBand);
      insideBand = true;
    }
    int n = static_cast<int>(node.n_children());
    for (int i = 0; i < n; ++i) node = visit(node.child(i), insideBand).parent();
    return node;
  }

 private:
  // Cache lines an iteration of `member` (innermost) touches, summed over
  // the statements' accesses, writes counted twice: a unit-stride access
  // moves a sixteenth of a line (16 f32), a strided one a whole line, one
  // that does not move with the member nothing (it stays in a register).
  // (Weighing by array size instead sank a strided B[k, n] under a
  // contiguous A[m, k] when A was the larger array: 3072x128x1024 matmul
  // ran at 2% of peak.)
  //
  // Under L1 tiles, promotion copies an input read with reuse into a buffer
  // whose last dimension is the one the vector loop moves along, so a read
  // strided along `member` there counts as contiguous (A B^T: B's rows
  // become columns). A member along which a statement's write does not move
  // runs a reduction innermost: dot products, reading two vectors per
  // multiply-add where a parallel vector loop reuses broadcast values across a
  // register tile; it pays two lines per vector more (A B^T ran 5x slower).
  double cost(const tile::BandModel& model, int member, bool underL1Tiles) const {
    double total = 0;
    auto lines = [&](const isl::map& access, int dim, const std::string& statement) {
      int c = contiguity(access, dim);
      if (c < 0 && underL1Tiles && packable(model, access, statement)) c = 1;
      return c > 0 ? 1.0 / 16 : c < 0 ? 1.0 : 0.0;
    };
    bool reduces = false;
    for (const auto& name : model.statements()) {
      int dim = model.statementDim(name, member);
      if (dim < 0) continue;
      const poly::Statement& st = scop_.statement(name);
      // Each statement weighs by its share of the band's iterations: a
      // reduction's init runs once per element, not per reduction step.
      double weight = 1;
      for (int m = 0; m < model.members(); ++m)
        if (model.statementDim(name, m) < 0)
          weight /= static_cast<double>(std::max<int64_t>(model.extent(m), 1));
      double statementLines = 0;
      st.reads.foreach_map([&](isl::map m) { statementLines += lines(m, dim, name); });
      st.writes.foreach_map([&](isl::map m) {
        statementLines += 2 * lines(m, dim, name);
        reduces = reduces || (st.kind == poly::StatementKind::Update && !movesWith(m, dim));
      });
      total += weight * statementLines;
    }
    if (reduces) total += 4.0 / 16;
    // The innermost loop becomes the vector loop: one shorter than a vector
    // leaves lanes idle and pays its loop overhead per few elements, so its
    // lines count per useful lane (a 3x3 convolution's kw, contiguous in the
    // input and the weights, ran 16x slower innermost than w).
    int64_t extent = model.extents()[static_cast<size_t>(member)];
    if (extent > 0 && extent < kVectorLanes)
      total *= static_cast<double>(kVectorLanes) / static_cast<double>(extent);
    return total;
  }

  // Whether promotion will copy this read into a buffer of its own layout: a
  // read of an f32 program input that the members it does not move with
  // reuse as often as promotion asks.
  bool packable(const tile::BandModel& model, const isl::map& access, const std::string& statement) const {
    std::string tensor = access.range_tuple_id().name();
    bool input = false;
    for (const te::TensorDecl* t : scop_.program->inputs()) input = input || t->name == tensor;
    if (!input || scop_.program->tensor(tensor).dtype != te::DType::F32) return false;
    double reuse = 1;
    for (int m = 0; m < model.members(); ++m) {
      int dim = model.statementDim(statement, m);
      if (dim >= 0 && !movesWith(access, dim)) reuse *= static_cast<double>(model.extent(m));
    }
    return reuse >= kMinPromotionReuse;
  }

  // Promotion's sites: a point band right under the tile band of an L1 tile mark.
  static bool underL1Tiles(const isl::schedule_node& band) {
    if (!band.has_parent() || !band.parent().isa<isl::schedule_node_band>()) return false;
    isl::schedule_node tiles = band.parent();
    return tiles.has_parent() && schedule::markName(tiles.parent()) == tile::tileMarkName("L1");
  }

  // `outermost`: no loop encloses the band, so its first member is the one
  // that runs in parallel; it keeps a parallel member first.
  isl::schedule_node sink(const isl::schedule_node_band& band, bool outermost) {
    tile::BandModel model(scop_, band, 64);
    int n = model.members();
    int best = n - 1;
    bool l1 = underL1Tiles(band);
    double bestCost = cost(model, n - 1, l1);
    for (int m = 0; m < n - 1; ++m) {
      if (outermost && m == 0 && model.coincident(0) && !model.coincident(1)) continue;
      double c = cost(model, m, l1);
      if (c < bestCost) {
        best = m;
        bestCost = c;
      }
    }
    if (best == n - 1) return band;
    std::vector<int> order;
    for (int m = 0; m < n; ++m)
      if (m != best) order.push_back(m);
    order.push_back(best);

    // Coincidence flags are recomputed, not copied (parallel and unroll-jam
    // marks read them).
    auto sunk = schedule::permuteMembers(scop_, band, order);
    explain_ += "band over";
    for (const auto& s : model.statements()) explain_ += " " + s;
    std::ostringstream lines;
    lines << bestCost;
    explain_ += ": member " + std::to_string(best) + " made innermost (contiguous accesses, " + lines.str() +
                " cache lines per iteration)\n";
    return sunk;
  }

  const poly::Scop& scop_;
  std::string& explain_;
};

}  // namespace

isl::schedule sinkContiguousMember(const poly::Scop& scop, const isl::schedule& schedule,
                                   std::string& explain) {
  return Sinker(scop, explain).visit(schedule.root()).schedule();
}

}  // namespace tessel::target::cpu
