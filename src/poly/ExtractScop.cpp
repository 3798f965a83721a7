#include "poly/ExtractScop.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <set>
#include <sstream>

namespace tessel::poly {

namespace {

// isl's parser reserves some words; index variables with such names (or ones
// that look like statement names) get positional names in isl text.
std::string islDimName(const std::string& v, size_t pos) {
  static const std::set<std::string> reserved = {
      "and",    "or",    "not", "xor",  "implies", "min", "max",    "mod",   "floor",  "ceil",
      "exists", "infty", "NaN", "true", "false",   "rat", "domain", "range", "params", "any"};
  bool ok = !v.empty() && (std::isalpha(static_cast<unsigned char>(v[0])) || v[0] == '_');
  for (char c : v) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok || reserved.count(v) ||
      (v.size() > 1 && v[0] == 'S' && std::isdigit(static_cast<unsigned char>(v[1]))))
    return "i" + std::to_string(pos) + "_";
  return v;
}

struct StatementText {
  std::string tuple;                           // "S0[m, n, k]"
  std::map<std::string, std::string> dimName;  // te var -> isl dim name
};

StatementText statementText(const std::string& name, const std::vector<std::string>& dims) {
  StatementText t;
  t.tuple = name + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    std::string d = islDimName(dims[i], i);
    t.dimName[dims[i]] = d;
    t.tuple += (i ? ", " : "") + d;
  }
  t.tuple += "]";
  return t;
}

std::string affineText(const te::AffineExpr& a, const StatementText& st) {
  std::ostringstream os;
  os << a.constant;
  for (const auto& [v, c] : a.coeffs) {
    auto it = st.dimName.find(v);
    TESSEL_CHECK(it != st.dimName.end(), "extract", "index variable " + v + " not in the statement domain");
    os << (c < 0 ? " - " : " + ") << (c < 0 ? -c : c) << "*" << it->second;
  }
  return os.str();
}

std::string boxConstraint(const std::string& dim, int64_t lo, int64_t hi) {
  return std::to_string(lo) + " <= " + dim + " < " + std::to_string(hi);
}

// Relation from the statement to the elements `access` may read. Affine
// indices are exact; a non-affine index (an indirect read such as LUT(I(b), r))
// may touch any element of that dimension. Guarded reads (inside a select
// branch) may be written with out-of-range indices that the guard excludes, so
// every read is clipped to the tensor's extent.
isl::map readRelation(isl::ctx ctx, const te::Program& p, const te::ExprNode& access, const StatementText& st,
                      const std::string& domainConstraints) {
  const te::TensorDecl& t = p.tensor(access.name);
  std::ostringstream os;
  os << "{ " << st.tuple << " -> " << access.name << "[";
  std::vector<std::string> out;
  for (size_t d = 0; d < access.operands.size(); ++d) out.push_back("a" + std::to_string(d) + "_");
  for (size_t d = 0; d < out.size(); ++d) os << (d ? ", " : "") << out[d];
  os << "] : " << domainConstraints;
  for (size_t d = 0; d < out.size(); ++d) {
    os << " and " << boxConstraint(out[d], 0, t.shape[d]);
    if (auto a = te::toAffine(access.operands[d])) os << " and " << out[d] << " = " << affineText(*a, st);
  }
  os << " }";
  return isl::map(ctx, os.str());
}

void collectAccesses(const te::Expr& e, std::vector<const te::ExprNode*>& out) {
  if (e->kind == te::ExprKind::Access) out.push_back(e.get());
  for (const auto& o : e->operands) collectAccesses(o, out);
}

const char* negatedComparison(te::BinaryOp op) {
  switch (op) {
    case te::BinaryOp::Lt:
      return ">=";
    case te::BinaryOp::Le:
      return ">";
    case te::BinaryOp::Gt:
      return "<=";
    case te::BinaryOp::Ge:
      return "<";
    case te::BinaryOp::Eq:
      return "!=";
    default:
      return "=";  // Ne
  }
}

