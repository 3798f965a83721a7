#include "lir/VectorLoop.h"

#include <cmath>
#include <limits>
#include <set>
#include <utility>

namespace tessel::lir {

namespace {

using te::BinaryOp;
using te::DType;
using te::UnaryOp;

bool containsLoad(const Expr& e) {
  if (e->kind == ExprKind::Load) return true;
  for (const auto& o : e->operands)
    if (containsLoad(o)) return true;
  return false;
}

class BodyChecker {
 public:
  BodyChecker(const StmtNode& loop, const BufferTypes& buffers, const std::string& blockVar)
      : loop_(loop), buffers_(buffers), blockVar_(blockVar) {}

  std::string run() {
    std::string shape = whyNotStepOneUpTo(loop_);
    if (!shape.empty()) return shape;
    LetBindings lets;
    std::string why = stmt(loop_.body[0], lets, false);
    if (!why.empty()) return why;
    // A reduction's element may not be read or written otherwise in the loop.
    for (const auto& b : reductionBuffers_)
      if (otherAccesses_.count(b)) return "'" + b + "' is accessed besides its reduction";
    // All of a block's rows are read before any of its results is stored.
    for (const auto& b : transposedBuffers_)
      if (storedBuffers_.count(b)) return "'" + b + "' is read transposed and written";
    return "";
  }

 private:
  std::string stmt(const Stmt& s, LetBindings& lets, bool guarded) {
    switch (s->kind) {
      case StmtKind::Block: {
        LetBindings inner = lets;
        for (const auto& c : s->body) {
          std::string why = stmt(c, inner, guarded);
          if (!why.empty()) return why;
        }
        return "";
      }
      case StmtKind::Let:
        lets[s->name] = inlineLets(s->value, lets);
        return "";
      case StmtKind::If: {
        if (dependsOn(inlineLets(s->cond, lets), loop_.name)) return "a condition varies with the loop";
        LetBindings a = lets, b = lets;
        std::string why = stmt(s->thenCase, a, true);
        if (why.empty() && s->elseCase) why = stmt(s->elseCase, b, true);
        return why;
      }
      case StmtKind::For:
        return "it contains a loop";
      case StmtKind::Alloc:
        return "it declares a buffer";
      case StmtKind::Call:
        return "it calls a micro-kernel";
      case StmtKind::Store:
        return store(*s, lets, guarded);
    }
    return "unknown statement";
  }

  std::string store(const StmtNode& s, const LetBindings& lets, bool guarded) {
    storedBuffers_.insert(s.name);
    guarded_ = guarded;
    auto type = buffers_.find(s.name);
    if (type == buffers_.end() || !isLaneFloat(type->second)) return "it stores to a non-float tensor";
    std::optional<int64_t> stride = strideIn(inlineLets(s.index, lets), loop_.name);
    if (stride && *stride == 1) {
      noteAccesses(inlineLets(s.value, lets));
      otherAccesses_.insert(s.name);
      return value(inlineLets(s.value, lets), true);
    }
    if (stride && *stride == 0) {
      if (loop_.vector != VectorHint::Reduction) return "a store does not move with the loop";
      // (Reductions into f16/bf16 accumulate in f32 temporaries, te::widenLowPrecisionAccumulators;
      // a 16-bit element rounded after every term, as scalar code would, has no lane form.)
      if (type->second != DType::F32) return "a reduction into a 16-bit float tensor";
      if (guarded) return "a reduction is guarded by a condition";
      std::optional<ReductionStore> r = asReduction(s, lets);
      if (!r) return "a store to one element is not a reduction";
      if (reductionBuffers_.count(s.name)) return "two reductions into '" + s.name + "'";
      reductionBuffers_.insert(s.name);
      noteAccesses(r->rest);
      return value(r->rest, true);
    }
    return "a store is strided or indirect";
  }

  void noteAccesses(const Expr& e) {
    std::set<std::string> loads;
    collectLoads(e, loads);
    otherAccesses_.insert(loads.begin(), loads.end());
  }

