#include "poly/ExtractScop.h"

#include <sstream>

#include "poly/Dependences.h"
#include "poly/GuardedReads.h"
#include "poly/IslText.h"

namespace tessel::poly {

namespace {

// Relation from the statement to the elements `access` may read. Affine and
// quasi-affine indices (h / 2, w % 4) are exact when their int32 evaluation
// cannot wrap; any other index (an indirect read such as LUT(I(b), r)) may
// touch any element of that dimension. Guarded reads may be written with
// out-of-range indices that the guard excludes, so every read is clipped to
// the tensor's extent.
isl::map readRelation(isl::ctx ctx, const te::Program& p, const te::Stage& stage, const te::ExprNode& access,
                      const StatementText& st, const std::string& domainConstraints) {
  const te::TensorDecl& t = p.tensor(access.name);
  std::vector<std::string> element;
  for (size_t d = 0; d < access.operands.size(); ++d)
    element.push_back(st.freshDim("a" + std::to_string(d) + "_"));
  std::ostringstream os;
  os << "{ " << st.tuple() << " -> " << access.name << "[";
  for (size_t d = 0; d < element.size(); ++d) os << (d ? ", " : "") << element[d];
  os << "] : " << domainConstraints;
  for (size_t d = 0; d < element.size(); ++d) {
    os << " and " << boxConstraint(element[d], 0, t.shape[d]);
    const te::Expr& index = access.operands[d];
    bool affine = te::toAffine(index).has_value();
    if (!affine && !te::int32Range(index, stage.ranges)) continue;
    if (auto equals = st.indexEquals(element[d], index, stage.ranges)) os << " and " << *equals;
  }
  os << " }";
  return isl::map(ctx, os.str()).coalesce();
}

void collectAccesses(const te::Expr& e, std::vector<const te::ExprNode*>& out) {
  if (e->kind == te::ExprKind::Access) out.push_back(e.get());
  for (const auto& o : e->operands) collectAccesses(o, out);
}

// The statements of one stage: {assign}, {update} or {init, update}.
std::vector<std::pair<StatementKind, std::vector<std::string>>> statementsOf(const te::Stage& stage) {
  std::vector<std::string> all = stage.indices;
  all.insert(all.end(), stage.reductionVars.begin(), stage.reductionVars.end());
  if (stage.reduction == te::Reduction::None) return {{StatementKind::Assign, all}};
  if (stage.init) return {{StatementKind::Init, stage.indices}, {StatementKind::Update, all}};
  return {{StatementKind::Update, all}};
}

Statement extractStatement(isl::ctx ctx, const te::Program& program, int stageIndex, StatementKind kind,
                           const std::vector<std::string>& dims, const std::string& name,
                           std::set<const te::ExprNode*>& checkedReads) {
  const te::Stage& stage = program.stages[stageIndex];
  Statement s;
  s.name = name;
  s.stage = stageIndex;
  s.kind = kind;
  s.dims = dims;
  StatementText st(s.name, dims);
  std::string constraints = "0 = 0";
  for (const auto& v : dims) {
    auto r = stage.ranges.find(v);
    TESSEL_CHECK(r != stage.ranges.end(), "extract", "no range for index " + v);
    constraints += " and " + boxConstraint(st.dim(v), r->second.lo, r->second.hi);
  }
  s.domain = isl::set(ctx, "{ " + st.tuple() + " : " + constraints + " }");

  std::ostringstream w;
  w << "{ " << st.tuple() << " -> " << stage.output << "[";
  for (size_t d = 0; d < stage.indices.size(); ++d) w << (d ? ", " : "") << st.dim(stage.indices[d]);
  w << "] : " << constraints << " }";
  isl::map write(ctx, w.str());
  s.writes = isl::union_map(write);
  s.reads = kind == StatementKind::Update ? isl::union_map(write) : isl::union_map::empty(ctx);
  if (kind != StatementKind::Init) {
    std::vector<const te::ExprNode*> accesses;
    collectAccesses(stage.rhs, accesses);
    for (const auto* a : accesses)
      s.reads = s.reads.unite(isl::union_map(readRelation(ctx, program, stage, *a, st, constraints)));
    analyzeGuardedReads(ctx, program, s, st, constraints, checkedReads);
  }
  return s;
}

// band text "[{ S0[m, n] -> [(m)]; S1[m, n, k] -> [(m)] }, ...]": dimensions
// first .. first+count-1 of the given statements.
isl::multi_union_pw_aff bandOf(isl::ctx ctx, const std::vector<const Statement*>& stmts, size_t first,
                               size_t count) {
  std::vector<StatementText> texts;
  for (const Statement* s : stmts) texts.emplace_back(s->name, s->dims);
  std::ostringstream os;
  os << "[";
  for (size_t d = 0; d < count; ++d) {
    os << (d ? ", " : "") << "{ ";
    bool firstStmt = true;
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (first + d >= stmts[i]->dims.size()) continue;
      os << (firstStmt ? "" : "; ") << texts[i].tuple() << " -> [(" << texts[i].dim(stmts[i]->dims[first + d])
         << ")]";
      firstStmt = false;
    }
    os << " }";
  }
  os << "]";
  return isl::multi_union_pw_aff(ctx, os.str());
}

isl::union_set filterOf(isl::ctx ctx, const std::vector<const Statement*>& stmts) {
  isl::union_set f = isl::union_set::empty(ctx);
  for (const Statement* s : stmts) f = f.unite(isl::union_set(s->domain));
  return f;
}

// Initial schedule tree, source order (AKG Fig. 3b): a sequence over stages;
// each stage has a band over its LHS variables, then (for init + update) a
// sequence {init}, {update}; the update's reduction variables form an inner band.
isl::schedule initialSchedule(isl::ctx ctx, const te::Program& program, const Scop& scop) {
  std::vector<std::vector<const Statement*>> byStage(program.stages.size());
  for (const auto& s : scop.statements) byStage[s.stage].push_back(&s);
  isl::schedule_node node = isl::schedule_node::from_domain(scop.domain).child(0);
  isl::union_set_list filters(ctx, static_cast<int>(program.stages.size()));
  for (const auto& stmts : byStage) filters = filters.add(filterOf(ctx, stmts));
  node = node.insert_sequence(filters);
  for (size_t si = 0; si < program.stages.size(); ++si) {
    const te::Stage& stage = program.stages[si];
    const auto& stmts = byStage[si];
    size_t lhs = stage.indices.size(), nred = stage.reductionVars.size();
    node = node.child(static_cast<int>(si)).child(0);  // the stage's filter -> its child
    if (lhs > 0) node = node.insert_partial_schedule(bandOf(ctx, stmts, 0, lhs)).child(0);
    const Statement* update = stmts.back();
    if (stmts.size() == 2) {
      isl::union_set_list parts(ctx, 2);
      parts = parts.add(filterOf(ctx, {stmts[0]})).add(filterOf(ctx, {stmts[1]}));
      node = node.insert_sequence(parts);
      if (nred > 0) node = node.child(1).child(0).insert_partial_schedule(bandOf(ctx, {update}, lhs, nred));
    } else if (nred > 0) {
      node = node.insert_partial_schedule(bandOf(ctx, {update}, lhs, nred));
    }
    while (node.tree_depth() != 1) node = node.parent();  // back to the top-level sequence
  }
  return node.schedule();
}

}  // namespace

Scop extractScop(isl::ctx ctx, const te::Program& program) {
  Scop scop;
  scop.program = &program;
  scop.domain = isl::union_set::empty(ctx);
  scop.reads = isl::union_map::empty(ctx);
  scop.writes = isl::union_map::empty(ctx);
  int counter = 0;
  for (size_t si = 0; si < program.stages.size(); ++si) {
    for (const auto& [kind, dims] : statementsOf(program.stages[si])) {
      Statement s = extractStatement(ctx, program, static_cast<int>(si), kind, dims,
                                     "S" + std::to_string(counter++), scop.checkedReads);
      scop.domain = scop.domain.unite(isl::union_set(s.domain));
      scop.reads = scop.reads.unite(s.reads);
      scop.writes = scop.writes.unite(s.writes);
      scop.statements.push_back(std::move(s));
    }
  }
  scop.initialSchedule = initialSchedule(ctx, program, scop);
  scop.deps = computeDependences(scop);
  return scop;
}

}  // namespace tessel::poly
