// Affine views of integer index expressions: the exact affine form used to
// build isl relations, and the int32 value range used to trust guards.
#include <algorithm>
#include <climits>

#include "tessel/te.h"

namespace tessel::te {

namespace {

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
      return checked({static_cast<int64_t>(e->value), static_cast<int64_t>(e->value)});
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
        case BinaryOp::Div:
        case BinaryOp::Mod: {
          // By a positive constant only: kernels divide truncating toward
          // zero (C), which is monotone and cannot wrap then.
          int64_t d = b->first;
          if (e->type != DType::I32 || b->first != b->second || d <= 0) return std::nullopt;
          if (e->binaryOp == BinaryOp::Div) return Interval{a->first / d, a->second / d};
          int64_t lo = a->first >= 0 ? 0 : std::max(a->first, -(d - 1));
          int64_t hi = a->second <= 0 ? 0 : std::min(a->second, d - 1);
          return Interval{lo, hi};
        }
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

}  // namespace tessel::te
