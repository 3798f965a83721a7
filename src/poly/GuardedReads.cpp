#include "poly/GuardedReads.h"

namespace tessel::poly {

namespace {

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

// The set where a condition holds (or, with positive = false, fails), as isl
// text. `text` empty means "no restriction known"; `exact` says whether the
// text is the set itself rather than a superset of it (data-dependent or
// possibly wrapping comparisons make it a superset).
struct Condition {
  std::string text;
  bool exact = false;
};

Condition conjoin(const Condition& a, const Condition& b) {
  std::string text = a.text.empty()   ? b.text
                     : b.text.empty() ? a.text
                                      : "(" + a.text + ") and (" + b.text + ")";
  return {text, a.exact && b.exact};
}

class GuardAnalysis {
 public:
  GuardAnalysis(const te::Stage& stage, const StatementText& text) : stage_(stage), text_(text) {}

  Condition condition(const te::Expr& cond, bool positive) const {
    using te::BinaryOp;
    if (cond->kind == te::ExprKind::Unary && cond->unaryOp == te::UnaryOp::Not)
      return condition(cond->operands[0], !positive);
    if (cond->kind != te::ExprKind::Binary) return {};
    BinaryOp op = cond->binaryOp;
    if (te::isComparison(op)) {
      // isl reasons with exact integers; the kernel compares int32 values, so
      // only comparisons whose operands cannot wrap are understood.
      for (const auto& side : cond->operands)
        if (!te::int32Range(side, stage_.ranges)) return {};
      auto a = te::toAffine(cond->operands[0]);
      auto b = te::toAffine(cond->operands[1]);
      if (!a || !b) return {};
      std::string sym = positive ? te::binaryOpName(op) : negatedComparison(op);
      if (sym == "==") sym = "=";
      return {"(" + text_.affine(*a) + ") " + sym + " (" + text_.affine(*b) + ")", true};
    }
    if (te::isLogical(op)) {
      Condition l = condition(cond->operands[0], positive);
      Condition r = condition(cond->operands[1], positive);
      // Conjunctions drop unknown parts (a superset); disjunctions with an unknown part are unknown.
      bool conjunction = (op == BinaryOp::And) == positive;
      if (conjunction) return conjoin(l, r);
      if (l.text.empty() || r.text.empty()) return {};
      return {"(" + l.text + ") or (" + r.text + ")", l.exact && r.exact};
    }
    return {};
  }

  // Every read with the condition under which it is evaluated.
  void collect(const te::Expr& e, const Condition& guard,
               std::vector<std::pair<const te::ExprNode*, Condition>>& out) const {
    if (e->kind == te::ExprKind::Access) out.push_back({e.get(), guard});
    if (e->kind == te::ExprKind::Select) {
      collect(e->operands[0], guard, out);
      collect(e->operands[1], conjoin(guard, condition(e->operands[0], true)), out);
      collect(e->operands[2], conjoin(guard, condition(e->operands[0], false)), out);
      return;
    }
    if (e->kind == te::ExprKind::Binary && te::isLogical(e->binaryOp)) {
      bool isAnd = e->binaryOp == te::BinaryOp::And;
      collect(e->operands[0], guard, out);
      collect(e->operands[1], conjoin(guard, condition(e->operands[0], isAnd)), out);
      return;
    }
    for (const auto& o : e->operands) collect(o, guard, out);
  }

 private:
  const te::Stage& stage_;
  const StatementText& text_;
};

std::string shapeText(const te::TensorDecl& t) {
  std::string s = "(";
  for (size_t d = 0; d < t.shape.size(); ++d) s += (d ? ", " : "") + std::to_string(t.shape[d]);
  return s + ")";
}

// "i = 4, k = 0": the first point of `points`, in the statement's variable names.
std::string firstPointText(const isl::set& points, const Statement& s) {
  isl::point pt = points.lexmin().sample_point();
  std::string text;
  for (size_t d = 0; d < s.dims.size(); ++d)
    text +=
        (d ? ", " : "") + s.dims[d] + " = " + std::to_string(pt.dim_min_val(static_cast<int>(d)).num_si());
  return text;
}

}  // namespace

void analyzeGuardedReads(isl::ctx ctx, const te::Program& program, const Statement& statement,
                         const StatementText& text, const std::string& domainConstraints,
                         std::set<const te::ExprNode*>& checkedReads) {
  const te::Stage& stage = program.stages[statement.stage];
  GuardAnalysis analysis(stage, text);
  std::vector<std::pair<const te::ExprNode*, Condition>> reads;
  analysis.collect(stage.rhs, {"", true}, reads);
  for (const auto& [access, guard] : reads) {
    const te::TensorDecl& t = program.tensor(access->name);
    std::string outside;
    bool unknown = false;  // an index isl cannot follow: the read is checked at run time
    for (size_t d = 0; d < access->operands.size(); ++d) {
      const te::Expr& index = access->operands[d];
      if (auto a = te::toAffine(index)) {
        std::string idx = "(" + text.affine(*a) + ")";
        outside +=
            (outside.empty() ? "" : " or ") + idx + " < 0 or " + idx + " >= " + std::to_string(t.shape[d]);
        continue;
      }
      std::string value = text.freshDim("v_");
      auto equals =
          te::int32Range(index, stage.ranges) ? text.indexEquals(value, index, stage.ranges) : std::nullopt;
      if (!equals) {
        unknown = true;
        continue;
      }
      outside += std::string(outside.empty() ? "" : " or ") + "exists (" + value + " : " + *equals +
                 " and (" + value + " < 0 or " + value + " >= " + std::to_string(t.shape[d]) + "))";
    }
    if (unknown) checkedReads.insert(access);
    if (outside.empty()) continue;
    Condition where = conjoin(conjoin({domainConstraints, true}, guard), {"(" + outside + ")", true});
    isl::set bad(ctx, "{ " + text.tuple() + " : " + where.text + " }");
    if (bad.is_empty()) continue;
    // With a guard isl fully understands, the bad points are real.
    if (guard.exact)
      userError(access->loc, "read " +
                                 te::toString(te::access(access->name, access->type, access->operands)) +
                                 " is out of bounds at " + firstPointText(bad, statement) +
                                 (guard.text.empty() ? "" : ", although it is guarded") + " ('" +
                                 access->name + "' has shape " + shapeText(t) + ")");
    checkedReads.insert(access);
  }
}

}  // namespace tessel::poly
