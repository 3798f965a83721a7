#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <sstream>

#include "tessel/te.h"

namespace tessel::te {

const char* unaryOpName(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return "-";
    case UnaryOp::Not:
      return "!";
    case UnaryOp::Abs:
      return "abs";
    case UnaryOp::Exp:
      return "exp";
    case UnaryOp::Log:
      return "log";
    case UnaryOp::Sqrt:
      return "sqrt";
    case UnaryOp::Rsqrt:
      return "rsqrt";
    case UnaryOp::Tanh:
      return "tanh";
    case UnaryOp::Sigmoid:
      return "sigmoid";
    case UnaryOp::Erf:
      return "erf";
    case UnaryOp::Floor:
      return "floor";
    case UnaryOp::Ceil:
      return "ceil";
    default:
      return libmName(op);
  }
}

const char* libmName(UnaryOp op) {
  switch (op) {
    case UnaryOp::Sin:
      return "sin";
    case UnaryOp::Cos:
      return "cos";
    case UnaryOp::Tan:
      return "tan";
    case UnaryOp::Asin:
      return "asin";
    case UnaryOp::Acos:
      return "acos";
    case UnaryOp::Atan:
      return "atan";
    case UnaryOp::Sinh:
      return "sinh";
    case UnaryOp::Cosh:
      return "cosh";
    case UnaryOp::Asinh:
      return "asinh";
    case UnaryOp::Acosh:
      return "acosh";
    case UnaryOp::Atanh:
      return "atanh";
    case UnaryOp::Exp2:
      return "exp2";
    case UnaryOp::Expm1:
      return "expm1";
    case UnaryOp::Log2:
      return "log2";
    case UnaryOp::Log10:
      return "log10";
    case UnaryOp::Log1p:
      return "log1p";
    case UnaryOp::Cbrt:
      return "cbrt";
    case UnaryOp::Erfc:
      return "erfc";
    case UnaryOp::Lgamma:
      return "lgamma";
    case UnaryOp::Tgamma:
      return "tgamma";
    case UnaryOp::Round:
      return "round";
    case UnaryOp::Trunc:
      return "trunc";
    default:
      return nullptr;
  }
}

const char* libmName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Atan2:
      return "atan2";
    case BinaryOp::Hypot:
      return "hypot";
    case BinaryOp::Copysign:
      return "copysign";
    case BinaryOp::Fdim:
      return "fdim";
    case BinaryOp::Remainder:
      return "remainder";
    default:
      return nullptr;
  }
}

const char* binaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "+";
    case BinaryOp::Sub:
      return "-";
    case BinaryOp::Mul:
      return "*";
    case BinaryOp::Div:
      return "/";
    case BinaryOp::Mod:
      return "%";
    case BinaryOp::Min:
      return "min";
    case BinaryOp::Max:
      return "max";
    case BinaryOp::Pow:
      return "pow";
    case BinaryOp::Lt:
      return "<";
    case BinaryOp::Le:
      return "<=";
    case BinaryOp::Gt:
      return ">";
    case BinaryOp::Ge:
      return ">=";
    case BinaryOp::Eq:
      return "==";
    case BinaryOp::Ne:
      return "!=";
    case BinaryOp::And:
      return "&&";
    case BinaryOp::Or:
      return "||";
    default:
      return libmName(op);
  }
}

bool isComparison(BinaryOp op) {
  return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
         op == BinaryOp::Eq || op == BinaryOp::Ne;
}
bool isLogical(BinaryOp op) { return op == BinaryOp::And || op == BinaryOp::Or; }

namespace {
std::shared_ptr<ExprNode> node(ExprKind k, DType t, SourceLoc loc) {
  auto n = std::make_shared<ExprNode>();
  n->kind = k;
  n->type = t;
  n->loc = std::move(loc);
  return n;
}
}  // namespace

Expr constant(double v, DType t, SourceLoc loc) {
  auto n = node(ExprKind::Const, t, std::move(loc));
  n->value = roundToDType(v, t);
  return n;
}

Expr var(const std::string& name, SourceLoc loc) {
  auto n = node(ExprKind::Var, DType::I32, std::move(loc));
  n->name = name;
  return n;
}

Expr access(const std::string& tensor, DType t, std::vector<Expr> indices, SourceLoc loc) {
  auto n = node(ExprKind::Access, t, std::move(loc));
  n->name = tensor;
  n->operands = std::move(indices);
  return n;
}

Expr unary(UnaryOp op, Expr x, SourceLoc loc) {
  DType t = x->type;
  switch (op) {
    case UnaryOp::Not:
      t = DType::Bool;
      break;
    case UnaryOp::Neg:
      if (t == DType::Bool || t == DType::U8 || t == DType::I8) t = DType::I32;
      break;
    case UnaryOp::Abs:
      if (t == DType::Bool) t = DType::I32;
      break;
    default:  // transcendental and rounding functions compute in floating point
      if (!isFloat(t)) t = DType::F32;
      break;
  }
  auto n = node(ExprKind::Unary, t, std::move(loc));
  n->unaryOp = op;
  n->operands = {std::move(x)};
  return n;
}

