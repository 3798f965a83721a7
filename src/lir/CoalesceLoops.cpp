#include "lir/CoalesceLoops.h"

#include <optional>
#include <set>

#include "lir/Traverse.h"
#include "lir/VectorLoop.h"

namespace tessel::lir {

namespace {

using te::BinaryOp;

// A loop `for v = first; v <= last (or < last + 1); v += 1` with constant ends.
struct ConstantRange {
  int64_t first = 0, trips = 0;
};

std::optional<ConstantRange> constantRange(const StmtNode& loop) {
  std::optional<int64_t> trips = constantTripCount(loop);
  if (!trips || *trips <= 0 || loop.init->kind != ExprKind::IntImm) return std::nullopt;
  return ConstantRange{loop.init->intValue, *trips};
}

bool usesVar(const Expr& e, const std::string& a, const std::string& b) {
  return dependsOn(e, a) || dependsOn(e, b);
}

// One nest: `outer` around `inner`, their body's lets inlined into each store.
class Coalescer {
 public:
  Coalescer(const StmtNode& outer, const StmtNode& inner) : outer_(outer), inner_(inner) {}

  // The coalesced loop, or nullptr (with `why`) when the accesses do not allow it.
  Stmt run(std::string& why) {
    std::optional<ConstantRange> a = constantRange(outer_), b = constantRange(inner_);
    if (!a || !b) {
      why = "a loop's range is not constant";
      return nullptr;
    }
    a_ = *a;
    b_ = *b;
    std::vector<Stmt> stores;
    if (!storesOf(inner_.body[0], {}, stores, why)) return nullptr;
    // Iterations write distinct elements (unit stride), and each buffer they
    // write only at that element: any order of the iterations is the same.
    for (const auto* accesses : {&reads_, &written_})
      for (const auto& [buffer, index] : *accesses)
        for (const auto& [stored, at] : written_)
          if (buffer == stored && !sameExpr(index, at)) {
            why = "'" + buffer + "' is accessed at another element than the one written";
            return nullptr;
          }
    auto loop = std::make_shared<StmtNode>(inner_);
    loop->name = variable();
    loop->init = indexImm(0);
    loop->cond = indexBinary(BinaryOp::Lt, indexVar(loop->name), indexImm(a_.trips * b_.trips));
    loop->step = indexImm(1);
    loop->body = {block(std::move(stores))};
    return loop;
  }

  std::string variable() const { return outer_.name + "_" + inner_.name; }

 private:
  // The stores under `s` (blocks of lets and stores), lets inlined, indices
  // in the coalesced variable.
  bool storesOf(const Stmt& s, LetBindings lets, std::vector<Stmt>& out, std::string& why) {
    if (s->kind == StmtKind::Block) {
      for (const Stmt& c : s->body) {
        if (c->kind == StmtKind::Let)
          lets[c->name] = inlineLets(c->value, lets);
        else if (!storesOf(c, lets, out, why))
          return false;
      }
      return true;
    }
    if (s->kind != StmtKind::Store) {
      why = "the inner loop holds more than lets and stores";
      return false;
    }
    Expr index = inlineLets(s->index, lets), value = inlineLets(s->value, lets);
    std::optional<int64_t> step = strideIn(index, inner_.name);
    if (!step || *step != 1 || indirect(index) || !coalescible(index)) {
      why = "a store does not move by one element along the coalesced loop";
      return false;
    }
    written_.push_back({s->name, index});
    Expr rewritten = rewrite(value, why);
    if (!rewritten) return false;
    out.push_back(store(s->name, substituted(index), rewritten));
    return true;
  }

  // Whether `e` reads memory (an index computed from a load).
  static bool indirect(const Expr& e) {
    std::set<std::string> buffers;
    collectLoads(e, buffers);
    return !buffers.empty();
  }

