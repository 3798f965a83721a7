// Tensor expression IR (te): the program every front end produces and every
// later stage consumes. Shapes are static (sizes are bound before a Program is
// built). A Program is a list of Stages; a Stage defines one tensor point-wise
// over its left-hand-side index variables, optionally reducing over further
// variables that appear only on the right-hand side.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessel/error.h"

namespace tessel::te {

enum class DType { F32, F64, F16, BF16, I32, I8, U8, Bool };

const char* dtypeName(DType t);  // "f32", "f64", "f16", "bf16", "i32", "i8", "u8", "bool"
std::optional<DType> dtypeFromName(const std::string& name);  // accepts the names above
int dtypeBytes(DType t);
bool isFloat(DType t);    // f32 f64 f16 bf16
bool isInteger(DType t);  // i32 i8 u8 (bool is neither)
// Usual arithmetic promotion: f64 > f32 > f16/bf16 (f16 with bf16 -> f32) > i32 > i8/u8 > bool.
DType promote(DType a, DType b);
// Rounds a value to what dtype `t` can hold (float rounding, integer truncation
// toward zero with two's-complement wrap, bool = value != 0). Shared by the
// interpreter and the tests so they agree with the generated C.
double roundToDType(double v, DType t);

enum class UnaryOp {
  Neg,
  Not,
  Abs,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Tanh,
  Sigmoid,
  Erf,
  Floor,
  Ceil,
  // Plain C math library functions (libmName gives the C name).
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Exp2,
  Expm1,
  Log2,
  Log10,
  Log1p,
  Cbrt,
  Erfc,
  Lgamma,
  Tgamma,
  Round,
  Trunc
};
enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Min,
  Max,
  Pow,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
  // Plain C math library functions of two arguments (libmName gives the C name).
  Atan2,
  Hypot,
  Copysign,
  Fdim,
  Remainder
};
const char* unaryOpName(UnaryOp op);    // "neg", "!", "abs", "exp", ...
const char* binaryOpName(BinaryOp op);  // "+", "-", "*", "/", "%", "min", "max", "pow", "<", ...
bool isComparison(BinaryOp op);         // Lt..Ne
// The C math library name (double version; the f32 one appends 'f') of the
// ops that are plain libm calls, nullptr for the others.
const char* libmName(UnaryOp op);
const char* libmName(BinaryOp op);
bool isLogical(BinaryOp op);  // And, Or

enum class ExprKind {
  Const,   // number with a dtype
  Var,     // index variable (i32 typed)
  Access,  // tensor read: name(indices...); rank-0 tensors have no indices
  Unary,
  Binary,
  Select,  // operands = {cond, then, else}; only the chosen branch is evaluated
  Cast,    // operands = {x}; node type is the target dtype
};

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  ExprKind kind;
  DType type;
  double value = 0;  // Const
  std::string name;  // Var: variable name; Access: tensor name
  UnaryOp unaryOp = UnaryOp::Neg;
  BinaryOp binaryOp = BinaryOp::Add;
  std::vector<Expr> operands;  // Access: indices; Unary/Binary/Select/Cast: operands
  SourceLoc loc;
};

// Constructors compute the result type (promotion; comparisons and logic give
// bool; math functions on integers give f32; integer Div/Mod are C-like).
Expr constant(double v, DType t, SourceLoc loc = {});
Expr var(const std::string& name, SourceLoc loc = {});
Expr access(const std::string& tensor, DType t, std::vector<Expr> indices, SourceLoc loc = {});
Expr unary(UnaryOp op, Expr x, SourceLoc loc = {});
Expr binary(BinaryOp op, Expr a, Expr b, SourceLoc loc = {});
// The type te::binary gives an operation on values of types a and b.
DType binaryResultType(BinaryOp op, DType a, DType b);
Expr select(Expr cond, Expr a, Expr b, SourceLoc loc = {});
Expr cast(DType t, Expr x, SourceLoc loc = {});

std::string toString(const Expr& e);  // fully parenthesized, for dumps and golden tests

// Affine form of an integer index expression: sum(coeff[var] * var) + constant.
struct AffineExpr {
  std::map<std::string, int64_t> coeffs;
  int64_t constant = 0;
};
// nullopt when `e` is not affine in the index variables (e.g. a tensor read,
// a product of two variables, a division by a non-constant).
std::optional<AffineExpr> toAffine(const Expr& e);

// Closed-open integer range [lo, hi).
struct Range {
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t extent() const { return hi - lo; }
};

// [min, max] of an integer index expression (constants, index variables,
// + - * and negation, / and % by a positive constant) for variables in `ranges`, provided evaluating it the
// way kernels do (int32, one operation at a time) never wraps; nullopt
// otherwise, or when the expression is anything else.
std::optional<std::pair<int64_t, int64_t>> int32Range(const Expr& e,
                                                      const std::map<std::string, Range>& ranges);

enum class Reduction { None, Sum, Prod, Max, Min };
const char* reductionName(Reduction r);  // "=", "+=", "*=", "max=", "min="
// Identity of the reduction for dtype t (0, 1, lowest, highest).
double reductionIdentity(Reduction r, DType t);

struct Stage {
  std::string output;                // tensor written
  std::vector<std::string> indices;  // left-hand-side index variables, one per output dim
  Reduction reduction = Reduction::None;
  bool init = false;  // '!' : start from the identity instead of the current value
  Expr rhs;
  std::vector<std::string> reductionVars;    // rhs-only variables, in order of first appearance
  std::map<std::string, Range> ranges;       // every index variable -> its range (after inference)
  std::map<std::string, Range> whereRanges;  // explicit `where v in lo:hi` constraints
  std::vector<Expr> existsReads;             // `where exists A(i)`: bound indices, never evaluated
  SourceLoc loc;
};

enum class TensorRole { Input, Output, Temporary };

struct TensorDecl {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // empty + !shapeKnown until range inference fixes it
  bool shapeKnown = false;
  TensorRole role = TensorRole::Input;
  SourceLoc loc;
  int64_t numElements() const;
};

struct Program {
  std::string name;
  std::vector<TensorDecl> tensors;       // inputs (signature order), outputs (return order), temporaries
  std::vector<Stage> stages;             // in source order
  std::map<std::string, int64_t> sizes;  // the size bindings the program was built with

  const TensorDecl* findTensor(const std::string& name) const;
  TensorDecl* findTensor(const std::string& name);
  const TensorDecl& tensor(const std::string& name) const;  // InternalError if absent
  std::vector<const TensorDecl*> inputs() const;
  std::vector<const TensorDecl*> outputs() const;
  std::vector<const TensorDecl*> temporaries() const;
};

// Readable dump of a program (tensors with shapes, stages with ranges).
std::string toString(const Program& p);

// Range inference (TC semantics): fills Stage::ranges and Stage::reductionVars
// and the shape of every output/temporary whose shape is not yet known, then
// validates the program (ranks, in-bounds unguarded reads, outputs read before
// written). Throws UserError naming the place on any problem.
void inferRangesAndCheck(Program& p);

}  // namespace tessel::te