DType binaryResultType(BinaryOp op, DType a, DType b) {
  if (isComparison(op) || isLogical(op)) return DType::Bool;
  DType t = promote(a, b);
  if ((op == BinaryOp::Pow || libmName(op)) && !isFloat(t)) return DType::F32;
  // C's usual arithmetic conversions: small integers compute in int.
  if (!isFloat(t) && op != BinaryOp::Min && op != BinaryOp::Max) return DType::I32;
  return t;
}

Expr binary(BinaryOp op, Expr a, Expr b, SourceLoc loc) {
  DType t = binaryResultType(op, a->type, b->type);
  auto n = node(ExprKind::Binary, t, std::move(loc));
  n->binaryOp = op;
  n->operands = {std::move(a), std::move(b)};
  return n;
}

Expr select(Expr cond, Expr a, Expr b, SourceLoc loc) {
  DType t = promote(a->type, b->type);
  auto n = node(ExprKind::Select, t, std::move(loc));
  n->operands = {std::move(cond), std::move(a), std::move(b)};
  return n;
}

Expr cast(DType t, Expr x, SourceLoc loc) {
  auto n = node(ExprKind::Cast, t, std::move(loc));
  n->operands = {std::move(x)};
  return n;
}

namespace {
void print(std::ostream& os, const Expr& e) {
  switch (e->kind) {
    case ExprKind::Const: {
      if (isFloat(e->type)) {
        std::ostringstream v;
        v.precision(9);
        v << e->value;
        os << v.str();
        if (v.str().find_first_of(".einf") == std::string::npos) os << ".0";
        if (e->type != DType::F32) os << ":" << dtypeName(e->type);
      } else {
        os << static_cast<int64_t>(e->value);
        if (e->type != DType::I32) os << ":" << dtypeName(e->type);
      }
      return;
    }
    case ExprKind::Var:
      os << e->name;
      return;
    case ExprKind::Access: {
      os << e->name;
      if (!e->operands.empty()) {
        os << "(";
        for (size_t i = 0; i < e->operands.size(); ++i) {
          if (i) os << ", ";
          print(os, e->operands[i]);
        }
        os << ")";
      }
      return;
    }
    case ExprKind::Unary:
      if (e->unaryOp == UnaryOp::Neg || e->unaryOp == UnaryOp::Not) {
        os << "(" << unaryOpName(e->unaryOp);
        print(os, e->operands[0]);
        os << ")";
      } else {
        os << unaryOpName(e->unaryOp) << "(";
        print(os, e->operands[0]);
        os << ")";
      }
      return;
    case ExprKind::Binary:
      if (e->binaryOp == BinaryOp::Min || e->binaryOp == BinaryOp::Max || e->binaryOp == BinaryOp::Pow ||
          libmName(e->binaryOp)) {
        os << binaryOpName(e->binaryOp) << "(";
        print(os, e->operands[0]);
        os << ", ";
        print(os, e->operands[1]);
        os << ")";
      } else {
        os << "(";
        print(os, e->operands[0]);
        os << " " << binaryOpName(e->binaryOp) << " ";
        print(os, e->operands[1]);
        os << ")";
      }
      return;
    case ExprKind::Select:
      os << "(";
      print(os, e->operands[0]);
      os << " ? ";
      print(os, e->operands[1]);
      os << " : ";
      print(os, e->operands[2]);
      os << ")";
      return;
    case ExprKind::Cast:
      os << dtypeName(e->type) << "(";
      print(os, e->operands[0]);
      os << ")";
      return;
  }
}

// Coefficients beyond this are treated as non-affine, so affine arithmetic
// downstream (isl text, bounds) never overflows.
constexpr int64_t kAffineLimit = int64_t{1} << 40;

bool tooLarge(int64_t v) { return v > kAffineLimit || v < -kAffineLimit; }

std::optional<AffineExpr> scaled(AffineExpr a, int64_t k) {
  if (tooLarge(k)) return std::nullopt;
  for (auto& [v, c] : a.coeffs) {
    c *= k;
    if (tooLarge(c)) return std::nullopt;
  }
  a.constant *= k;
  if (tooLarge(a.constant)) return std::nullopt;
  return a;
}
}  // namespace

std::string toString(const Expr& e) {
  std::ostringstream os;
  print(os, e);
  return os.str();
}