  // Can `e` (lets inlined) be computed for all lanes at once? `loadsAllowed`:
  // false inside a branch chosen per lane, where a scalar (uniform) load would
  // run for lanes that did not choose it and might be out of bounds; vector
  // loads there are masked with the branch's lanes.
  std::string value(const Expr& e, bool loadsAllowed) {
    if (!dependsOn(e, loop_.name)) {
      // Broadcast after converting to f32, as the scalar code converts operands of f32 operations.
      if (e->index || e->type == DType::Bool) return "a uniform operand is not a number";
      if (!loadsAllowed && containsLoad(e)) return "a per-lane branch reads memory";
      return "";
    }
    if (e->index || !isLaneFloat(e->type)) return "a value that varies is not a float";
    switch (e->kind) {
      case ExprKind::Load: {
        // Inside a per-lane branch the load is masked with the branch's lanes.
        auto t = buffers_.find(e->name);
        if (t == buffers_.end() || !isLaneFloat(t->second)) return "it reads a non-float tensor";
        // Unit stride, stride 2 (deinterleaving loads) or a quotient (see VectorPrelude.h).
        std::optional<int64_t> stride = strideIn(e->operands[0], loop_.name);
        if (stride && *stride == 1) return "";
        // 16-bit floats are converted as they are loaded, from unit-stride runs only.
        if (t->second != DType::F32) return "a 16-bit float read is strided or indirect";
        if (stride && *stride == 2) return "";
        if (quotientIndex(e->operands[0], loop_.name)) return "";
        if (!blockVar_.empty() && isTransposedRead(e->operands[0], loop_.name, blockVar_)) {
          if (!loadsAllowed || guarded_ || selected_) return "a read to transpose is under a condition";
          transposedBuffers_.insert(e->name);
          return "";
        }
        return "a read is strided or indirect";
      }
      case ExprKind::Binary:
        switch (e->binaryOp) {
          case BinaryOp::Add:
          case BinaryOp::Sub:
          case BinaryOp::Mul:
          case BinaryOp::Div:
          case BinaryOp::Min:
          case BinaryOp::Max: {
            std::string why = value(e->operands[0], loadsAllowed);
            return why.empty() ? value(e->operands[1], loadsAllowed) : why;
          }
          default:
            return std::string("no vector form of '") + te::binaryOpName(e->binaryOp) + "'";
        }
      case ExprKind::Unary:
        switch (e->unaryOp) {
          case UnaryOp::Neg:
          case UnaryOp::Abs:
          case UnaryOp::Sqrt:
          case UnaryOp::Rsqrt:
          case UnaryOp::Exp:
          case UnaryOp::Log:
          case UnaryOp::Tanh:
          case UnaryOp::Sigmoid:
          case UnaryOp::Erf:
            return value(e->operands[0], loadsAllowed);
          default:
            return std::string("no vector form of '") + te::unaryOpName(e->unaryOp) + "'";
        }
      case ExprKind::Cast: {
        // To f32 (a 16-bit float's value already is one) or rounded to f16 or bf16.
        const Expr& x = e->operands[0];
        if (x->index || !isLaneFloat(x->type)) return "a conversion from an integer or f64 value varies";
        return value(x, loadsAllowed);
      }
      case ExprKind::Select: {
        const Expr& c = e->operands[0];
        // A transposed read loads its whole block whatever a row's branch.
        bool wasSelected = selected_;
        selected_ = true;
        std::string why;
        if (!dependsOn(c, loop_.name)) {
          why = value(e->operands[1], loadsAllowed);
          if (why.empty()) why = value(e->operands[2], loadsAllowed);
          selected_ = wasSelected;
          return why;
        }
        why = condition(c);
        if (why.empty()) why = value(e->operands[1], false);
        if (why.empty()) why = value(e->operands[2], false);
        selected_ = wasSelected;
        return why;
      }
      default:
        return "a value that varies has no vector form";
    }
  }

