// Internals of the reference interpreter's stage evaluation: the compiled
// form of a stage (typed nodes, folded affine index arithmetic, guards,
// flattened loads) shared by the builder (StagePlanBuild.cpp) and the
// evaluator (StagePlanEval.cpp). Not part of any interface outside runtime/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/InterpreterStage.h"

namespace tessel::runtime::interp {

using te::DType;
using te::Expr;
using te::ExprKind;
inline constexpr const char* kPass = "interpreter";

inline int64_t wrapped(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

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

}  // namespace tessel::runtime::interp
