#include "runtime/InterpreterStage.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>

#include "abi/KernelPrelude.h"

namespace tessel::runtime {

using te::DType;
using te::Expr;
using te::ExprKind;

namespace {

const char* const kPass = "interpreter";

int64_t wrapped(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

// Opcodes are specialized at compile time so evaluation never re-inspects types.
// clang-format off
enum class Op : uint8_t {
  Const, Var, Load, Select, Cast, Not, And, Or, Lt, Le, Gt, Ge, Eq, Ne,
  FNeg, FAbs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Erf, Floor, Ceil,
  FAdd, FSub, FMul, FDiv, FMod, FMin, FMax, Pow,
  IAdd, ISub, IMul, IDiv, IMod, INeg, IAbs, IMin, IMax, Affine, Guard, RoundF32,
  Math1, Math2,  // C math library functions through Node::math1 / Node::math2
};
// clang-format on

struct Node {
  Op op = Op::Const;
  DType type = DType::F32;
  int a = -1, b = -1, c = -1;                 // operand nodes
  double value = 0;                           // Const
  int slot = -1;                              // Var
  int ref = -1;                               // Load: index in loads_; Affine: in affines_; Guard: in guards_
  double (*math1)(double) = nullptr;          // Math1
  double (*math2)(double, double) = nullptr;  // Math2
};

// The double-precision C functions behind te's libm ops (te::libmName).
double (*mathFunction(te::UnaryOp op))(double) {
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

double (*mathFunction(te::BinaryOp op))(double, double) {
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
struct Term {
  int slot;
  int64_t coeff;
};
struct Affine {
  int64_t constant = 0;
  int begin = 0, end = 0;  // in StagePlan::terms_
};
struct LinearForm {               // an affine form while it is folded
  std::map<int, int64_t> coeffs;  // slot -> coefficient
  int64_t constant = 0;
};

// A conjunction of comparisons between affine forms, such as the padding
// guard `h + kh - 1 >= 0 && h + kh - 1 < H`, evaluated as one node.
struct Compare {
  int a, b;  // affine forms
  te::BinaryOp op;
};
struct GuardTerm {  // a Compare while it is collected
  LinearForm a, b;
  te::BinaryOp op;
};
struct Guard {
  int begin = 0, end = 0;  // in StagePlan::compares_
};

// One dimension of a read: an affine form over loop slots, or (e.g. an
// indirect read) an index expression evaluated at run time.
struct Dim {
  int affine = -1;
  int node = -1;
  int64_t extent = 0, stride = 0;
};
struct Load {
  const double* data = nullptr;
  int flat = -1;  // >= 0: the flat offset as one affine form, every dim being in bounds on the loop box
  std::vector<Dim> dims;
  Expr expr;  // for error messages
};

struct Loop {
  int slot;
  int64_t lo, hi;
};

// Calls f() at every point of the loop nest (lexicographic order); the loop
// variables live in vars[loop.slot].
template <class F>
void forEachPoint(const std::vector<Loop>& loops, int64_t* vars, F&& f) {
  for (const Loop& l : loops) {
    if (l.hi <= l.lo) return;
    vars[l.slot] = l.lo;
  }
  for (;;) {
    f();
    size_t d = loops.size();
    for (;;) {
      if (d == 0) return;
      const Loop& l = loops[--d];
      if (++vars[l.slot] < l.hi) break;
      vars[l.slot] = l.lo;
    }
  }
}

class StagePlan {
 public:
  StagePlan(const te::Stage& s, std::vector<TensorData>& tensors);
  void run();

 private:
  int compile(const Expr& e);
  int compileLoad(const Expr& e);
  int roundedToComputeType(const Expr& e, int node);
  bool fold(const Expr& e, LinearForm& f) const;
  int addAffine(const LinearForm& f);
  int32_t affine(const Affine& a) const { return static_cast<int32_t>(static_cast<uint32_t>(linear(a))); }
  uint64_t linear(const Affine& a) const;
  bool inBounds(const LinearForm& f, int64_t extent) const;
  bool collectGuard(const Expr& e, std::vector<GuardTerm>& out) const;
  bool guard(const Guard& g) const;
  int slotOf(const std::string& var) const;
  double eval(int n) const;
  double load(const Load& l) const;
  [[noreturn]] void outOfBounds(const Load& l, size_t dim, double index) const;

  const te::Stage& stage_;
  std::vector<TensorData>& tensors_;
  std::map<std::string, int> tensorIds_;
  std::vector<std::string> slotNames_;
  std::vector<Node> nodes_;
  std::vector<Load> loads_;
  std::vector<Affine> affines_;
  std::vector<Term> terms_;
  std::vector<Guard> guards_;
  std::vector<Compare> compares_;
  std::vector<Loop> outerLoops_, reductionLoops_;
  std::map<int, Loop> loopOf_;  // slot -> its loop
  std::vector<int> outSlots_;   // slot of each output index
  int out_ = -1;
  int root_ = -1;
  std::vector<int64_t> vars_;
};

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
Op unaryOp(te::UnaryOp op, DType t) {
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

Op binaryOp(te::BinaryOp op, DType t) {
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

double StagePlan::load(const Load& l) const {
  if (l.flat >= 0) return l.data[static_cast<int64_t>(linear(affines_[l.flat]))];
  int64_t flat = 0;
  for (size_t d = 0; d < l.dims.size(); ++d) {
    const Dim& dim = l.dims[d];
    int64_t i;
    if (dim.node >= 0) {
      double v = eval(dim.node);
      if (!(v >= 0 && v < static_cast<double>(dim.extent))) outOfBounds(l, d, v);
      i = static_cast<int64_t>(v);
    } else {
      i = affine(affines_[dim.affine]);
      if (i < 0 || i >= dim.extent) outOfBounds(l, d, static_cast<double>(i));
    }
    flat += i * dim.stride;
  }
  return l.data[flat];
}

void StagePlan::outOfBounds(const Load& l, size_t dim, double index) const {
  std::ostringstream os;
  os << "read " << te::toString(l.expr) << " in the definition of '" << stage_.output
     << "' is out of bounds: index " << dim << " is " << index << ", not in [0, " << l.dims[dim].extent
     << ") (at";
  for (size_t i = 0; i < slotNames_.size(); ++i) os << (i ? ", " : " ") << slotNames_[i] << "=" << vars_[i];
  os << ")";
  userError(l.expr->loc.known() ? l.expr->loc : stage_.loc, os.str());
}

int32_t i32(double v) { return static_cast<int32_t>(v); }  // v already holds an int32-range integer
double truth(bool b) { return b ? 1.0 : 0.0; }
double wrap32(int64_t v) { return static_cast<double>(wrapped(v)); }

double StagePlan::eval(int i) const {
  const Node& n = nodes_[i];
  switch (n.op) {
    case Op::Const:
      return n.value;
    case Op::Var:
      return static_cast<double>(vars_[n.slot]);
    case Op::Load:
      return load(loads_[n.ref]);
    case Op::Affine:
      return affine(affines_[n.ref]);
    case Op::Guard:
      return truth(guard(guards_[n.ref]));
    case Op::RoundF32:
      return static_cast<float>(eval(n.a));
    case Op::Select:
      return eval(n.a) != 0 ? eval(n.b) : eval(n.c);
    case Op::Cast:
      return te::roundToDType(eval(n.a), n.type);
    case Op::Not:
      return truth(eval(n.a) == 0);
    case Op::And:
      return truth(eval(n.a) != 0 && eval(n.b) != 0);  // short-circuit, like C
    case Op::Or:
      return truth(eval(n.a) != 0 || eval(n.b) != 0);
    case Op::Lt:
      return truth(eval(n.a) < eval(n.b));
    case Op::Le:
      return truth(eval(n.a) <= eval(n.b));
    case Op::Gt:
      return truth(eval(n.a) > eval(n.b));
    case Op::Ge:
      return truth(eval(n.a) >= eval(n.b));
    case Op::Eq:
      return truth(eval(n.a) == eval(n.b));
    case Op::Ne:
      return truth(eval(n.a) != eval(n.b));
    case Op::FNeg:
      return -eval(n.a);
    case Op::FAbs:
      return std::fabs(eval(n.a));
    case Op::Exp:
      return std::exp(eval(n.a));
    case Op::Log:
      return std::log(eval(n.a));
    case Op::Sqrt:
      return std::sqrt(eval(n.a));
    case Op::Rsqrt:
      return tessel_rsqrt(eval(n.a));
    case Op::Tanh:
      return std::tanh(eval(n.a));
    case Op::Sigmoid:
      return tessel_sigmoid(eval(n.a));
    case Op::Erf:
      return std::erf(eval(n.a));
    case Op::Floor:
      return std::floor(eval(n.a));
    case Op::Ceil:
      return std::ceil(eval(n.a));
    case Op::FAdd:
      return eval(n.a) + eval(n.b);
    case Op::FSub:
      return eval(n.a) - eval(n.b);
    case Op::FMul:
      return eval(n.a) * eval(n.b);
    case Op::FDiv:
      return eval(n.a) / eval(n.b);
    case Op::FMod:
      return std::fmod(eval(n.a), eval(n.b));
    case Op::FMin:
      return tessel_fmin(eval(n.a), eval(n.b));
    case Op::FMax:
      return tessel_fmax(eval(n.a), eval(n.b));
    case Op::Pow:
      return std::pow(eval(n.a), eval(n.b));
    case Op::Math1:
      return n.math1(eval(n.a));
    case Op::Math2:
      return n.math2(eval(n.a), eval(n.b));
    // Integer operands hold exact integers within int32 range (loop variables
    // included), so int64 arithmetic followed by a wrap is exact.
    case Op::IAdd:
      return wrap32(static_cast<int64_t>(eval(n.a)) + static_cast<int64_t>(eval(n.b)));
    case Op::ISub:
      return wrap32(static_cast<int64_t>(eval(n.a)) - static_cast<int64_t>(eval(n.b)));
    case Op::IMul:
      return wrap32(static_cast<int64_t>(eval(n.a)) * static_cast<int64_t>(eval(n.b)));
    case Op::IDiv:
      return tessel_idiv(i32(eval(n.a)), i32(eval(n.b)));
    case Op::IMod:
      return tessel_imod(i32(eval(n.a)), i32(eval(n.b)));
    case Op::INeg:
      return te::roundToDType(-eval(n.a), n.type);
    case Op::IAbs:
      return te::roundToDType(std::fabs(eval(n.a)), n.type);
    case Op::IMin: {
      double a = eval(n.a), b = eval(n.b);
      return a < b ? a : b;
    }
    case Op::IMax: {
      double a = eval(n.a), b = eval(n.b);
      return a > b ? a : b;
    }
  }
  return 0;
}

// One reduction step. Float tensors accumulate in double (rounded once, at the
// store); other dtypes round every step, as the generated C does.
double combine(te::Reduction r, double acc, double v, DType t) {
  double x = 0;
  switch (r) {
    case te::Reduction::None:
      x = v;
      break;
    case te::Reduction::Sum:
      x = acc + v;
      break;
    case te::Reduction::Prod:
      // An integer product can exceed 2^53: wrap it in integer arithmetic.
      if (!te::isFloat(t) && v == std::trunc(v) && std::fabs(v) < 2147483648.0)
        x = wrap32(static_cast<int64_t>(acc) * static_cast<int64_t>(v));
      else
        x = acc * v;
      break;
    case te::Reduction::Max:
      x = tessel_fmax(acc, v);
      break;
    case te::Reduction::Min:
      x = tessel_fmin(acc, v);
      break;
  }
  return te::isFloat(t) ? x : te::roundToDType(x, t);
}

void StagePlan::run() {
  TensorData& out = tensors_[out_];
  DType t = out.decl->dtype;
  te::Reduction r = stage_.reduction;
  double identity = te::reductionIdentity(r, t);
  int64_t* vars = vars_.data();
  forEachPoint(outerLoops_, vars, [&] {
    int64_t flat = 0;
    for (size_t d = 0; d < outSlots_.size(); ++d) flat += vars[outSlots_[d]] * out.strides[d];
    if (r == te::Reduction::None) {
      out.values[flat] = te::roundToDType(eval(root_), t);
      return;
    }
    double acc = stage_.init ? identity : out.values[flat];
    forEachPoint(reductionLoops_, vars, [&] { acc = combine(r, acc, eval(root_), t); });
    out.values[flat] = te::roundToDType(acc, t);
  });
}

}  // namespace

void runStage(const te::Stage& stage, std::vector<TensorData>& tensors) { StagePlan(stage, tensors).run(); }

}  // namespace tessel::runtime
