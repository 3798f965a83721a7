#include "lir/IndexRanges.h"

#include <algorithm>
#include <limits>

namespace tessel::lir {

namespace {

using te::BinaryOp;

bool isInteger(const Expr& e) { return e->index || e->type == te::DType::I32; }

std::optional<IndexRange> checked(int64_t lo, int64_t hi) {
  // 32-bit integer arithmetic wraps and index values fit in int32 (range
  // inference), so a range beyond 32 bits says nothing reliable. Operands
  // within 32 bits keep sums and products within 64.
  if (lo < std::numeric_limits<int32_t>::min() || hi > std::numeric_limits<int32_t>::max())
    return std::nullopt;
  return IndexRange{lo, hi};
}

}  // namespace

void bindRange(IndexRanges& ranges, const std::string& var, std::optional<IndexRange> range) {
  if (range)
    ranges[var] = *range;
  else
    ranges.erase(var);
}

std::optional<IndexRange> rangeOf(const Expr& e, const IndexRanges& ranges) {
  if (!isInteger(e)) return std::nullopt;
  auto operand = [&](size_t k) { return rangeOf(e->operands[k], ranges); };
  switch (e->kind) {
    case ExprKind::IntImm:
      return checked(e->intValue, e->intValue);
    case ExprKind::Var: {
      auto it = ranges.find(e->name);
      if (it == ranges.end()) return std::nullopt;
      return it->second;
    }
    case ExprKind::Cast: {
      if (!isInteger(e->operands[0])) return std::nullopt;
      return operand(0);
    }
    case ExprKind::Unary: {
      if (e->unaryOp != te::UnaryOp::Neg) return std::nullopt;
      auto a = operand(0);
      if (!a) return std::nullopt;
      return checked(-a->hi, -a->lo);
    }
    case ExprKind::FloorDiv: {
      auto a = operand(0), b = operand(1);
      if (!a || !b || b->lo != b->hi || b->lo <= 0) return std::nullopt;
      auto floorDiv = [&](int64_t x) { return x >= 0 ? x / b->lo : -((-x + b->lo - 1) / b->lo); };
      return checked(floorDiv(a->lo), floorDiv(a->hi));
    }
    case ExprKind::Binary: {
      auto a = operand(0), b = operand(1);
      if (!a || !b) return std::nullopt;
      int64_t alo = a->lo, ahi = a->hi, blo = b->lo, bhi = b->hi;
      switch (e->binaryOp) {
        case BinaryOp::Add:
          return checked(alo + blo, ahi + bhi);
        case BinaryOp::Sub:
          return checked(alo - bhi, ahi - blo);
        case BinaryOp::Mul: {
          int64_t p[] = {alo * blo, alo * bhi, ahi * blo, ahi * bhi};
          return checked(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
        }
        case BinaryOp::Min:
          return checked(std::min(alo, blo), std::min(ahi, bhi));
        case BinaryOp::Max:
          return checked(std::max(alo, blo), std::max(ahi, bhi));
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

std::optional<IndexRange> loopRange(const StmtNode& loop, const IndexRanges& ranges) {
  // Any positive step keeps the values between the first and the bound.
  if (loop.kind != StmtKind::For || !loop.step || loop.step->kind != ExprKind::IntImm ||
      loop.step->intValue < 1)
    return std::nullopt;
  const Expr& c = loop.cond;
  if (c->kind != ExprKind::Binary || (c->binaryOp != BinaryOp::Le && c->binaryOp != BinaryOp::Lt) ||
      c->operands[0]->kind != ExprKind::Var || c->operands[0]->name != loop.name)
    return std::nullopt;
  auto first = rangeOf(loop.init, ranges), bound = rangeOf(c->operands[1], ranges);
  if (!first || !bound) return std::nullopt;
  int64_t last = c->binaryOp == BinaryOp::Lt ? bound->hi - 1 : bound->hi;
  if (last < first->lo) return std::nullopt;  // (runs no iteration: nothing to say)
  return IndexRange{first->lo, last};
}

std::optional<bool> comparisonOutcome(const Expr& c, const IndexRanges& ranges) {
  if (c->kind != ExprKind::Binary || !te::isComparison(c->binaryOp)) return std::nullopt;
  auto a = rangeOf(c->operands[0], ranges), b = rangeOf(c->operands[1], ranges);
  if (!a || !b) return std::nullopt;
  switch (c->binaryOp) {
    case BinaryOp::Lt:
      if (a->hi < b->lo) return true;
      if (a->lo >= b->hi) return false;
      return std::nullopt;
    case BinaryOp::Le:
      if (a->hi <= b->lo) return true;
      if (a->lo > b->hi) return false;
      return std::nullopt;
    case BinaryOp::Gt:
      if (a->lo > b->hi) return true;
      if (a->hi <= b->lo) return false;
      return std::nullopt;
    case BinaryOp::Ge:
      if (a->lo >= b->hi) return true;
      if (a->hi < b->lo) return false;
      return std::nullopt;
    case BinaryOp::Eq:
    case BinaryOp::Ne: {
      bool disjoint = a->hi < b->lo || b->hi < a->lo;
      bool same = a->lo == a->hi && b->lo == b->hi && a->lo == b->lo;
      if (!disjoint && !same) return std::nullopt;
      return (c->binaryOp == BinaryOp::Eq) == same;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace tessel::lir
