#include "bench/Metrics.h"

#include <algorithm>

namespace tessel::bench {

namespace {

bool readsData(const te::Expr& e) {
  if (e->kind == te::ExprKind::Access) return true;
  for (const auto& o : e->operands)
    if (readsData(o)) return true;
  return false;
}

// Operations of one evaluation of `e`. Sub-expressions without reads are
// constants or index arithmetic, folded or computed once per loop.
int64_t operations(const te::Expr& e) {
  switch (e->kind) {
    case te::ExprKind::Const:
    case te::ExprKind::Var:
    case te::ExprKind::Access:
      return 0;
    case te::ExprKind::Cast:
      return operations(e->operands[0]);
    case te::ExprKind::Select:
      return operations(e->operands[0]) + std::max(operations(e->operands[1]), operations(e->operands[2]));
    case te::ExprKind::Unary: {
      int64_t own = readsData(e) && e->unaryOp != te::UnaryOp::Not ? 1 : 0;
      return own + operations(e->operands[0]);
    }
    case te::ExprKind::Binary: {
      int64_t own = readsData(e) && !te::isLogical(e->binaryOp) ? 1 : 0;
      return own + operations(e->operands[0]) + operations(e->operands[1]);
    }
  }
  return 0;
}

int64_t domainSize(const te::Stage& s) {
  int64_t n = 1;
  for (const auto& [var, range] : s.ranges) n *= std::max<int64_t>(range.extent(), 0);
  return n;
}

}  // namespace

int64_t countFlops(const te::Program& p) {
  int64_t total = 0;
  for (const auto& s : p.stages) {
    int64_t perInstance = operations(s.rhs) + (s.reduction == te::Reduction::None ? 0 : 1);
    total += perInstance * domainSize(s);
  }
  return total;
}

int64_t compulsoryBytes(const te::Program& p) {
  int64_t bytes = 0;
  for (const auto& t : p.tensors)
    if (t.role != te::TensorRole::Temporary) bytes += t.numElements() * te::dtypeBytes(t.dtype);
  return bytes;
}

int64_t domainPoints(const te::Program& p) {
  int64_t total = 0;
  for (const auto& s : p.stages) total += domainSize(s);
  return total;
}

const char* boundName(Bound b) { return b == Bound::Compute ? "compute" : "memory"; }

Roofline classify(int64_t flops, int64_t bytes, double peakFlops, double bandwidthBytesPerS) {
  Roofline r;
  r.intensity = bytes > 0 ? static_cast<double>(flops) / static_cast<double>(bytes) : 0;
  r.balanceAssumed = !(peakFlops > 0 && bandwidthBytesPerS > 0);
  r.balance = r.balanceAssumed ? kAssumedBalance : peakFlops / bandwidthBytesPerS;
  r.bound = r.intensity >= r.balance ? Bound::Compute : Bound::Memory;
  return r;
}

double reachableWith(int threads, int cores, double perCore, double wholeMachine) {
  if (perCore <= 0) return wholeMachine;
  double scaled = perCore * std::min(threads, std::max(cores, 1));
  return wholeMachine > 0 ? std::min(scaled, wholeMachine) : scaled;
}

}  // namespace tessel::bench
