#include <cmath>
#include <map>

#include "runtime/StagePlan.h"

namespace tessel::runtime::interp {

static double (*mathFunction(te::UnaryOp op))(double) {
  using U = te::UnaryOp;
  static const std::map<U, double (*)(double)> kFns = {
      {U::Sin, [](double x) { return std::sin(x); }},
      {U::Cos, [](double x) { return std::cos(x); }},
      {U::Tan, [](double x) { return std::tan(x); }},
      {U::Asin, [](double x) { return std::asin(x); }},
      {U::Acos, [](double x) { return std::acos(x); }},
      {U::Atan, [](double x) { return std::atan(x); }},
      {U::Sinh, [](double x) { return std::sinh(x); }},
      {U::Cosh, [](double x) { return std::cosh(x); }},
      {U::Asinh, [](double x) { return std::asinh(x); }},
      {U::Acosh, [](double x) { return std::acosh(x); }},
      {U::Atanh, [](double x) { return std::atanh(x); }},
      {U::Exp2, [](double x) { return std::exp2(x); }},
      {U::Expm1, [](double x) { return std::expm1(x); }},
      {U::Log2, [](double x) { return std::log2(x); }},
      {U::Log10, [](double x) { return std::log10(x); }},
      {U::Log1p, [](double x) { return std::log1p(x); }},
      {U::Cbrt, [](double x) { return std::cbrt(x); }},
      {U::Erfc, [](double x) { return std::erfc(x); }},
      {U::Lgamma, [](double x) { return std::lgamma(x); }},
      {U::Tgamma, [](double x) { return std::tgamma(x); }},
      {U::Round, [](double x) { return std::round(x); }},
      {U::Trunc, [](double x) { return std::trunc(x); }},
  };
  auto it = kFns.find(op);
  return it == kFns.end() ? nullptr : it->second;
}

static double (*mathFunction(te::BinaryOp op))(double, double) {
  using B = te::BinaryOp;
  static const std::map<B, double (*)(double, double)> kFns = {
      {B::Atan2, [](double x, double y) { return std::atan2(x, y); }},
      {B::Hypot, [](double x, double y) { return std::hypot(x, y); }},
      {B::Copysign, [](double x, double y) { return std::copysign(x, y); }},
      {B::Fdim, [](double x, double y) { return std::fdim(x, y); }},
      {B::Remainder, [](double x, double y) { return std::remainder(x, y); }},
  };
  auto it = kFns.find(op);
  return it == kFns.end() ? nullptr : it->second;
}

// Integer index arithmetic (i + 2*kh - 1) is folded into one affine node: it
// is most of the work in guarded reads. Coefficients are kept modulo 2^32, so
// the wrapped result equals int32 arithmetic step by step.

StagePlan::StagePlan(const te::Stage& s, std::vector<TensorData>& tensors) : stage_(s), tensors_(tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) tensorIds_[tensors[i].decl->name] = static_cast<int>(i);
  auto addLoop = [&](const std::string& v, std::vector<Loop>& loops) {
    for (const auto& n : slotNames_)
      if (n == v) return;
    auto r = s.ranges.find(v);
    TESSEL_CHECK(r != s.ranges.end(), kPass, "no range for index variable " + v + " of " + s.output);
    loops.push_back({static_cast<int>(slotNames_.size()), r->second.lo, r->second.hi});
    loopOf_[loops.back().slot] = loops.back();
    slotNames_.push_back(v);
  };
  for (const auto& v : s.indices) addLoop(v, outerLoops_);
  for (const auto& v : s.reductionVars) addLoop(v, reductionLoops_);
  if (s.reduction == te::Reduction::None && !reductionLoops_.empty())
    userError(s.loc, "'" + s.output + "' is defined with '=' but '" + s.reductionVars[0] +
                         "' appears only on the right-hand side; use a reduction such as '+=!'");
  vars_.assign(slotNames_.size(), 0);

