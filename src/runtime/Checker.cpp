#include "runtime/Checker.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace tessel::runtime {

namespace {

// Does `got` match `want`? (NaN == NaN, inf == same-sign inf.)
bool matches(double got, double want, const Tolerance& tol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= tol.abs + tol.rel * std::fabs(want);
}

std::string indexString(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string describe(const Buffer& b) {
  std::string s = std::string(te::dtypeName(b.dtype())) + "(";
  for (size_t d = 0; d < b.shape().size(); ++d) s += (d ? "," : "") + std::to_string(b.shape()[d]);
  return s + ")";
}

std::string num(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

void collectReads(const te::Expr& e, std::set<std::string>& out) {
  if (e->kind == te::ExprKind::Access) out.insert(e->name);
  for (const auto& o : e->operands) collectReads(o, out);
}

void collectReadOccurrences(const te::Expr& e, std::vector<std::string>& out) {
  if (e->kind == te::ExprKind::Access) out.push_back(e->name);
  for (const auto& o : e->operands) collectReadOccurrences(o, out);
}

// Error units of `tensor`: the terms accumulated into it plus, for every read
// in its definition, the units of the tensor read. Summing over reads (with
// multiplicity) bounds how products amplify relative error: T*T carries twice
// T's error, a sum of a k-term reduction with itself the same. Units times the
// unit roundoff bound the relative error of a value computed in a different
// order or precision (terms of magnitude ~1, as Buffer::randomize makes).
double errorUnits(const te::Program& p, const std::string& tensor) {
  std::map<std::string, double> units;  // tensors not yet written: 0
  for (const auto& s : p.stages) {
    double len = 1;
    for (const auto& v : s.reductionVars) {
      auto r = s.ranges.find(v);
      if (r != s.ranges.end()) len *= static_cast<double>(std::max<int64_t>(r->second.extent(), 1));
    }
    std::vector<std::string> reads;
    collectReadOccurrences(s.rhs, reads);
    double fed = 0;
    for (const auto& r : reads) fed += units[r];
    // A `+=` without `!` adds onto what the tensor already held.
    double before = s.init || s.reduction == te::Reduction::None ? 0 : units[s.output];
    units[s.output] = std::max(units[s.output], before + len + fed);
  }
  return units[tensor];
}

// How large an expression's values get and how much rounding error they
// carry, in units of the accumulator's roundoff, estimated from the largest
// |value| of each tensor read (its magnitude) and that tensor's own error. A
// sum of large terms that cancels keeps the error of its terms, which a
// tolerance that assumed terms of magnitude ~1 missed (fuzz seed
// 15164081789967802329: terms ~1e3 summing to 0).
struct Estimate {
  double magnitude = 0;
  double error = 0;
};

class ErrorModel {
 public:
  explicit ErrorModel(const std::map<std::string, double>& magnitudes) : magnitudes_(magnitudes) {}

  // Walks the stages in order; errors accumulate like the terms do.
  void run(const te::Program& p) {
    for (const auto& s : p.stages) {
      double len = 1;
      for (const auto& v : s.reductionVars) {
        auto r = s.ranges.find(v);
        if (r != s.ranges.end()) len *= static_cast<double>(std::max<int64_t>(r->second.extent(), 1));
      }
      Estimate term = of(s.rhs);
      // Each of the len terms brings its error, and each addition rounds a
      // partial sum no larger than len terms.
      double error = len * (term.error + term.magnitude);
      double before = s.init || s.reduction == te::Reduction::None ? 0 : errors_[s.output];
      errors_[s.output] = std::max(errors_[s.output], before + error);
    }
  }
  double error(const std::string& tensor) const {
    auto it = errors_.find(tensor);
    return it == errors_.end() ? 0 : it->second;
  }

 private:
  double magnitude(const std::string& tensor) const {
    auto it = magnitudes_.find(tensor);
    return it == magnitudes_.end() ? 1 : it->second;
  }

  Estimate of(const te::Expr& e) const {
    std::vector<Estimate> o;
    for (const auto& x : e->operands) o.push_back(of(x));
    switch (e->kind) {
      case te::ExprKind::Const:
        return {std::fabs(e->value), 0};
      case te::ExprKind::Var:
        return {1, 0};
      case te::ExprKind::Access:
        return {magnitude(e->name), error(e->name)};
      case te::ExprKind::Cast:
        return o[0];
      case te::ExprKind::Select:
        return {std::max(o[1].magnitude, o[2].magnitude), std::max(o[1].error, o[2].error)};
      case te::ExprKind::Unary:
        return unary(e->unaryOp, o[0]);
      case te::ExprKind::Binary:
        return binary(e->binaryOp, o[0], o[1]);
    }
    return {1, 0};
  }

  static Estimate unary(te::UnaryOp op, Estimate x) {
    switch (op) {
      case te::UnaryOp::Neg:
      case te::UnaryOp::Abs:
      case te::UnaryOp::Floor:
      case te::UnaryOp::Ceil:
      case te::UnaryOp::Round:
      case te::UnaryOp::Trunc:
        return x;
      case te::UnaryOp::Not:
        return {1, 0};
      case te::UnaryOp::Tanh:
      case te::UnaryOp::Sigmoid:
      case te::UnaryOp::Erf:
      case te::UnaryOp::Sin:
      case te::UnaryOp::Cos:
        return {1, x.error + 1};  // slope at most 1
      case te::UnaryOp::Exp: {
        double m = std::exp(std::min(x.magnitude, 700.0));
        return {m, m * (x.error + 1)};
      }
      default:  // other functions: error relative to the larger of the value and 1
        return {std::max(x.magnitude, 1.0), x.error + std::max(x.magnitude, 1.0)};
    }
  }

  static Estimate binary(te::BinaryOp op, Estimate a, Estimate b) {
    switch (op) {
      case te::BinaryOp::Add:
      case te::BinaryOp::Sub:
        return {a.magnitude + b.magnitude, a.error + b.error + a.magnitude + b.magnitude};
      case te::BinaryOp::Mul: {
        double m = a.magnitude * b.magnitude;
        return {m, a.error * b.magnitude + b.error * a.magnitude + m};
      }
      case te::BinaryOp::Min:
      case te::BinaryOp::Max:
        return {std::max(a.magnitude, b.magnitude), std::max(a.error, b.error)};
      default:
        if (te::isComparison(op) || te::isLogical(op)) return {1, 0};
        // Division and the rest: the dividend's scale (divisors are not tracked).
        return {std::max(a.magnitude, 1.0), a.error + b.error + std::max(a.magnitude, 1.0)};
    }
  }

  const std::map<std::string, double>& magnitudes_;
  std::map<std::string, double> errors_;
};

// Operations that C's math library and the interpreter may round differently
// (by an ulp): everything but the correctly rounded IEEE operations.
bool inexactMath(const te::Expr& e) {
  if (e->kind == te::ExprKind::Unary) {
    switch (e->unaryOp) {
      case te::UnaryOp::Neg:
      case te::UnaryOp::Not:
      case te::UnaryOp::Abs:
      case te::UnaryOp::Sqrt:
      case te::UnaryOp::Floor:
      case te::UnaryOp::Ceil:
      case te::UnaryOp::Round:
      case te::UnaryOp::Trunc:
        break;
      default:
        if (te::isFloat(e->type)) return true;
    }
  }
  if (e->kind == te::ExprKind::Binary && (e->binaryOp == te::BinaryOp::Pow || te::libmName(e->binaryOp)) &&
      e->binaryOp != te::BinaryOp::Copysign)
    return true;
  for (const auto& o : e->operands)
    if (inexactMath(o)) return true;
  return false;
}

// Is `tensor` computed, through any chain of stages, from values the kernel
// and the interpreter may round differently?
bool dependsOnInexactMath(const te::Program& p, const std::string& tensor) {
  std::set<std::string> inexact;
  for (const auto& s : p.stages) {
    std::set<std::string> reads;
    collectReads(s.rhs, reads);
    bool fed =
        std::any_of(reads.begin(), reads.end(), [&](const std::string& r) { return inexact.count(r) > 0; });
    // A float reduction accumulates in double here and in f32 in the kernel.
    bool floatReduction = s.reduction != te::Reduction::None && te::isFloat(p.tensor(s.output).dtype);
    if (fed || floatReduction || inexactMath(s.rhs)) inexact.insert(s.output);
  }
  return inexact.count(tensor) > 0;
}

}  // namespace

std::string toString(const Tolerance& t) {
  if (t.abs == 0 && t.rel == 0) return "exact";
  return "abs " + num(t.abs) + " + rel " + num(t.rel);
}

CheckResult compareBuffers(const Buffer& got, const Buffer& want, const Tolerance& tol) {
  CheckResult r;
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    r.pass = false;
    r.firstBadIndex = 0;
    r.message = "got a " + describe(got) + " buffer, want " + describe(want);
    return r;
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    double g = got.get(i), w = want.get(i);
    if (std::isfinite(g) && std::isfinite(w)) {
      double err = std::fabs(g - w);
      r.maxAbsErr = std::max(r.maxAbsErr, err);
      if (w != 0) r.maxRelErr = std::max(r.maxRelErr, err / std::fabs(w));
    }
    if (!matches(g, w, tol)) {
      if (bad++ == 0) r.firstBadIndex = i;
    }
  }
  if (bad == 0) return r;
  r.pass = false;
  int64_t i = r.firstBadIndex;
  std::ostringstream os;
  os << bad << " of " << want.size() << " elements differ; first at " << indexString(want.shape(), i)
     << ": got " << num(got.get(i)) << ", want " << num(want.get(i)) << " (tolerance " << toString(tol)
     << "; max abs err " << num(r.maxAbsErr) << ", max rel err " << num(r.maxRelErr) << ")";
  r.message = os.str();
  return r;
}

Tolerance toleranceFor(const te::Program& p, const std::string& tensor,
                       const std::map<std::string, double>& magnitudes) {
  te::DType t = p.tensor(tensor).dtype;
  // Relative error: k error units of the unit roundoff; absolute error: the
  // error model's estimate, which also scales with the terms' magnitudes.
  double k = errorUnits(p, tensor);
  ErrorModel model(magnitudes);
  model.run(p);
  double e = model.error(tensor);
  constexpr double u32 = 5.96e-8, u64 = 1.11e-16;
  // Integers are exact, unless they come from a libm function or a float
  // reduction through a cast: an ulp of difference there can move a
  // truncation by one, and the float value they come from carries its own
  // error.
  if (!te::isFloat(t))
    return dependsOnInexactMath(p, tensor) ? Tolerance{1 + 16 * u32 * e, 1e-4 + u32 * k} : Tolerance{};
  // The absolute terms allow ~16 roundoffs per estimated unit (the estimate
  // is a typical, not a worst, case), the relative ones the roundoff of every
  // unit. The base terms cover a few ulps of the result and of
  // transcendental functions. f16/bf16 accumulate in f32 and are rounded to
  // the narrow type once, so they may differ by an ulp or two of it.
  switch (t) {
    case te::DType::F64:
      return {1e-12 + 1e-14 * e, 1e-9 + u64 * k};
    case te::DType::F32:
      return {1e-5 + 1e-6 * e, 1e-4 + u32 * k};
    case te::DType::F16:
      return {2e-3 + 1e-4 * std::sqrt(k) + 1e-6 * e, 4e-3 + u32 * k};
    case te::DType::BF16:
      return {1.6e-2 + 1e-3 * std::sqrt(k) + 1e-6 * e, 3e-2 + u32 * k};
    default:
      return {};
  }
}

}  // namespace tessel::runtime
