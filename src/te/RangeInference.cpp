// Range inference with TC's rules (docs "Range Inference"): `where` ranges are
// given; LHS indices of a tensor of known shape span that shape; then, round
// by round, every unguarded read index that is affine in exactly one
// still-unknown variable bounds that variable so the read stays inside the
// tensor for all values of the known ones (ranges from one round intersect,
// and are used from the next round on). Tessel additions: reads inside a `?:`
// branch ("guarded", e.g. padding) and non-affine indices (indirect reads
// such as LUT(I(b, n), r)) are not bounds-checked here (their guard or data
// decides; the kernel checks what cannot be proven), and guarded reads bound
// only variables nothing else bounds; every other read is checked to stay in
// bounds over the whole domain.
//
// Reading the tensor a stage writes: only at the very point it writes, only
// when an earlier stage defined it, and only in a stage without reduction
// variables (`O(i) = O(i) + B(i)`): anything else depends on evaluation
// order, which TC statements must not. A reduction without `!` accumulates
// into existing values: those of an earlier stage, or, for a tensor nothing
// wrote yet, the caller's output buffer (TC semantics) or zeros (temporaries).
#include "te/RangeInference.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

namespace tessel::te {

namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

std::string text(Range r) { return std::to_string(r.lo) + ":" + std::to_string(r.hi); }

[[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) { throw UserError(loc, msg); }

// Where a read is evaluated: always; only when the left operand of an
// enclosing `&&`/`||` allows it (it still bounds indices, as in TC); or only
// in one branch of a `?:` (padding: it bounds indices nothing else bounds).
// Reads that are not always evaluated are bounds-checked under their
// condition by extraction (poly/GuardedReads.h), not here.
enum class Evaluated { Always, Conditionally, InBranch };

// One index position of one read in a stage's right-hand side.
struct Use {
  const ExprNode* access;
  size_t dim;
  Evaluated when;
  std::optional<AffineExpr> affine;  // nullopt: non-affine (indirect, product of indices...)
  bool guarded() const { return when == Evaluated::InBranch; }
};

struct VarInfo {
  SourceLoc loc;  // first appearance in the right-hand side
  bool inUnguardedAffine = false, inGuarded = false, inNonAffine = false;
};

class StageInference {
 public:
  StageInference(Program& p, Stage& s, const std::set<std::string>& written)
      : p_(p), s_(s), written_(written) {}

  void run() {
    checkOutput();
    collect(s_.rhs, Evaluated::Always);
    for (const auto& r : s_.existsReads) collect(r, Evaluated::Always);
    classifyVariables();
    checkSelfReads();
    checkWhere();
    infer();
    fixOutputShape();
    checkReadBounds();
  }

 private:
  // ---- structure ----
  void checkOutput() {
    out_ = p_.findTensor(s_.output);
    if (!out_) fail(s_.loc, "unknown tensor '" + s_.output + "'");
    if (out_->role == TensorRole::Input)
      fail(s_.loc, "cannot write '" + s_.output + "': it is an input, and inputs are immutable");
    for (size_t i = 0; i < s_.indices.size(); ++i) {
      TESSEL_CHECK(!s_.indices[i].empty(), "range-inference", "empty index name");
      for (size_t j = 0; j < i; ++j)
        if (s_.indices[i] == s_.indices[j])
          fail(s_.loc,
               "index '" + s_.indices[i] + "' appears twice on the left-hand side of '" + s_.output + "'");
    }
    if (out_->shapeKnown && out_->shape.size() != s_.indices.size())
      fail(s_.loc, "'" + s_.output + "' has " + std::to_string(out_->shape.size()) +
                       " dimensions but this statement writes it with " + std::to_string(s_.indices.size()));
  }

  void collect(const Expr& e, Evaluated when) {
    TESSEL_CHECK(e != nullptr, "range-inference", "null expression in stage " + s_.output);
    switch (e->kind) {
      case ExprKind::Var: {
        auto [it, fresh] = vars_.try_emplace(e->name);
        if (fresh) {
          it->second.loc = e->loc.known() ? e->loc : s_.loc;
          order_.push_back(e->name);
        }
        return;
      }
      case ExprKind::Access:
        collectAccess(e, when);
        return;
      case ExprKind::Select:
        collect(e->operands[0], when);
        collect(e->operands[1], Evaluated::InBranch);
        collect(e->operands[2], Evaluated::InBranch);
        return;
      case ExprKind::Binary:
        // `c && A(i - 1) > 0`: like C, the right operand is evaluated only
        // when the left one allows it.
        if (isLogical(e->binaryOp)) {
          collect(e->operands[0], when);
          collect(e->operands[1], when == Evaluated::Always ? Evaluated::Conditionally : when);
          return;
        }
        for (const auto& o : e->operands) collect(o, when);
        return;
      default:
        for (const auto& o : e->operands) collect(o, when);
        return;
    }
  }

  void collectAccess(const Expr& e, Evaluated when) {
    const SourceLoc& loc = e->loc.known() ? e->loc : s_.loc;
    const TensorDecl* t = p_.findTensor(e->name);
    if (!t) fail(loc, "unknown tensor '" + e->name + "'");
    if (t->role != TensorRole::Input && !written_.count(e->name)) {
      if (e->name == s_.output)
        fail(loc, "this statement reads '" + e->name + "', which no earlier statement wrote");
      fail(loc, "'" + e->name + "' is read before any statement writes it");
    }
    TESSEL_CHECK(t->shapeKnown, "range-inference", "written tensor without a shape: " + e->name);
    if (t->shape.size() != e->operands.size())
      fail(loc, "'" + e->name + "' has " + std::to_string(t->shape.size()) + " dimensions but is read with " +
                    std::to_string(e->operands.size()) + " indices");
    if (e->name == s_.output) selfReads_.push_back(e.get());
    for (size_t d = 0; d < e->operands.size(); ++d) {
      const Expr& idx = e->operands[d];
      if (!isInteger(idx->type))
        fail(idx->loc.known() ? idx->loc : loc,
             "index " + std::to_string(d) + " of '" + e->name + "' has type " + dtypeName(idx->type) +
                 "; tensor indices must be integers (cast with int32(...))");
      Use u{e.get(), d, when, toAffine(idx)};
      uses_.push_back(u);
      collect(idx, when);
    }
  }

  void classifyVariables() {
    std::set<std::string> lhs(s_.indices.begin(), s_.indices.end());
    for (const auto& v : s_.reductionVars)
      if (lhs.count(v)) fail(s_.loc, "reduction index '" + v + "' also appears on the left-hand side");
    s_.reductionVars.clear();
    for (const auto& v : order_)
      if (!lhs.count(v)) s_.reductionVars.push_back(v);
    for (const auto& u : uses_) {
      if (u.affine) {
        for (const auto& [v, c] : u.affine->coeffs)
          if (c != 0 && vars_.count(v))
            (u.guarded() ? vars_[v].inGuarded : vars_[v].inUnguardedAffine) = true;
      } else {
        markNonAffine(u.access->operands[u.dim]);
      }
    }
    if (!s_.reductionVars.empty() && s_.reduction == Reduction::None)
      fail(vars_[s_.reductionVars.front()].loc,
           "index '" + s_.reductionVars.front() +
               "' appears only on the right-hand side, so it is reduced, but '" + s_.output +
               "' is assigned with '='; use a reduction such as '+=!'");
    // TC: a reduction with `!` and nothing to reduce is a plain assignment.
    if (s_.reductionVars.empty() && s_.init) {
      s_.reduction = Reduction::None;
      s_.init = false;
    }
  }

  void markNonAffine(const Expr& e) {
    if (e->kind == ExprKind::Var && vars_.count(e->name)) vars_[e->name].inNonAffine = true;
    for (const auto& o : e->operands) markNonAffine(o);
  }

  void checkSelfReads() {
    for (const ExprNode* a : selfReads_) {
      const SourceLoc& loc = a->loc.known() ? a->loc : s_.loc;
      if (!s_.reductionVars.empty())
        fail(loc, "a reduction into '" + s_.output + "' cannot also read '" + s_.output + "'");
      bool samePoint = a->operands.size() == s_.indices.size();
      for (size_t d = 0; samePoint && d < a->operands.size(); ++d)
        samePoint = a->operands[d]->kind == ExprKind::Var && a->operands[d]->name == s_.indices[d];
      if (!samePoint)
        fail(loc, "'" + s_.output + "' is read at a point other than the one being written; " +
                      "TC statements must not depend on evaluation order");
    }
  }

  void checkWhere() {
    for (const auto& [v, r] : s_.whereRanges) {
      bool used = vars_.count(v) || std::find(s_.indices.begin(), s_.indices.end(), v) != s_.indices.end();
      if (!used) fail(s_.loc, "the where clause constrains '" + v + "', which this statement does not use");
      if (r.hi <= r.lo) fail(locOf(v), "the range " + text(r) + " of index '" + v + "' is empty");
    }
  }

  // ---- inference ----
  // [min, max] of `a` over the known ranges, leaving out variable `skip`.
  // Fails at `loc` when the values leave +-2^62, so callers may add sizes freely.
  std::pair<int64_t, int64_t> bounds(const AffineExpr& a, const std::string& skip,
                                     const SourceLoc& loc) const {
    constexpr int64_t kLimit = int64_t{1} << 62;
    int64_t lo = a.constant, hi = a.constant, x = 0, y = 0;
    bool overflow = false;
    for (const auto& [v, c] : a.coeffs) {
      if (v == skip || c == 0) continue;
      const Range& r = known_.at(v);
      // One statement each: every product and sum must be computed (no short circuit).
      overflow |= __builtin_mul_overflow(c, r.lo, &x);
      overflow |= __builtin_mul_overflow(c, r.hi - 1, &y);
      overflow |= __builtin_add_overflow(lo, std::min(x, y), &lo);
      overflow |= __builtin_add_overflow(hi, std::max(x, y), &hi);
    }
    if (overflow || lo < -kLimit || hi > kLimit) fail(loc, "index arithmetic overflows 64-bit integers");
    return {lo, hi};
  }

  std::string accessText(const ExprNode* a) const {
    std::vector<Expr> idx(a->operands.begin(), a->operands.end());
    return toString(access(a->name, a->type, idx));
  }

  void infer() {
    known_ = s_.whereRanges;
    for (size_t d = 0; d < s_.indices.size(); ++d)
      if (out_->shapeKnown && !known_.count(s_.indices[d])) known_[s_.indices[d]] = {0, out_->shape[d]};
    // Guarded reads (inside a `?:` branch) only bound variables that nothing
    // else bounds (TC's concat: `i == 0 ? A(m, n) : B(m, n)`); their guard may
    // exclude out-of-range points, so they never narrow a range found otherwise.
    for (bool guarded : {false, true}) inferRounds(guarded);
    for (const auto& v : allVars())
      if (!known_.count(v)) fail(locOf(v), "cannot infer the range of index '" + v + "': " + whyUnknown(v));
    // Index variables are int32 values in kernels and in the interpreter.
    for (const auto& [v, r] : known_)
      if (r.lo < INT32_MIN || r.hi - 1 > INT32_MAX)
        fail(locOf(v), "index '" + v + "' ranges over " + text(r) + ", beyond 32-bit integers");
    s_.ranges = known_;
  }

  void inferRounds(bool useGuarded) {
    for (;;) {
      std::map<std::string, std::pair<Range, const ExprNode*>> found;
      for (const auto& u : uses_) {
        if (u.guarded() != useGuarded || !u.affine) continue;
        std::string x;
        int unknown = 0;
        for (const auto& [v, c] : u.affine->coeffs)
          if (c != 0 && !known_.count(v)) ++unknown, x = v;
        if (unknown != 1) continue;
        Range r = solve(u, x);
        auto it = found.find(x);
        if (it == found.end()) {
          found.emplace(x, std::make_pair(r, u.access));
          continue;
        }
        Range both{std::max(it->second.first.lo, r.lo), std::min(it->second.first.hi, r.hi)};
        if (both.hi <= both.lo)
          fail(u.access->loc, "no value of index '" + x + "' keeps every read in bounds: " +
                                  accessText(u.access) + " allows " + text(r) + " but " +
                                  accessText(it->second.second) + " allows " + text(it->second.first));
        it->second = {both, r.hi - r.lo < it->second.first.extent() ? u.access : it->second.second};
      }
      if (found.empty()) break;
      for (const auto& [v, f] : found) known_[v] = f.first;
    }
  }

  // Largest range of `x` keeping use `u` inside its tensor for every value of the known variables.
  Range solve(const Use& u, const std::string& x) const {
    int64_t size = p_.tensor(u.access->name).shape[u.dim];
    int64_t c = u.affine->coeffs.at(x);
    auto [rmin, rmax] = bounds(*u.affine, x, u.access->loc);
    int64_t lower = -rmin, upper = size - 1 - rmax;  // lower <= c * x <= upper
    Range r = c > 0 ? Range{ceilDiv(lower, c), floorDiv(upper, c) + 1}
                    : Range{ceilDiv(upper, c), floorDiv(lower, c) + 1};
    if (r.hi <= r.lo)
      fail(u.access->loc, "no value of index '" + x + "' keeps " + accessText(u.access) +
                              " in bounds (dimension " + std::to_string(u.dim) + " of '" + u.access->name +
                              "' has size " + std::to_string(size) + ")");
    return r;
  }

  std::vector<std::string> allVars() const {
    std::vector<std::string> all = s_.indices;
    all.insert(all.end(), s_.reductionVars.begin(), s_.reductionVars.end());
    return all;
  }

  std::string whyUnknown(const std::string& v) const {
    std::string hint = "; give it with 'where " + v + " in lo:hi'";
    auto it = vars_.find(v);
    if (it == vars_.end())
      return "it appears only on the left-hand side and '" + s_.output + "' has no known shape" + hint;
    const VarInfo& i = it->second;
    if (i.inUnguardedAffine) return "every read it indexes also uses another index of unknown range" + hint;
    if (i.inNonAffine) return "it is only used in non-affine index expressions" + hint;
    return "it does not index any tensor" + hint;
  }

  SourceLoc locOf(const std::string& v) const {
    auto it = vars_.find(v);
    return it != vars_.end() ? it->second.loc : s_.loc;
  }

  // ---- results ----
  void fixOutputShape() {
    if (!out_->shapeKnown) {
      out_->shape.clear();
      for (const auto& v : s_.indices) {
        const Range& r = s_.ranges.at(v);
        if (r.lo < 0)
          fail(locOf(v), "index '" + v + "' ranges over " + text(r) + ", so '" + s_.output +
                             "' would be written below index 0");
        // An inferred range must start at 0; a `where` range may start above
        // it (the user asked for the elements below it to stay unwritten).
        if (r.lo > 0 && !s_.whereRanges.count(v))
          fail(locOf(v), "index '" + v + "' is inferred to range over " + text(r) + ", so '" + s_.output +
                             "' would have unwritten elements below " + std::to_string(r.lo) +
                             "; give the range with 'where " + v + " in " + text(r) + "' to accept that");
        out_->shape.push_back(r.hi);
      }
      out_->shapeKnown = true;
      return;
    }
    for (size_t d = 0; d < s_.indices.size(); ++d) {
      const Range& r = s_.ranges.at(s_.indices[d]);
      if (r.lo < 0 || r.hi > out_->shape[d])
        fail(locOf(s_.indices[d]), "'" + s_.output + "' is written out of bounds: index '" + s_.indices[d] +
                                       "' ranges over " + text(r) + " but dimension " + std::to_string(d) +
                                       " has size " + std::to_string(out_->shape[d]));
    }
  }

  void checkReadBounds() const {
    for (const auto& u : uses_) {
      if (u.when != Evaluated::Always || !u.affine) continue;
      int64_t size = p_.tensor(u.access->name).shape[u.dim];
      auto [lo, hi] = bounds(*u.affine, "", u.access->loc);
      if (lo < 0 || hi >= size)
        fail(u.access->loc, "read " + accessText(u.access) + " is out of bounds: index " +
                                std::to_string(u.dim) + " takes values " + std::to_string(lo) + ".." +
                                std::to_string(hi) + " but '" + u.access->name + "' has size " +
                                std::to_string(size) + " there");
    }
  }

  Program& p_;
  Stage& s_;
  const std::set<std::string>& written_;
  TensorDecl* out_ = nullptr;
  std::map<std::string, VarInfo> vars_;
  std::vector<std::string> order_;  // right-hand-side variables, first appearance first
  std::vector<Use> uses_;
  std::vector<const ExprNode*> selfReads_;
  std::map<std::string, Range> known_;
};

}  // namespace

RangeInference::RangeInference(Program& p) : p_(p) {}

void RangeInference::inferStage(size_t i) {
  TESSEL_CHECK(i == next_ && i < p_.stages.size(), "range-inference", "stages must be inferred in order");
  StageInference(p_, p_.stages[i], written_).run();
  written_.insert(p_.stages[i].output);
  ++next_;
}

void RangeInference::finish() {
  TESSEL_CHECK(next_ == p_.stages.size(), "range-inference", "finish() before every stage was inferred");
  // Larger tensors cannot be allocated anyway; refusing them here also keeps
  // every flattened index and byte count far from 64-bit overflow.
  constexpr int64_t kMaxElements = int64_t{1} << 34;
  for (const auto& t : p_.tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape)
      if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements) n = kMaxElements + 1;
    if (n > kMaxElements)
      fail(t.loc, "tensor '" + t.name + "' has more than 2^34 elements; Tessel cannot allocate it");
  }
  for (const auto& t : p_.tensors)
    if (t.role != TensorRole::Input && !written_.count(t.name))
      fail(t.loc, std::string(t.role == TensorRole::Output ? "output" : "temporary") + " '" + t.name +
                      "' is never written");
}

void inferRangesAndCheck(Program& p) {
  RangeInference r(p);
  for (size_t i = 0; i < p.stages.size(); ++i) r.inferStage(i);
  r.finish();
}

}  // namespace tessel::te