  auto it = tensorIds_.find(s.output);
  TESSEL_CHECK(it != tensorIds_.end(), kPass, "stage writes unknown tensor " + s.output);
  out_ = it->second;
  const auto& shape = tensors_[out_].decl->shape;
  if (shape.size() != s.indices.size())
    userError(s.loc, "'" + s.output + "' has rank " + std::to_string(shape.size()) + " but is defined with " +
                         std::to_string(s.indices.size()) + " indices");
  for (size_t d = 0; d < shape.size(); ++d) {
    outSlots_.push_back(slotOf(s.indices[d]));
    const te::Range& r = s.ranges.at(s.indices[d]);
    if (r.hi > r.lo && (r.lo < 0 || r.hi > shape[d]))
      userError(s.loc, "'" + s.output + "' is written at " + s.indices[d] + " in " + std::to_string(r.lo) +
                           ":" + std::to_string(r.hi) + ", outside its dimension " + std::to_string(d) +
                           " of size " + std::to_string(shape[d]));
  }
  root_ = compile(s.rhs);
}

int StagePlan::slotOf(const std::string& var) const {
  for (size_t i = 0; i < slotNames_.size(); ++i)
    if (slotNames_[i] == var) return static_cast<int>(i);
  throw InternalError(kPass, "index variable " + var + " of " + stage_.output + " has no range");
}

// The opcode of a te operation at node type t (float ops compute in double,
// integer ops in wrapping int32).
static Op unaryOp(te::UnaryOp op, DType t) {
  using U = te::UnaryOp;
  static const std::map<U, std::pair<Op, Op>> kOps = {
      // {float op, integer op}
      {U::Neg, {Op::FNeg, Op::INeg}},
      {U::Abs, {Op::FAbs, Op::IAbs}},
      {U::Not, {Op::Not, Op::Not}},
      {U::Exp, {Op::Exp, Op::Exp}},
      {U::Log, {Op::Log, Op::Log}},
      {U::Sqrt, {Op::Sqrt, Op::Sqrt}},
      {U::Rsqrt, {Op::Rsqrt, Op::Rsqrt}},
      {U::Tanh, {Op::Tanh, Op::Tanh}},
      {U::Sigmoid, {Op::Sigmoid, Op::Sigmoid}},
      {U::Erf, {Op::Erf, Op::Erf}},
      {U::Floor, {Op::Floor, Op::Floor}},
      {U::Ceil, {Op::Ceil, Op::Ceil}},
  };
  const auto& ops = kOps.at(op);
  return te::isFloat(t) ? ops.first : ops.second;
}

static Op binaryOp(te::BinaryOp op, DType t) {
  using B = te::BinaryOp;
  static const std::map<B, std::pair<Op, Op>> kOps = {
      // {float op, integer op}
      {B::Add, {Op::FAdd, Op::IAdd}}, {B::Sub, {Op::FSub, Op::ISub}}, {B::Mul, {Op::FMul, Op::IMul}},
      {B::Div, {Op::FDiv, Op::IDiv}}, {B::Mod, {Op::FMod, Op::IMod}}, {B::Min, {Op::FMin, Op::IMin}},
      {B::Max, {Op::FMax, Op::IMax}}, {B::Pow, {Op::Pow, Op::Pow}},   {B::Lt, {Op::Lt, Op::Lt}},
      {B::Le, {Op::Le, Op::Le}},      {B::Gt, {Op::Gt, Op::Gt}},      {B::Ge, {Op::Ge, Op::Ge}},
      {B::Eq, {Op::Eq, Op::Eq}},      {B::Ne, {Op::Ne, Op::Ne}},      {B::And, {Op::And, Op::And}},
      {B::Or, {Op::Or, Op::Or}},
  };
  const auto& ops = kOps.at(op);
  return te::isFloat(t) ? ops.first : ops.second;
}

