#include "target/cpu/SinkContiguousMember.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "schedule/CheckSchedule.h"
#include "schedule/TreeQueries.h"
#include "target/cpu/AccessStride.h"
#include "tile/BandModel.h"

namespace tessel::target::cpu {

namespace {

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
  double cost(const tile::BandModel& model, int member) const {
    double total = 0;
    auto lines = [&](const isl::map& access, int dim) {
      int c = contiguity(access, dim);
      return c > 0 ? 1.0 / 16 : c < 0 ? 1.0 : 0.0;
    };
    for (const auto& name : model.statements()) {
      int dim = model.statementDim(name, member);
      if (dim < 0) continue;
      const poly::Statement& st = scop_.statement(name);
      st.reads.foreach_map([&](isl::map m) { total += lines(m, dim); });
      st.writes.foreach_map([&](isl::map m) { total += 2 * lines(m, dim); });
    }
    return total;
  }

  // `outermost`: no loop encloses the band, so its first member is the one
  // that runs in parallel; it keeps a parallel member first.
  isl::schedule_node sink(const isl::schedule_node_band& band, bool outermost) {
    tile::BandModel model(scop_, band, 64);
    int n = model.members();
    int best = n - 1;
    double bestCost = cost(model, n - 1);
    for (int m = 0; m < n - 1; ++m) {
      if (outermost && m == 0 && model.coincident(0) && !model.coincident(1)) continue;
      double c = cost(model, m);
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
