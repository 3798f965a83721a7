// C++ builder for te::Programs, for users who do not write TC:
//
//   using namespace tessel::te;
//   builder::ProgramBuilder b("matmul");
//   auto A = b.input("A", DType::F32, {64, 32});
//   auto B = b.input("B", DType::F32, {32, 16});
//   auto C = b.output("C", DType::F32);  // shape inferred
//   auto m = b.index("m"), n = b.index("n"), k = b.index("k");
//   b.define(C(m, n), Reduction::Sum, /*init=*/true, A(m, k) * B(k, n));
//   Program p = b.build();               // runs te::inferRangesAndCheck
//
// The expression types live in their own namespace so that their math
// functions (exp, min, ...) are found by argument-dependent lookup only and
// never capture calls on plain numbers elsewhere in tessel::te.
#pragma once

#include <cstdint>
#include <map>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#include "tessel/te.h"

namespace tessel::te::builder {

// Where define() was called, for located errors. std::source_location when the
// standard library has it; clang 14 with libstdc++ does not (it needs
// __builtin_source_location), so the fallback reads the same builtins
// libstdc++'s <experimental/source_location> uses.
#if defined(__cpp_lib_source_location)
using CallSite = std::source_location;
#else
struct CallSite {
  static constexpr CallSite current(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE(),
                                    unsigned column = __builtin_COLUMN()) noexcept {
    CallSite c;
    c.file_ = file;
    c.line_ = line;
    c.column_ = column;
    return c;
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr unsigned line() const noexcept { return line_; }
  constexpr unsigned column() const noexcept { return column_; }

 private:
  const char* file_ = "";
  unsigned line_ = 0;
  unsigned column_ = 0;
};
#endif

class Value;
template <typename T>
concept Arithmetic = std::is_arithmetic_v<T>;
// A constant of any dtype; integer values must fit the dtype (UserError).
Value literal(double v, DType dtype);

// An expression under construction: a value wrapper over te::Expr that gives
// it operators. C++ integer literals become i32 constants and floating-point
// literals f32 constants (as in TC; use literal() for other dtypes); bool
// literals become bool constants.
class Value {
 public:
  Value(Expr e);  // NOLINT(google-explicit-constructor): implicit by design
  template <Arithmetic T>
  Value(T v)  // NOLINT(google-explicit-constructor)
      : Value(literal(static_cast<double>(v), std::is_same_v<T, bool>       ? DType::Bool
                                              : std::is_floating_point_v<T> ? DType::F32
                                                                            : DType::I32)) {}

  const Expr& expr() const { return e_; }
  DType type() const { return e_->type; }

 private:
  Expr e_;
};

// An index variable (a loop of the stage that uses it). Made by ProgramBuilder::index.
class IndexVar : public Value {
 public:
  const std::string& name() const { return name_; }

 private:
  friend class ProgramBuilder;
  explicit IndexVar(const std::string& name);
  std::string name_;
};

// A handle to a declared tensor; calling it with indices makes a read (on the
// right-hand side) or the defined point (as the left-hand side of define).
class Tensor {
 public:
  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }

  template <typename... I>
  Value operator()(const I&... indices) const {
    return at({Value(indices)...});
  }
  Value at(const std::vector<Value>& indices) const;

 private:
  friend class ProgramBuilder;
  Tensor(std::string name, DType dtype, int rank) : name_(std::move(name)), dtype_(dtype), rank_(rank) {}
  std::string name_;
  DType dtype_;
  int rank_;  // -1 while the shape is left to inference
};

class ProgramBuilder;

// The stage just defined, to add `where v in lo:hi` constraints to.
class StageRef {
 public:
  StageRef& where(const IndexVar& v, int64_t lo, int64_t hi);

 private:
  friend class ProgramBuilder;
  StageRef(ProgramBuilder* b, size_t stage) : builder_(b), stage_(stage) {}
  ProgramBuilder* builder_;
  size_t stage_;
};

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string name);
  // StageRef points back at its builder, so builders stay where they are.
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

  Tensor input(const std::string& name, DType dtype, std::vector<int64_t> shape);
  Tensor output(const std::string& name, DType dtype);  // shape inferred from its definitions
  Tensor output(const std::string& name, DType dtype, std::vector<int64_t> shape);
  // A tensor written and read inside the program but not returned.
  Tensor temporary(const std::string& name, DType dtype);
  Tensor temporary(const std::string& name, DType dtype, std::vector<int64_t> shape);
  IndexVar index(const std::string& name);
  // Records a size binding (Program::sizes), for dumps and tools.
  ProgramBuilder& size(const std::string& name, int64_t value);

  // lhs = rhs at every point of lhs (a tensor indexed by index variables).
  StageRef define(const Value& lhs, const Value& rhs, CallSite loc = CallSite::current());
  // lhs op= rhs over the rhs-only variables; init ('!') starts from the identity.
  StageRef define(const Value& lhs, Reduction reduction, bool init, const Value& rhs,
                  CallSite loc = CallSite::current());

  // The program with ranges inferred and checked (te::inferRangesAndCheck).
  Program build() const;
  // The program as defined, before range inference (Stage::ranges empty).
  const Program& unchecked() const { return program_; }

 private:
  friend class StageRef;
  Tensor declare(const std::string& name, DType dtype, TensorRole role, const std::vector<int64_t>* shape);
  int rankOf(const std::string& tensor) const;  // -1 if not yet known
  void checkReads(const Expr& e, const SourceLoc& loc) const;

  Program program_;
  std::map<std::string, int> definedRanks_;  // ranks fixed by a definition (shape left to inference)
};

std::string toString(const Value& v);  // as te::toString

Value operator+(const Value& a, const Value& b);
Value operator-(const Value& a, const Value& b);
Value operator*(const Value& a, const Value& b);
Value operator/(const Value& a, const Value& b);  // integer division by 0 gives 0
Value operator%(const Value& a, const Value& b);
Value operator<(const Value& a, const Value& b);
Value operator<=(const Value& a, const Value& b);
Value operator>(const Value& a, const Value& b);
Value operator>=(const Value& a, const Value& b);
Value operator==(const Value& a, const Value& b);
Value operator!=(const Value& a, const Value& b);
Value operator&&(const Value& a, const Value& b);  // builds a (lazy) logical and
Value operator||(const Value& a, const Value& b);
Value operator!(const Value& a);
Value operator-(const Value& a);

Value exp(const Value& x);
Value log(const Value& x);
Value sqrt(const Value& x);
Value rsqrt(const Value& x);
Value tanh(const Value& x);
Value sigmoid(const Value& x);
Value erf(const Value& x);
Value abs(const Value& x);
Value floor(const Value& x);
Value ceil(const Value& x);
Value min(const Value& a, const Value& b);  // NaN-propagating for floats
Value max(const Value& a, const Value& b);
Value pow(const Value& a, const Value& b);
Value sin(const Value& x);
Value cos(const Value& x);
// Any other te operation, e.g. apply(UnaryOp::Log1p, x), apply(BinaryOp::Atan2, y, x).
Value apply(UnaryOp op, const Value& x);
Value apply(BinaryOp op, const Value& a, const Value& b);
// cond ? a : b; only the chosen branch is evaluated (guarded reads may be out of bounds).
Value select(const Value& cond, const Value& a, const Value& b);
Value cast(DType dtype, const Value& x);

}  // namespace tessel::te::builder

namespace tessel::te {
using builder::ProgramBuilder;
}  // namespace tessel::te
