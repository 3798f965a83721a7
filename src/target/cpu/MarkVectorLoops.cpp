#include "target/cpu/MarkVectorLoops.h"

#include "schedule/Marks.h"
#include "schedule/Transforms.h"
#include "schedule/TreeQueries.h"
#include "target/cpu/AccessStride.h"
#include "tile/BandModel.h"

namespace tessel::target::cpu {

namespace {

class VectorMarker {
 public:
  VectorMarker(const poly::Scop& scop, bool registerTransposes, Remarks& remarks)
      : scop_(scop), registerTransposes_(registerTransposes), remarks_(remarks) {}

  // The innermost bands get their marks.
  isl::schedule_node visit(const isl::schedule_node& root) {
    return schedule::rewriteTopDown(
        root, [this](isl::schedule_node node) -> std::optional<isl::schedule_node> {
          if (node.isa<isl::schedule_node_band>() && !schedule::hasBandBelow(node))
            return mark(node.as<isl::schedule_node_band>());
          return std::nullopt;
        });
  }

 private:
  // Every dependence carried by `member` (among those that reach this band
  // with equal outer loops) links two updates of one reduction statement on
  // the same element.
  bool onlyReductionChains(const isl::union_map& carried) const {
    bool ok = true;
    carried.foreach_map([&](isl::map dep) {
      if (!ok) return;
      std::string from = isl::manage(isl_map_get_tuple_id(dep.get(), isl_dim_in)).name();
      std::string to = isl::manage(isl_map_get_tuple_id(dep.get(), isl_dim_out)).name();
      const poly::Statement& st = scop_.statement(from);
      if (from != to || st.kind != poly::StatementKind::Update) {
        ok = false;
        return;
      }
      // Source and sink write the same element.
      isl::union_map sameElement = st.writes.apply_range(st.writes.reverse());
      if (!isl::union_map(dep).is_subset(sameElement)) ok = false;
    });
    return ok;
  }

  isl::schedule_node mark(isl::schedule_node_band band) {
    int n = static_cast<int>(band.n_member());
    if (n == 0) return band;
    isl::union_set here = schedule::nodeDomain(band);
    isl::union_map carried = carriedBy(band, n - 1);
    const char* kind = nullptr;
    if (carried.is_empty())
      kind = schedule::kVectorMark;
    else if (onlyReductionChains(carried))
      kind = schedule::kVectorReductionMark;
    if (!kind) return band;
    std::string statements;  // " S0 S1"
    here.foreach_set(
        [&](isl::set s) { statements += " " + isl::manage(isl_set_get_tuple_id(s.get())).name(); });
    const std::string subject = statements.empty() ? statements : statements.substr(1);
    remarks_.applied(subject, "innermost loop of the band over" + statements + ": " + kind,
                     {{"mark", kind}, {"member", n - 1}});
    bool transposes =
        registerTransposes_ && kind == schedule::kVectorMark && n > 1 && transposesThroughRegisters(band, n);
    if (transposes)
      remarks_.applied(subject,
                       "loop above it over" + statements + ": " + schedule::kTransposeBlockMark +
                           " (a read is contiguous along it, strided along the vector loop)",
                       {{"mark", schedule::kTransposeBlockMark}, {"member", n - 2}});
    isl::schedule_node node = band;
    int depth = 0;
    if (n > 1) {
      node = band.split(n - 1).child(0);
      depth = 1;
    }
    node = schedule::insertMark(node, kind);
    if (transposes) {
      // The member above the vector loop gets a band of its own under its mark.
      node = node.parent();
      isl::schedule_node_band outer = node.as<isl::schedule_node_band>();
      depth = 0;
      if (n > 2) {
        node = outer.split(n - 2).child(0);
        depth = 1;
      }
      node = schedule::insertMark(node, schedule::kTransposeBlockMark);
      return depth ? node.parent() : node;
    }
    for (int i = 0; i < depth; ++i) node = node.parent();
    return node;
  }

  // The dependences between the band's instances that `member` carries:
  // equal on the loops outside it, different on it.
  isl::union_map carriedBy(const isl::schedule_node_band& band, int member) const {
    isl::union_set here = schedule::nodeDomain(band);
    isl::multi_union_pw_aff partial = band.get_partial_schedule();
    isl::union_map live = scop_.deps.validity().intersect_domain(here).intersect_range(here).eq_at(
        band.prefix_schedule_multi_union_pw_aff());
    for (int m = 0; m < member; ++m) live = live.eq_at(isl::multi_union_pw_aff(partial.at(m)));
    return live.subtract(live.eq_at(isl::multi_union_pw_aff(partial.at(member))));
  }

  // Whether the member above the vector loop (n - 2) carries no dependence
  // and some statement reads an array contiguously along it but with a large
  // stride along the vector loop while writing contiguously along the vector
  // loop: the backend can then run that loop in blocks of the vector width
  // and transpose the read's 16 x 16 blocks in registers (lir/Vectorize.h).
  bool transposesThroughRegisters(const isl::schedule_node_band& band, int n) const {
    if (!carriedBy(band, n - 2).is_empty()) return false;
    tile::BandModel model(scop_, band, 64);
    bool found = false;
    for (const std::string& name : model.statements()) {
      int row = model.statementDim(name, n - 2), lane = model.statementDim(name, n - 1);
      if (row < 0 || lane < 0) continue;
      const poly::Statement& st = scop_.statement(name);
      if (!writesContiguouslyAlong(st, lane)) continue;
      st.reads.foreach_map([&](isl::map r) { found = found || transposesBetween(r, lane, row); });
    }
    return found;
  }

  const poly::Scop& scop_;
  bool registerTransposes_;
  Remarks& remarks_;
};

void collectVectorLoopDims(const isl::schedule_node& node, std::map<std::string, std::set<int>>& dims) {
  std::string mark = schedule::markName(node);
  if ((mark == schedule::kVectorMark || mark == schedule::kVectorReductionMark) &&
      node.child(0).isa<isl::schedule_node_band>()) {
    auto band = node.child(0).as<isl::schedule_node_band>();
    isl::union_pw_aff loop = band.partial_schedule().at(static_cast<int>(band.n_member()) - 1);
    isl::manage(isl_union_map_from_union_pw_aff(loop.copy())).foreach_map([&](isl::map m) {
      std::string statement = isl::manage(isl_map_get_tuple_id(m.get(), isl_dim_in)).name();
      isl::manage(isl_pw_multi_aff_from_map(m.copy())).foreach_piece([&](isl::set, isl::multi_aff piece) {
        isl::aff a = piece.at(0);
        for (int d = 0; d < static_cast<int>(m.domain_tuple_dim()); ++d)
          if (isl_aff_involves_dims(a.get(), isl_dim_in, static_cast<unsigned>(d), 1) == isl_bool_true)
            dims[statement].insert(d);
      });
    });
  }
  for (int i = 0; i < static_cast<int>(node.n_children()); ++i) collectVectorLoopDims(node.child(i), dims);
}

}  // namespace

isl::schedule markVectorLoops(const poly::Scop& scop, const isl::schedule& schedule, bool registerTransposes,
                              Remarks& remarks) {
  return VectorMarker(scop, registerTransposes, remarks).visit(schedule.root()).schedule();
}

std::map<std::string, std::set<int>> vectorLoopDims(const isl::schedule_node& node) {
  std::map<std::string, std::set<int>> dims;
  collectVectorLoopDims(node, dims);
  return dims;
}

}  // namespace tessel::target::cpu