// [lo, hi] of an integer index expression over the statement's ranges when
// the kernel computes it without wrapping: every intermediate value of its
// int32, operation-by-operation evaluation stays in int32. nullopt otherwise
// (or when the expression is not plain integer arithmetic of indices).
std::optional<std::pair<int64_t, int64_t>> int32Interval(const te::Expr& e, const te::Stage& stage) {
  using Interval = std::pair<int64_t, int64_t>;
  auto checked = [](Interval r) -> std::optional<Interval> {
    if (r.first < INT32_MIN || r.second > INT32_MAX) return std::nullopt;
    return r;
  };
  switch (e->kind) {
    case te::ExprKind::Const:
      if (!te::isInteger(e->type)) return std::nullopt;
      return Interval{static_cast<int64_t>(e->value), static_cast<int64_t>(e->value)};
    case te::ExprKind::Var: {
      auto r = stage.ranges.find(e->name);
      if (r == stage.ranges.end()) return std::nullopt;
      return Interval{r->second.lo, r->second.hi - 1};
    }
    case te::ExprKind::Unary: {
      if (e->unaryOp != te::UnaryOp::Neg) return std::nullopt;
      auto x = int32Interval(e->operands[0], stage);
      if (!x) return std::nullopt;
      return checked({-x->second, -x->first});
    }
    case te::ExprKind::Cast:
      if (e->type != te::DType::I32 || e->operands[0]->type != te::DType::I32) return std::nullopt;
      return int32Interval(e->operands[0], stage);
    case te::ExprKind::Binary: {
      auto a = int32Interval(e->operands[0], stage);
      auto b = int32Interval(e->operands[1], stage);
      if (!a || !b) return std::nullopt;
      switch (e->binaryOp) {
        case te::BinaryOp::Add:
          return checked({a->first + b->first, a->second + b->second});
        case te::BinaryOp::Sub:
          return checked({a->first - b->second, a->second - b->first});
        case te::BinaryOp::Mul: {
          // Both factors lie in int32, so their products fit in int64.
          int64_t p[] = {a->first * b->first, a->first * b->second, a->second * b->first,
                         a->second * b->second};
          return checked({*std::min_element(p, p + 4), *std::max_element(p, p + 4)});
        }
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

// The set where a condition holds (or, with positive = false, fails), as isl
// text. `text` empty means "no restriction known"; `exact` says whether the
// text is the set itself rather than a superset of it (data-dependent or
// possibly wrapping comparisons make it a superset).
struct Condition {
  std::string text;
  bool exact = false;
};

Condition conditionText(const te::Expr& cond, bool positive, const StatementText& st,
                        const te::Stage& stage) {
  using te::BinaryOp;
  if (cond->kind == te::ExprKind::Unary && cond->unaryOp == te::UnaryOp::Not)
    return conditionText(cond->operands[0], !positive, st, stage);
  if (cond->kind != te::ExprKind::Binary) return {};
  BinaryOp op = cond->binaryOp;
  if (te::isComparison(op)) {
    // isl reasons with exact integers; the kernel compares int32 values, so
    // only comparisons whose operands cannot wrap are understood.
    if (!int32Interval(cond->operands[0], stage) || !int32Interval(cond->operands[1], stage)) return {};
    auto a = te::toAffine(cond->operands[0]);
    auto b = te::toAffine(cond->operands[1]);
    if (!a || !b) return {};
    for (const auto* x : {&*a, &*b})
      for (const auto& [v, c] : x->coeffs)
        if (!st.dimName.count(v)) return {};
    std::string sym = positive ? te::binaryOpName(op) : negatedComparison(op);
    if (sym == "==") sym = "=";
    return {"(" + affineText(*a, st) + ") " + sym + " (" + affineText(*b, st) + ")", true};
  }
  if (te::isLogical(op)) {
    Condition l = conditionText(cond->operands[0], positive, st, stage);
    Condition r = conditionText(cond->operands[1], positive, st, stage);
    bool exact = l.exact && r.exact;
    // Conjunctions drop unknown parts (a superset); disjunctions with an unknown part are unknown.
    bool conjunction = (op == BinaryOp::And) == positive;
    if (conjunction)
      return {l.text.empty()   ? r.text
              : r.text.empty() ? l.text
                               : "(" + l.text + ") and (" + r.text + ")",
              exact};
    if (l.text.empty() || r.text.empty()) return {};
    return {"(" + l.text + ") or (" + r.text + ")", exact};
  }
  return {};
}

Condition conjoin(const Condition& a, const Condition& b) {
  std::string text = a.text.empty()   ? b.text
                     : b.text.empty() ? a.text
                                      : "(" + a.text + ") and (" + b.text + ")";
  return {text, a.exact && b.exact};
}

// Every read with the condition under which it is evaluated (select branches
// and the short-circuit operands of && and ||).
void collectGuardedReads(const te::Expr& e, const Condition& guard, const StatementText& st,
                         const te::Stage& stage,
                         std::vector<std::pair<const te::ExprNode*, Condition>>& out) {
  if (e->kind == te::ExprKind::Access) out.push_back({e.get(), guard});
  if (e->kind == te::ExprKind::Select) {
    collectGuardedReads(e->operands[0], guard, st, stage, out);
    collectGuardedReads(e->operands[1], conjoin(guard, conditionText(e->operands[0], true, st, stage)), st,
                        stage, out);
    collectGuardedReads(e->operands[2], conjoin(guard, conditionText(e->operands[0], false, st, stage)), st,
                        stage, out);
    return;
  }
  if (e->kind == te::ExprKind::Binary && te::isLogical(e->binaryOp)) {
    bool isAnd = e->binaryOp == te::BinaryOp::And;
    collectGuardedReads(e->operands[0], guard, st, stage, out);
    collectGuardedReads(e->operands[1], conjoin(guard, conditionText(e->operands[0], isAnd, st, stage)), st,
                        stage, out);
    return;
  }
  for (const auto& o : e->operands) collectGuardedReads(o, guard, st, stage, out);
}

// Points of the domain where `access`, evaluated under `guard`, has an affine
// index outside its tensor (empty when it is provably in bounds).
isl::set outOfBoundsPoints(isl::ctx ctx, const te::Program& p, const te::ExprNode& access,
                           const Condition& guard, const StatementText& st,
                           const std::string& domainConstraints) {
  const te::TensorDecl& t = p.tensor(access.name);
  std::string outside;
  for (size_t d = 0; d < access.operands.size(); ++d) {
    auto a = te::toAffine(access.operands[d]);
    if (!a) continue;  // data-dependent: always checked
    std::string idx = "(" + affineText(*a, st) + ")";
    outside += (outside.empty() ? "" : " or ") + idx + " < 0 or " + idx + " >= " + std::to_string(t.shape[d]);
  }
  if (outside.empty()) outside = "1 = 0";
  Condition all = conjoin(conjoin({domainConstraints, true}, guard), {"(" + outside + ")", true});
  return isl::set(ctx, "{ " + st.tuple + " : " + all.text + " }");
}

std::string shapeText(const te::TensorDecl& t) {
  std::string s = "(";
  for (size_t d = 0; d < t.shape.size(); ++d) s += (d ? ", " : "") + std::to_string(t.shape[d]);
  return s + ")";
}

// "i = 4, k = 0": one point of `points`, in the stage's variable names.
std::string samplePointText(const isl::set& points, const Statement& s) {
  isl::point pt = points.lexmin().sample_point();  // the first bad point, deterministically
  std::string text;
  for (size_t d = 0; d < s.dims.size(); ++d) {
    text +=
        (d ? ", " : "") + s.dims[d] + " = " + std::to_string(pt.dim_min_val(static_cast<int>(d)).num_si());
  }
  return text;
}

}  // namespace

Scop extractScop(isl::ctx ctx, const te::Program& program) {
  Scop scop;
  scop.program = &program;
  scop.domain = isl::union_set::empty(ctx);
  scop.reads = isl::union_map::empty(ctx);
  scop.writes = isl::union_map::empty(ctx);
  // Filled by computeDependences; empty (not null) so a Scop copies safely.
  scop.deps = {scop.writes, scop.writes, scop.writes};

  isl::schedule schedule;
  std::vector<isl::union_set> stageFilters;
  // Per stage: LHS band and (for reductions) the reduction band of the update.
  struct StageStatements {
    std::vector<int> statements;
  };
  std::vector<StageStatements> byStage(program.stages.size());

  int counter = 0;
  for (size_t si = 0; si < program.stages.size(); ++si) {
    const te::Stage& stage = program.stages[si];
    std::vector<std::pair<StatementKind, std::vector<std::string>>> parts;
    std::vector<std::string> full = stage.indices;
    full.insert(full.end(), stage.reductionVars.begin(), stage.reductionVars.end());
    if (stage.reduction == te::Reduction::None) {
      parts.push_back({StatementKind::Assign, full});
    } else {
      if (stage.init) parts.push_back({StatementKind::Init, stage.indices});
      parts.push_back({StatementKind::Update, full});
    }
    for (auto& [kind, dims] : parts) {
      Statement s;
      s.name = "S" + std::to_string(counter++);
      s.stage = static_cast<int>(si);
      s.kind = kind;
      s.dims = dims;
      StatementText st = statementText(s.name, dims);
      std::string constraints = "0 = 0";
      for (const auto& v : dims) {
        auto r = stage.ranges.find(v);
        TESSEL_CHECK(r != stage.ranges.end(), "extract", "no range for index " + v);
        constraints += " and " + boxConstraint(st.dimName[v], r->second.lo, r->second.hi);
      }
      s.domain = isl::set(ctx, "{ " + st.tuple + " : " + constraints + " }");

      const te::TensorDecl& out = program.tensor(stage.output);
      std::ostringstream w;
      w << "{ " << st.tuple << " -> " << out.name << "[";
      for (size_t d = 0; d < stage.indices.size(); ++d) w << (d ? ", " : "") << st.dimName[stage.indices[d]];
      w << "] : " << constraints << " }";
      isl::map write(ctx, w.str());
      s.writes = isl::union_map(write);
      s.reads = isl::union_map::empty(ctx);
      if (kind == StatementKind::Update) s.reads = s.reads.unite(isl::union_map(write));
      if (kind != StatementKind::Init) {
        std::vector<const te::ExprNode*> accesses;
        collectAccesses(stage.rhs, accesses);
        for (const auto* a : accesses)
          s.reads = s.reads.unite(isl::union_map(readRelation(ctx, program, *a, st, constraints)));
        std::vector<std::pair<const te::ExprNode*, Condition>> guarded;
        collectGuardedReads(stage.rhs, {"", true}, st, stage, guarded);
        for (const auto& [a, guard] : guarded) {
          isl::set bad = outOfBoundsPoints(ctx, program, *a, guard, st, constraints);
          if (bad.is_empty()) continue;
          // With a guard isl fully understands, the bad points are real: the
          // program itself is wrong. Otherwise the kernel checks at run time.
          if (guard.exact)
            userError(a->loc, "read " + te::toString(te::access(a->name, a->type, a->operands)) +
                                  " is out of bounds at " + samplePointText(bad, s) +
                                  (guard.text.empty() ? "" : ", although it is guarded") + " ('" + a->name +
                                  "' has shape " + shapeText(program.tensor(a->name)) + ")");
          scop.checkedReads.insert(a);
        }
      }
      scop.domain = scop.domain.unite(isl::union_set(s.domain));
      scop.reads = scop.reads.unite(s.reads);
      scop.writes = scop.writes.unite(s.writes);
      byStage[si].statements.push_back(static_cast<int>(scop.statements.size()));
      scop.statements.push_back(std::move(s));
    }
  }

  // Initial schedule tree, source order (AKG Fig. 3b): a sequence over stages;
  // each stage has a band over its LHS variables, then (for init + update) a
  // sequence {init}, {update}; the update's reduction variables form an inner band.
  auto bandText = [&](const std::vector<int>& stmts, size_t first, size_t count) {
    std::ostringstream os;
    os << "[";
    for (size_t d = 0; d < count; ++d) {
      os << (d ? ", " : "") << "{ ";
      bool firstStmt = true;
      for (int idx : stmts) {
        const Statement& s = scop.statements[idx];
        if (first + d >= s.dims.size()) continue;
        StatementText st = statementText(s.name, s.dims);
        os << (firstStmt ? "" : "; ") << st.tuple << " -> [(" << st.dimName[s.dims[first + d]] << ")]";
        firstStmt = false;
      }
      os << " }";
    }
    os << "]";
    return isl::multi_union_pw_aff(ctx, os.str());
  };
  auto filterOf = [&](const std::vector<int>& stmts) {
    isl::union_set f = isl::union_set::empty(ctx);
    for (int idx : stmts) f = f.unite(isl::union_set(scop.statements[idx].domain));
    return f;
  };

  isl::schedule_node node = isl::schedule_node::from_domain(scop.domain).child(0);
  isl::union_set_list filters(ctx, static_cast<int>(program.stages.size()));
  for (const auto& st : byStage) filters = filters.add(filterOf(st.statements));
  node = node.insert_sequence(filters);
  for (size_t si = 0; si < program.stages.size(); ++si) {
    const te::Stage& stage = program.stages[si];
    const auto& stmts = byStage[si].statements;
    node = node.child(static_cast<int>(si)).child(0);  // filter -> its child
    if (!stage.indices.empty())
      node = node.insert_partial_schedule(bandText(stmts, 0, stage.indices.size())).child(0);
    int updateIdx = stmts.back();
    size_t nred = stage.reductionVars.size();
    if (stmts.size() == 2) {
      isl::union_set_list parts(ctx, 2);
      parts = parts.add(filterOf({stmts[0]})).add(filterOf({stmts[1]}));
      node = node.insert_sequence(parts);
      if (nred > 0)
        node = node.child(1)
                   .child(0)
                   .insert_partial_schedule(bandText({updateIdx}, stage.indices.size(), nred))
                   .parent()
                   .parent();
    } else if (nred > 0) {
      node = node.insert_partial_schedule(bandText({updateIdx}, stage.indices.size(), nred));
    }
    // Back to the top-level sequence.
    while (!node.isa<isl::schedule_node_sequence>() || node.tree_depth() != 1) node = node.parent();
  }
  scop.initialSchedule = node.schedule();
  return scop;
}

}  // namespace tessel::poly