  // A per-lane condition: comparisons of f32 values or of integer lane
  // values, combined with && || !.
  std::string condition(const Expr& c) {
    if (c->kind == ExprKind::Binary && te::isComparison(c->binaryOp)) {
      const Expr& a = c->operands[0];
      if (a->index || !isLaneFloat(a->type)) {
        for (const auto& o : c->operands)
          if (!isIntegerLaneValue(o, loop_.name))
            return "a per-lane integer comparison is not on uniform or unit-stride values";
        return "";
      }
      std::string why = value(a, true);
      return why.empty() ? value(c->operands[1], true) : why;
    }
    if (c->kind == ExprKind::Binary && (c->binaryOp == BinaryOp::And || c->binaryOp == BinaryOp::Or)) {
      std::string why = condition(c->operands[0]);
      return why.empty() ? condition(c->operands[1]) : why;
    }
    if (c->kind == ExprKind::Unary && c->unaryOp == UnaryOp::Not) return condition(c->operands[0]);
    return "a per-lane condition has no vector form";
  }

  const StmtNode& loop_;
  const BufferTypes& buffers_;
  std::string blockVar_;
  std::set<std::string> reductionBuffers_;
  std::set<std::string> otherAccesses_;
  std::set<std::string> transposedBuffers_;
  std::set<std::string> storedBuffers_;
  bool guarded_ = false;   // the store being checked is under a condition
  bool selected_ = false;  // the value being checked is a branch of a select
};

}  // namespace

bool isLaneFloat(te::DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

void collectLoads(const Expr& e, std::set<std::string>& buffers) {
  if (e->kind == ExprKind::Load) buffers.insert(e->name);
  for (const auto& o : e->operands) collectLoads(o, buffers);
}

bool sameExpr(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type || a->index != b->index ||
      a->intValue != b->intValue || a->floatValue != b->floatValue || a->name != b->name ||
      a->unaryOp != b->unaryOp || a->binaryOp != b->binaryOp || a->operands.size() != b->operands.size())
    return false;
  for (size_t i = 0; i < a->operands.size(); ++i)
    if (!sameExpr(a->operands[i], b->operands[i])) return false;
  return true;
}

Expr inlineLets(const Expr& e, const LetBindings& lets) {
  if (e->kind == ExprKind::Var) {
    auto it = lets.find(e->name);
    return it == lets.end() ? e : it->second;
  }
  if (e->operands.empty()) return e;
  auto copy = std::make_shared<ExprNode>(*e);
  bool changed = false;
  for (auto& o : copy->operands) {
    Expr r = inlineLets(o, lets);
    changed = changed || r != o;
    o = r;
  }
  return changed ? Expr(copy) : e;
}

bool dependsOn(const Expr& e, const std::string& var) {
  if (e->kind == ExprKind::Var && e->name == var) return true;
  for (const auto& o : e->operands)
    if (dependsOn(o, var)) return true;
  return false;
}

namespace {

// The stride of `e` (a + b, a - b, or a product with a constant) from its
// operands' strides.
std::optional<int64_t> combinedStride(const ExprNode& e, std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  if (e.binaryOp == BinaryOp::Add) return *a + *b;
  if (e.binaryOp == BinaryOp::Sub) return *a - *b;
  if (e.binaryOp == BinaryOp::Mul) {
    if (*a == 0 && e.operands[0]->kind == ExprKind::IntImm) return e.operands[0]->intValue * *b;
    if (*b == 0 && e.operands[1]->kind == ExprKind::IntImm) return e.operands[1]->intValue * *a;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> strideIn(const Expr& e, const std::string& var) {
  if (!dependsOn(e, var)) return 0;
  switch (e->kind) {
    case ExprKind::Var:
      return 1;
    case ExprKind::Unary:
      if (e->index && e->unaryOp == UnaryOp::Neg) {
        auto s = strideIn(e->operands[0], var);
        if (s) return -*s;
      }
      return std::nullopt;
    case ExprKind::Binary:
      if (!e->index) return std::nullopt;
      return combinedStride(*e, strideIn(e->operands[0], var), strideIn(e->operands[1], var));
    default:
      return std::nullopt;
  }
}

namespace {

// How far an index or int32 value moves per iteration of `var` (int32
// arithmetic wraps, and moving by a constant commutes with wrapping).
std::optional<int64_t> integerStride(const Expr& e, const std::string& var) {
  if (!e->index && e->type != DType::I32) return std::nullopt;
  if (!dependsOn(e, var)) return 0;
  if (e->index) return strideIn(e, var);
  switch (e->kind) {
    case ExprKind::Cast:
      return integerStride(e->operands[0], var);
    case ExprKind::Unary:
      if (e->unaryOp == UnaryOp::Neg) {
        auto s = integerStride(e->operands[0], var);
        if (s) return -*s;
      }
      return std::nullopt;
    case ExprKind::Binary:
      return combinedStride(*e, integerStride(e->operands[0], var), integerStride(e->operands[1], var));
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<QuotientIndex> quotientIndex(const Expr& e, const std::string& var) {
  if (!e->index && e->type != DType::I32) return std::nullopt;
  switch (e->kind) {
    case ExprKind::Cast:
      return quotientIndex(e->operands[0], var);
    case ExprKind::Binary: {
      const Expr& a = e->operands[0];
      const Expr& b = e->operands[1];
      if (e->binaryOp == BinaryOp::Add) {
        if (!dependsOn(a, var)) return quotientIndex(b, var);
        if (!dependsOn(b, var)) return quotientIndex(a, var);
        return std::nullopt;
      }
      if (e->binaryOp == BinaryOp::Sub) return dependsOn(b, var) ? std::nullopt : quotientIndex(a, var);
      if (e->binaryOp != BinaryOp::Div || b->kind != ExprKind::IntImm) return std::nullopt;
      std::optional<int64_t> stride = integerStride(a, var);
      if (!stride || *stride != 1) return std::nullopt;
      for (int shift = 1; shift <= 4; ++shift)
        if (b->intValue == int64_t{1} << shift) return QuotientIndex{a, shift};
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

bool isIntegerLaneValue(const Expr& e, const std::string& var) {
  std::optional<int64_t> stride = integerStride(e, var);
  return stride && (*stride == 0 || *stride == 1);
}

std::optional<ReductionStore> asReduction(const StmtNode& store, const LetBindings& lets) {
  Expr v = inlineLets(store.value, lets);
  Expr index = inlineLets(store.index, lets);
  if (v->kind != ExprKind::Binary) return std::nullopt;
  BinaryOp op = v->binaryOp;
  if (op != BinaryOp::Add && op != BinaryOp::Mul && op != BinaryOp::Min && op != BinaryOp::Max)
    return std::nullopt;
  auto isSelf = [&](const Expr& x) {
    return x->kind == ExprKind::Load && x->name == store.name && sameExpr(x->operands[0], index);
  };
  if (isSelf(v->operands[0])) return ReductionStore{op, v->operands[1]};
  if (isSelf(v->operands[1])) return ReductionStore{op, v->operands[0]};
  return std::nullopt;
}

// b - a when it is a constant: equal expressions, x + c against x, or two constants.
namespace {
std::optional<int64_t> constantDifference(const Expr& b, const Expr& a) {
  if (b->kind == ExprKind::IntImm && a->kind == ExprKind::IntImm) return b->intValue - a->intValue;
  if (sameExpr(b, a)) return 0;
  if (b->kind == ExprKind::Binary && b->binaryOp == te::BinaryOp::Add && b->index) {
    for (int side : {0, 1}) {
      const Expr& c = b->operands[static_cast<size_t>(1 - side)];
      if (c->kind == ExprKind::IntImm && sameExpr(b->operands[static_cast<size_t>(side)], a))
        return c->intValue;
    }
    // (x + c1) - (x + c2)
    const Expr& c1 = b->operands[1];
    if (c1->kind == ExprKind::IntImm && a->kind == ExprKind::Binary && a->binaryOp == te::BinaryOp::Add &&
        a->index && a->operands[1]->kind == ExprKind::IntImm && sameExpr(b->operands[0], a->operands[0]))
      return c1->intValue - a->operands[1]->intValue;
  }
  return std::nullopt;
}

}  // namespace

namespace {

// The bound of `loop` (step 1, `var <= bound` or `var < bound`) and whether it is inclusive.
std::optional<std::pair<Expr, bool>> stepOneBound(const StmtNode& loop) {
  if (!(loop.step->kind == ExprKind::IntImm && loop.step->intValue == 1)) return std::nullopt;
  const Expr& c = loop.cond;
  if (!(c->kind == ExprKind::Binary && (c->binaryOp == te::BinaryOp::Le || c->binaryOp == te::BinaryOp::Lt) &&
        c->operands[0]->kind == ExprKind::Var && c->operands[0]->name == loop.name))
    return std::nullopt;
  return std::make_pair(c->operands[1], c->binaryOp == te::BinaryOp::Le);
}

// The least constant `bound - init` that some operand of the nested mins in
// `bound` gives (each operand bounds the minimum from above).
std::optional<int64_t> leastConstantDifference(const Expr& bound, const Expr& init) {
  if (std::optional<int64_t> d = constantDifference(bound, init)) return d;
  if (!(bound->kind == ExprKind::Binary && bound->binaryOp == te::BinaryOp::Min && bound->index))
    return std::nullopt;
  std::optional<int64_t> least;
  for (const Expr& o : bound->operands)
    if (std::optional<int64_t> d = leastConstantDifference(o, init); d && (!least || *d < *least)) least = d;
  return least;
}

}  // namespace

// Iterations of `loop` when it runs a constant number of times with step 1.
std::optional<int64_t> constantTripCount(const StmtNode& loop) {
  auto bound = stepOneBound(loop);
  if (!bound) return std::nullopt;
  std::optional<int64_t> d = constantDifference(bound->first, loop.init);
  if (!d) return std::nullopt;
  int64_t trips = *d + (bound->second ? 1 : 0);
  return trips > 0 ? std::optional<int64_t>(trips) : std::nullopt;
}

std::optional<int64_t> maxTripCount(const StmtNode& loop) {
  auto bound = stepOneBound(loop);
  if (!bound) return std::nullopt;
  std::optional<int64_t> d = leastConstantDifference(bound->first, loop.init);
  if (!d) return std::nullopt;
  int64_t trips = *d + (bound->second ? 1 : 0);
  return trips > 0 ? std::optional<int64_t>(trips) : std::nullopt;
}

double reductionIdentity(te::BinaryOp op) {
  switch (op) {
    case BinaryOp::Mul:
      return 1;
    case BinaryOp::Max:
      return -std::numeric_limits<double>::infinity();
    case BinaryOp::Min:
      return std::numeric_limits<double>::infinity();
    default:
      return 0;
  }
}

std::string whyNotStepOneUpTo(const StmtNode& loop) {
  const Expr& c = loop.cond;
  if (!(loop.step->kind == ExprKind::IntImm && loop.step->intValue == 1)) return "its step is not 1";
  if (!(c->kind == ExprKind::Binary && (c->binaryOp == BinaryOp::Le || c->binaryOp == BinaryOp::Lt) &&
        c->operands[0]->kind == ExprKind::Var && c->operands[0]->name == loop.name &&
        !dependsOn(c->operands[1], loop.name)))
    return "its bound is not of the form var <= uniform";
  return "";
}

std::string whyNotVectorizable(const StmtNode& loop, const BufferTypes& buffers,
                               const std::string& blockVar) {
  return BodyChecker(loop, buffers, blockVar).run();
}

bool isTransposedRead(const Expr& index, const std::string& var, const std::string& blockVar) {
  std::optional<int64_t> stride = strideIn(index, var);
  if (!stride || *stride == 0 || *stride == 1 || *stride == 2 || quotientIndex(index, var)) return false;
  std::optional<int64_t> along = strideIn(index, blockVar);
  return along && *along == 1;
}

}  // namespace tessel::lir
