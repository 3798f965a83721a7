#include <cmath>
#include <sstream>

#include "abi/KernelPrelude.h"
#include "runtime/StagePlan.h"

namespace tessel::runtime::interp {

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

static int32_t i32(double v) { return static_cast<int32_t>(v); }  // v already holds an int32-range integer
static double truth(bool b) { return b ? 1.0 : 0.0; }
static double wrap32(int64_t v) { return static_cast<double>(wrapped(v)); }

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
static double combine(te::Reduction r, double acc, double v, DType t) {
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

}  // namespace tessel::runtime::interp