bool StagePlan::fold(const Expr& e, LinearForm& f) const {
  switch (e->kind) {
    case ExprKind::Const:
      if (te::isFloat(e->type)) return false;
      f.constant = static_cast<int64_t>(e->value);
      return true;
    case ExprKind::Var:
      f.coeffs[slotOf(e->name)] = 1;
      return true;
    case ExprKind::Unary:
      if (e->unaryOp != te::UnaryOp::Neg || e->type != DType::I32 || !fold(e->operands[0], f)) return false;
      for (auto& [slot, c] : f.coeffs) c = wrapped(-c);
      f.constant = wrapped(-f.constant);
      return true;
    case ExprKind::Binary: {
      if (e->type != DType::I32) return false;
      LinearForm a, b;
      if (!fold(e->operands[0], a) || !fold(e->operands[1], b)) return false;
      switch (e->binaryOp) {
        case te::BinaryOp::Add:
        case te::BinaryOp::Sub: {
          int64_t sign = e->binaryOp == te::BinaryOp::Add ? 1 : -1;
          for (auto& [slot, c] : b.coeffs) a.coeffs[slot] = wrapped(a.coeffs[slot] + sign * c);
          a.constant = wrapped(a.constant + sign * b.constant);
          f = std::move(a);
          return true;
        }
        case te::BinaryOp::Mul: {
          if (!a.coeffs.empty() && !b.coeffs.empty()) return false;
          if (!a.coeffs.empty()) std::swap(a, b);  // a is now the constant factor
          for (auto& [slot, c] : b.coeffs) c = wrapped(c * a.constant);
          b.constant = wrapped(b.constant * a.constant);
          f = std::move(b);
          return true;
        }
        default:
          return false;
      }
    }
    default:
      return false;
  }
}

int StagePlan::addAffine(const LinearForm& f) {
  Affine a;
  a.constant = f.constant;
  a.begin = static_cast<int>(terms_.size());
  for (const auto& [slot, c] : f.coeffs)
    if (c != 0) terms_.push_back({slot, c});
  a.end = static_cast<int>(terms_.size());
  affines_.push_back(a);
  return static_cast<int>(affines_.size()) - 1;
}

// Unsigned arithmetic: wraps (mod 2^64) instead of overflowing.
uint64_t StagePlan::linear(const Affine& a) const {
  uint64_t s = static_cast<uint64_t>(a.constant);
  for (int k = a.begin; k < a.end; ++k)
    s += static_cast<uint64_t>(terms_[k].coeff) * static_cast<uint64_t>(vars_[terms_[k].slot]);
  return s;
}

// Is f in [0, extent) everywhere on the (non-empty) loop box? Then its int32
// value never wraps and no run-time check is needed.
bool StagePlan::inBounds(const LinearForm& f, int64_t extent) const {
  double lo = static_cast<double>(f.constant), hi = lo;
  for (const auto& [slot, c] : f.coeffs) {
    const Loop& l = loopOf_.at(slot);
    if (l.hi <= l.lo) return false;
    double a = static_cast<double>(c) * static_cast<double>(l.lo);
    double b = static_cast<double>(c) * static_cast<double>(l.hi - 1);
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  return lo >= 0 && hi < static_cast<double>(extent) && hi < 2147483648.0;
}

bool StagePlan::collectGuard(const Expr& e, std::vector<GuardTerm>& out) const {
  if (e->kind != ExprKind::Binary) return false;
  if (e->binaryOp == te::BinaryOp::And)
    return collectGuard(e->operands[0], out) && collectGuard(e->operands[1], out);
  GuardTerm t{{}, {}, e->binaryOp};
  if (!te::isComparison(e->binaryOp) || !fold(e->operands[0], t.a) || !fold(e->operands[1], t.b))
    return false;
  out.push_back(std::move(t));
  return true;
}

bool StagePlan::guard(const Guard& g) const {
  for (int k = g.begin; k < g.end; ++k) {
    const Compare& c = compares_[k];
    int32_t a = affine(affines_[c.a]), b = affine(affines_[c.b]);
    bool ok = false;
    switch (c.op) {
      case te::BinaryOp::Lt:
        ok = a < b;
        break;
      case te::BinaryOp::Le:
        ok = a <= b;
        break;
      case te::BinaryOp::Gt:
        ok = a > b;
        break;
      case te::BinaryOp::Ge:
        ok = a >= b;
        break;
      case te::BinaryOp::Eq:
        ok = a == b;
        break;
      default:
        ok = a != b;
        break;
    }
    if (!ok) return false;
  }
  return true;
}

int StagePlan::compile(const Expr& e) {
  Node n;
  n.type = e->type;
  LinearForm f;
  std::vector<GuardTerm> compares;
  if ((e->kind == ExprKind::Unary || e->kind == ExprKind::Binary) && fold(e, f)) {
    n.op = Op::Affine;
    n.ref = addAffine(f);
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size()) - 1;
  }
  if (collectGuard(e, compares)) {
    n.op = Op::Guard;
    n.ref = static_cast<int>(guards_.size());
    guards_.push_back(
        {static_cast<int>(compares_.size()), static_cast<int>(compares_.size() + compares.size())});
    for (const GuardTerm& c : compares) compares_.push_back({addAffine(c.a), addAffine(c.b), c.op});
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size()) - 1;
  }
  switch (e->kind) {
    case ExprKind::Const:
      n.op = Op::Const;
      n.value = e->value;
      break;
    case ExprKind::Var:
      n.op = Op::Var;
      n.slot = slotOf(e->name);
      break;
    case ExprKind::Access:
      n.op = Op::Load;
      n.ref = compileLoad(e);
      break;
    case ExprKind::Unary: {
      if ((n.math1 = mathFunction(e->unaryOp))) {
        n.op = Op::Math1;
      } else {
        n.op = unaryOp(e->unaryOp, e->type);
      }
      n.a = compile(e->operands.at(0));
      break;
    }
    case ExprKind::Binary: {
      if ((n.math2 = mathFunction(e->binaryOp))) {
        n.op = Op::Math2;
      } else {
        n.op = binaryOp(e->binaryOp, e->type);
      }
      n.a = compile(e->operands.at(0));
      n.b = compile(e->operands.at(1));
      break;
    }
    case ExprKind::Select:
      n.op = Op::Select;
      n.a = compile(e->operands.at(0));
      n.b = compile(e->operands.at(1));
      n.c = compile(e->operands.at(2));
      break;
    case ExprKind::Cast:
      n.op = Op::Cast;
      n.a = compile(e->operands.at(0));
      break;
  }
  nodes_.push_back(n);
  return roundedToComputeType(e, static_cast<int>(nodes_.size()) - 1);
}

