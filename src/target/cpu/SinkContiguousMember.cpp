#include "target/cpu/SinkContiguousMember.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "schedule/CheckSchedule.h"
#include "schedule/Transforms.h"
#include "schedule/TreeQueries.h"
#include "target/cpu/AccessStride.h"
#include "target/cpu/PromoteOperands.h"
#include "tile/BandModel.h"
#include "tile/TileBands.h"

namespace tessel::target::cpu {

namespace {

class Sinker {
 public:
  Sinker(const poly::Scop& scop, int64_t packingBudgetBytes, bool registerTransposes, Remarks& remarks)
      : scop_(scop),
        packingBudgetBytes_(packingBudgetBytes),
        registerTransposes_(registerTransposes),
        remarks_(remarks) {}

  isl::schedule_node visit(isl::schedule_node node, bool insideBand = false) {
    if (node.isa<isl::schedule_node_band>()) {
      auto band = node.as<isl::schedule_node_band>();
      if (band.n_member() > 1 && band.permutable() && !schedule::hasBandBelow(node))
        return sink(band, !insideBand);
      insideBand = true;
    }
    return schedule::rewriteChildren(node,
                                     [&](isl::schedule_node child) { return visit(child, insideBand); });
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
  // register tile, and summing the lanes at the end; it pays four lines per
  // vector more (A B^T ran 5x slower).
  //
  // A read strided along a coincident `member` but contiguous along another
  // coincident member, by a statement that writes contiguously along
  // `member`, is transposed through registers when that other member runs
  // right above `member` (MarkVectorLoops' transpose_block): it counts as
  // contiguous plus the shuffles (4 per vector), and that member is returned
  // in `partner`.
  double cost(const tile::BandModel& model, int member, const std::optional<std::vector<int64_t>>& tile,
              int& partner) const {
    double total = 0;
    partner = -1;
    bool scalar = false;  // an access the vector loop would gather: it stays scalar
    auto transposable = [&](const isl::map& access, const std::string& statement) {
      if (!registerTransposes_ || !model.coincident(member)) return -1;
      int dim = model.statementDim(statement, member);
      if (!writesContiguouslyAlong(scop_.statement(statement), dim)) return -1;
      for (int m = 0; m < model.members(); ++m) {
        int d = model.statementDim(statement, m);
        if (m != member && d >= 0 && model.coincident(m) && transposesBetween(access, dim, d)) return m;
      }
      return -1;
    };
    auto lines = [&](const isl::map& access, int dim, const std::string& statement) {
      int c = contiguity(access, dim);
      if (c < 0 && tile && packable(model, *tile, access, statement, dim)) c = 1;
      if (c < 0) {
        int p = transposable(access, statement);
        if (p >= 0 && (partner < 0 || p == partner)) {
          partner = p;
          return 2.0 / 16;
        }
        const te::TensorDecl* t = scop_.program->findTensor(access.range_tuple_id().name());
        scalar = scalar || gathersAlong(access, dim, t ? t->shape : std::vector<int64_t>{});
      }
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
    // A loop left scalar does one element where a vector loop does 16 (a
    // 3x3x1024 matmul ran k innermost, B read with stride 3, slower than n
    // in 3 of 16 lanes: docs/performance.md, "Narrow and deep products").
    int64_t extent = (tile ? *tile : model.extents())[static_cast<size_t>(member)];
    if (scalar)
      total *= static_cast<double>(kVectorLanesF32);
    else if (extent > 0 && extent < kVectorLanesF32)
      total *= static_cast<double>(kVectorLanesF32) / static_cast<double>(extent);
    return total;
  }

  // Whether promotion will copy this read, strided along statement variable
  // `dim`, into a buffer of its own layout (PromoteOperands' rules): a read
  // of an f32 program input that the members it does not move with reuse as
  // often as promotion asks, whose tile fits promotion's budget, and the only
  // read of the statement strided along `dim` (another would keep the loop
  // scalar, and promotion then transposes nothing).
  bool packable(const tile::BandModel& model, const std::vector<int64_t>& tile, const isl::map& access,
                const std::string& statement, int dim) const {
    if (packingBudgetBytes_ <= 0) return false;
    std::string tensor = access.range_tuple_id().name();
    bool input = false;
    for (const te::TensorDecl* t : scop_.program->inputs()) input = input || t->name == tensor;
    if (!input || scop_.program->tensor(tensor).dtype != te::DType::F32) return false;
    double reuse = 1, elements = 1;
    for (int m = 0; m < model.members(); ++m) {
      int d = model.statementDim(statement, m);
      if (d < 0) continue;
      double extent = static_cast<double>(tile[static_cast<size_t>(m)]);
      if (movesWith(access, d))
        elements *= extent;
      else
        reuse *= extent;
    }
    if (reuse < kMinPromotionReuse || elements * 4 > static_cast<double>(packingBudgetBytes_)) return false;
    int strided = 0;
    scop_.statement(statement).reads.foreach_map(
        [&](isl::map m) { strided += contiguity(m, dim) < 0 ? 1 : 0; });
    return strided == 1;
  }

  // The band's extents within one tile (the tile sizes), if isl finds a
  // fixed box.
  static std::optional<std::vector<int64_t>> tileExtents(const isl::schedule_node_band& band) {
    isl::union_map tileToPoints = band.prefix_schedule_union_map()
                                      .intersect_domain(schedule::nodeDomain(band))
                                      .reverse()
                                      .apply_range(isl::union_map::from(band.partial_schedule()));
    auto sizes = boxSizes(tileToPoints);
    if (sizes && sizes->size() != band.n_member()) return std::nullopt;
    return sizes;
  }

  // The members in their order, `innermost` last and `partner` (if any) right above it.
  static std::vector<int> memberOrder(int n, int innermost, int partner) {
    std::vector<int> order;
    for (int m = 0; m < n; ++m)
      if (m != innermost && m != partner) order.push_back(m);
    if (partner >= 0) order.push_back(partner);
    order.push_back(innermost);
    return order;
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
    std::optional<std::vector<int64_t>> tile;
    if (underL1Tiles(band)) tile = tileExtents(band);
    int best = -1, bestPartner = -1;
    double bestCost = 0;
    for (int m = n - 1; m >= 0; --m) {
      if (outermost && m == 0 && model.coincident(0) && !model.coincident(1)) continue;
      int partner = -1;
      double c = cost(model, m, tile, partner);
      std::vector<int> order = memberOrder(n, m, partner);
      // A transpose partner moved inward must leave a parallel member first.
      if (outermost && partner >= 0 && model.coincident(0) && !model.coincident(order[0])) continue;
      // On a tie a parallel member beats a reduction: its vectors need no
      // sum across lanes and a register tile reuses its broadcasts (a 1x1
      // NHWC convolution with 48 KiB of L1 tied k with c and ran 27x slower
      // with c innermost).
      bool tieWon =
          best >= 0 && std::abs(c - bestCost) < 1e-9 && model.coincident(m) && !model.coincident(best);
      if (best < 0 || c < bestCost - 1e-9 || tieWon) {
        best = m;
        bestPartner = partner;
        bestCost = c;
      }
    }
    if (best < 0) return band;
    std::vector<int> order = memberOrder(n, best, bestPartner);
    bool same = true;
    for (int m = 0; m < n; ++m) same = same && order[static_cast<size_t>(m)] == m;
    if (same) return band;

    // Coincidence flags are recomputed, not copied (parallel and unroll-jam
    // marks read them).
    auto sunk = schedule::permuteMembers(scop_, band, order);
    std::string over;  // " S0 S1"
    for (const auto& s : model.statements()) over += " " + s;
    std::ostringstream lines;
    lines << bestCost;
    Remarks::Values values = {{"member", best}, {"cache_lines", bestCost}};
    if (bestPartner >= 0) values.emplace_back("transpose_member", bestPartner);
    remarks_.applied(
        over.empty() ? over : over.substr(1),
        "band over" + over + ": member " + std::to_string(best) + " made innermost (contiguous accesses, " +
            lines.str() + " cache lines per iteration)" +
            (bestPartner >= 0 ? ", member " + std::to_string(bestPartner) + " above it to transpose through"
                              : ""),
        std::move(values));
    return sunk;
  }

  const poly::Scop& scop_;
  int64_t packingBudgetBytes_;
  bool registerTransposes_;
  Remarks& remarks_;
};

}  // namespace

isl::schedule sinkContiguousMember(const poly::Scop& scop, const isl::schedule& schedule,
                                   int64_t packingBudgetBytes, bool registerTransposes, Remarks& remarks) {
  return Sinker(scop, packingBudgetBytes, registerTransposes, remarks).visit(schedule.root()).schedule();
}

}  // namespace tessel::target::cpu