std::optional<AffineExpr> toAffine(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Const: {
      if (!isInteger(e->type) || tooLarge(static_cast<int64_t>(e->value))) return std::nullopt;
      AffineExpr a;
      a.constant = static_cast<int64_t>(e->value);
      return a;
    }
    case ExprKind::Var: {
      AffineExpr a;
      a.coeffs[e->name] = 1;
      return a;
    }
    case ExprKind::Unary:
      if (e->unaryOp == UnaryOp::Neg) {
        auto x = toAffine(e->operands[0]);
        if (!x) return std::nullopt;
        return scaled(*x, -1);
      }
      return std::nullopt;
    case ExprKind::Cast:
      // Only a cast to i32 of an integer is the identity on index values;
      // narrowing casts wrap and float casts round.
      if (e->type == DType::I32 && e->operands[0]->type == DType::I32) return toAffine(e->operands[0]);
      return std::nullopt;
    case ExprKind::Binary: {
      auto a = toAffine(e->operands[0]);
      auto b = toAffine(e->operands[1]);
      if (!a || !b) return std::nullopt;
      switch (e->binaryOp) {
        case BinaryOp::Add:
        case BinaryOp::Sub: {
          int64_t s = e->binaryOp == BinaryOp::Add ? 1 : -1;
          for (auto& [v, c] : b->coeffs) {
            a->coeffs[v] += s * c;
            if (tooLarge(a->coeffs[v])) return std::nullopt;
          }
          a->constant += s * b->constant;
          if (tooLarge(a->constant)) return std::nullopt;
          for (auto it = a->coeffs.begin(); it != a->coeffs.end();)
            it = it->second == 0 ? a->coeffs.erase(it) : std::next(it);
          return a;
        }
        case BinaryOp::Mul:
          if (a->coeffs.empty()) return scaled(*b, a->constant);
          if (b->coeffs.empty()) return scaled(*a, b->constant);
          return std::nullopt;
        case BinaryOp::Div:
          // Exact constant division only (index arithmetic stays integral).
          if (a->coeffs.empty() && b->coeffs.empty() && b->constant != 0 && a->constant % b->constant == 0) {
            AffineExpr r;
            r.constant = a->constant / b->constant;
            return r;
          }
          return std::nullopt;
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::pair<int64_t, int64_t>> int32Range(const Expr& e,
                                                      const std::map<std::string, Range>& ranges) {
  using Interval = std::pair<int64_t, int64_t>;
  auto checked = [](Interval r) -> std::optional<Interval> {
    if (r.first < INT32_MIN || r.second > INT32_MAX) return std::nullopt;
    return r;
  };
  switch (e->kind) {
    case ExprKind::Const:
      if (!isInteger(e->type)) return std::nullopt;
      return Interval{static_cast<int64_t>(e->value), static_cast<int64_t>(e->value)};
    case ExprKind::Var: {
      auto r = ranges.find(e->name);
      if (r == ranges.end()) return std::nullopt;
      return checked({r->second.lo, r->second.hi - 1});
    }
    case ExprKind::Unary: {
      if (e->unaryOp != UnaryOp::Neg) return std::nullopt;
      auto x = int32Range(e->operands[0], ranges);
      if (!x) return std::nullopt;
      return checked({-x->second, -x->first});
    }
    case ExprKind::Cast:
      if (e->type != DType::I32 || e->operands[0]->type != DType::I32) return std::nullopt;
      return int32Range(e->operands[0], ranges);
    case ExprKind::Binary: {
      auto a = int32Range(e->operands[0], ranges);
      auto b = int32Range(e->operands[1], ranges);
      if (!a || !b) return std::nullopt;
      switch (e->binaryOp) {
        case BinaryOp::Add:
          return checked({a->first + b->first, a->second + b->second});
        case BinaryOp::Sub:
          return checked({a->first - b->second, a->second - b->first});
        case BinaryOp::Mul: {
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

const char* reductionName(Reduction r) {
  switch (r) {
    case Reduction::None:
      return "=";
    case Reduction::Sum:
      return "+=";
    case Reduction::Prod:
      return "*=";
    case Reduction::Max:
      return "max=";
    case Reduction::Min:
      return "min=";
  }
  return "?";
}

double reductionIdentity(Reduction r, DType t) {
  switch (r) {
    case Reduction::None:
    case Reduction::Sum:
      return 0;
    case Reduction::Prod:
      return 1;
    case Reduction::Max:
      if (isFloat(t)) return -std::numeric_limits<double>::infinity();
      if (t == DType::I32) return std::numeric_limits<int32_t>::min();
      if (t == DType::I8) return -128;
      return 0;
    case Reduction::Min:
      if (isFloat(t)) return std::numeric_limits<double>::infinity();
      if (t == DType::I32) return std::numeric_limits<int32_t>::max();
      if (t == DType::I8) return 127;
      if (t == DType::U8) return 255;
      return 1;
  }
  return 0;
}

}  // namespace tessel::te