// Like C, f32, f16 and bf16 arithmetic happens in float, one operation at a
// time: the result of each such operation is rounded to f32 (reductions
// alone accumulate in double). Besides matching the kernel bit for bit on
// elementwise code, this keeps operations that jump (casts to integers,
// comparisons, floor) deciding like the kernel: int32(A * 1000) with
// A = 0.005f is 5 in float arithmetic but 4 in double.
int StagePlan::roundedToComputeType(const Expr& e, int node) {
  bool computed = e->kind == ExprKind::Unary || e->kind == ExprKind::Binary;
  if (!computed || !te::isFloat(e->type) || e->type == DType::F64) return node;
  Node n;
  n.op = Op::RoundF32;
  n.type = DType::F32;
  n.a = node;
  nodes_.push_back(n);
  return static_cast<int>(nodes_.size()) - 1;
}

int StagePlan::compileLoad(const Expr& e) {
  auto it = tensorIds_.find(e->name);
  if (it == tensorIds_.end()) userError(e->loc, "read of unknown tensor '" + e->name + "'");
  const TensorData& t = tensors_[it->second];
  if (t.decl->shape.size() != e->operands.size())
    userError(e->loc, "'" + e->name + "' has rank " + std::to_string(t.decl->shape.size()) +
                          " but is read with " + std::to_string(e->operands.size()) + " indices in " +
                          te::toString(e));
  Load l;
  l.data = t.values.data();
  l.expr = e;
  LinearForm flat;
  bool proven = true;
  for (size_t d = 0; d < e->operands.size(); ++d) {
    Dim dim;
    dim.extent = t.decl->shape[d];
    dim.stride = t.strides[d];
    LinearForm f;
    if (fold(e->operands[d], f)) {
      dim.affine = addAffine(f);
      proven = proven && inBounds(f, dim.extent);
      for (const auto& [slot, c] : f.coeffs) flat.coeffs[slot] += c * dim.stride;
      flat.constant += f.constant * dim.stride;
    } else {
      dim.node = compile(e->operands[d]);
      proven = false;
    }
    l.dims.push_back(dim);
  }
  if (proven) l.flat = addAffine(flat);
  loads_.push_back(std::move(l));
  return static_cast<int>(loads_.size()) - 1;
}

}  // namespace tessel::runtime::interp