  // Affine in both loops, moving along the outer one by the inner trip count
  // times its step along the inner one.
  bool coalescible(const Expr& index) const {
    std::optional<int64_t> alongOuter = strideIn(index, outer_.name),
                           alongInner = strideIn(index, inner_.name);
    return alongOuter && alongInner && *alongOuter == b_.trips * *alongInner;
  }

  // index(outer = first, inner = first + t): the same element, t running over both loops.
  Expr substituted(const Expr& index) const {
    LetBindings at{{outer_.name, indexImm(a_.first)},
                   {inner_.name, indexBinary(BinaryOp::Add, indexImm(b_.first), indexVar(variable()))}};
    return inlineLets(index, at);
  }

  // `value` with its loads' indices in the coalesced variable; the loop
  // variables may appear nowhere else. Every load is recorded, also those
  // that do not move (a written buffer's fixed element is a dependence).
  Expr rewrite(const Expr& value, std::string& why) {
    if (value->kind == ExprKind::Load) {
      const Expr& index = value->operands[0];
      if (indirect(index) || !coalescible(index)) {
        why = "a read of '" + value->name + "' is not contiguous over both loops";
        return nullptr;
      }
      reads_.push_back({value->name, index});
      return load(value->name, value->type, substituted(index));
    }
    if (!usesVar(value, outer_.name, inner_.name) && !indirect(value)) return value;
    if (value->operands.empty()) {
      why = "a value uses a loop variable";
      return nullptr;
    }
    auto copy = std::make_shared<ExprNode>(*value);
    for (auto& o : copy->operands) {
      o = rewrite(o, why);
      if (!o) return nullptr;
    }
    return copy;
  }

  const StmtNode& outer_;
  const StmtNode& inner_;
  ConstantRange a_, b_;
  std::vector<std::pair<std::string, Expr>> written_, reads_;
};

class LoopCoalescer final : public StmtMutator {
 public:
  LoopCoalescer(int lanes, Remarks& remarks) : lanes_(lanes), remarks_(remarks) {}

  Stmt mutateFor(const Stmt& s) override {
    if (Stmt merged = coalesced(*s)) return merged;
    return forWithMutatedBody(s);
  }

 private:
  // The outer loop sequential and unmarked (a parallel loop, or one the
  // register tiler unrolls, keeps its role), the inner one the schedule's
  // vector loop with independent iterations, of a trip count that leaves a
  // partial vector.
  Stmt coalesced(const StmtNode& outer) {
    if (outer.parallel || outer.unrollJam || outer.collapsible || outer.vector != VectorHint::None)
      return nullptr;
    const Stmt* only = &outer.body[0];
    if ((*only)->kind == StmtKind::Block && (*only)->body.size() == 1) only = &(*only)->body[0];
    const StmtNode& inner = **only;
    if (inner.kind != StmtKind::For || inner.vector != VectorHint::Independent) return nullptr;
    std::optional<int64_t> trips = constantTripCount(inner);
    if (!trips || *trips % lanes_ == 0 || *trips > 4 * lanes_) return nullptr;
    Coalescer c(outer, inner);
    std::string why;
    Stmt merged = c.run(why);
    const std::string loops = outer.name + " " + inner.name;
    if (!merged) {
      remarks_.missed(loops, "loops " + loops + ": not coalesced: " + why, {{"reason", why}});
      return nullptr;
    }
    const int64_t iterations = *constantTripCount(*merged);
    remarks_.applied(loops,
                     "loops " + loops + ": coalesced into vector loop " + c.variable() + " of " +
                         std::to_string(iterations) + " iterations (contiguous accesses)",
                     {{"loop", c.variable()}, {"iterations", iterations}});
    return merged;
  }

  int lanes_;
  Remarks& remarks_;
};

}  // namespace

Kernel coalesceLoops(const Kernel& kernel, int lanes, Remarks& remarks) {
  if (lanes == 0) return kernel;
  Kernel out = kernel;
  out.body = LoopCoalescer(lanes, remarks).mutate(kernel.body);
  return out;
}

}  // namespace tessel::lir
