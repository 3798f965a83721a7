// What the vectorizer and the vector code generator both need to know about
// the body of a loop marked vectorizable: whether each index moves with the
// loop variable by one element per iteration (unit stride), by two (reads
// only: deinterleaving loads), by a quotient of the loop variable (reads
// only: upsampling) or not at all (uniform), whether a value
// varies across iterations, and which stores are
// reductions into one element. A loop is vectorized only when every
// statement of its body maps onto SIMD operations; otherwise it stays scalar.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "lir/Lir.h"

namespace tessel::lir {

using LetBindings = std::map<std::string, Expr>;  // let name -> value with earlier lets inlined
using BufferTypes = std::map<std::string, te::DType>;

// Values vector lanes hold as f32: f32 itself, and f16 and bf16, which the
// scalar code also computes in f32 (converted as loaded, rounded as stored or cast).
bool isLaneFloat(te::DType t);
// The buffers `e` loads from.
void collectLoads(const Expr& e, std::set<std::string>& buffers);
// Structural equality.
bool sameExpr(const Expr& a, const Expr& b);
// `e` with the let-bound names replaced by their values.
Expr inlineLets(const Expr& e, const LetBindings& lets);
// How far index `e` (lets inlined) moves per iteration of `var`: 0 uniform,
// 1 unit stride, another constant, or nullopt when it is not affine in `var`.
std::optional<int64_t> strideIn(const Expr& e, const std::string& var);
bool dependsOn(const Expr& e, const std::string& var);
// A read index (lets inlined) whose only part that moves with `var` is an
// added truncating division `n / d` of an integer n of unit stride by a power
// of two d from 2 to 16 (upsampling's in(w / 2)): the lanes' quotients are
// consecutive or repeated, within 16 consecutive elements.
struct QuotientIndex {
  Expr numerator;
  int shift = 0;  // d = 2^shift
};
std::optional<QuotientIndex> quotientIndex(const Expr& index, const std::string& var);
// An integer lane value: an index or int32 expression (lets inlined) that is
// uniform in `var` or moves by exactly one per iteration (e.g. int32(j),
// i + j + 1). Vector code holds it as int32 lanes: the first lane's value
// plus 0, 1, 2, ... Index values fit in int32 (range inference checks it).
bool isIntegerLaneValue(const Expr& e, const std::string& var);

// A store `buf[i] = buf[i] op rest` whose index does not move with the loop:
// the lanes accumulate `rest` separately and are combined after the loop.
struct ReductionStore {
  te::BinaryOp op = te::BinaryOp::Add;  // Add, Mul, Min or Max
  Expr rest;                            // lets inlined
};
std::optional<ReductionStore> asReduction(const StmtNode& store, const LetBindings& lets);

// Iterations of `loop` when it runs a constant number of times with step 1.
std::optional<int64_t> constantTripCount(const StmtNode& loop);
// The most iterations `loop` (step 1) runs: its constant trip count, or
// where its bound is a minimum (a partial tile's `min(N - 1, c + 63)`), the
// least constant count one of the minimum's operands gives; nullopt when
// neither is known (or it is not positive).
std::optional<int64_t> maxTripCount(const StmtNode& loop);

// The value the lanes of a reduction start from.
double reductionIdentity(te::BinaryOp op);

// "" when `loop` steps by 1 up to a bound that stays the same over it
// (var <= uniform or var < uniform), otherwise why not.
std::string whyNotStepOneUpTo(const StmtNode& loop);

// "" when `loop` (a For with a vector hint) can be emitted as SIMD code,
// otherwise why not (for --explain). With `blockVar` (the variable of an
// enclosing loop run in blocks of the lane count, StmtNode::transposeLanes),
// a read that does not move with `loop` by 0, 1 or 2 elements or a quotient
// may move by a constant stride when it is contiguous along `blockVar`: it is
// then a transposed read (isTransposedRead), outside any condition, of a
// buffer the loop does not write.
std::string whyNotVectorizable(const StmtNode& loop, const BufferTypes& buffers,
                               const std::string& blockVar = "");
// Whether the read `index` (lets inlined) of a loop over `var` in blocks of
// `blockVar` is loaded through a register transpose: neither unit stride,
// stride 2 nor a quotient along `var`, a constant stride along it and unit
// stride along `blockVar`.
bool isTransposedRead(const Expr& index, const std::string& var, const std::string& blockVar);

}  // namespace tessel::lir
