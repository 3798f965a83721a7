// Syntax tree of a Tensor Comprehensions file, as written (names unresolved,
// no types). Lower.cpp resolves it into a te::Program.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "front/Frontend.h"
#include "tessel/error.h"

namespace tessel::front {

namespace ast {

enum class ExprKind {
  Int,      // intValue
  Float,    // floatValue
  Ident,    // name: size, index variable, let name or rank-0 tensor
  Apply,    // name(args): tensor read, builtin call or (rejected) def call
  Dim,      // name.dim: size of dimension `dim` of tensor `name`
  Unary,    // op args[0]: "-" or "!"
  Binary,   // args[0] op args[1]: + - * / % < <= > >= == != && ||
  Ternary,  // args[0] ? args[1] : args[2]
  MinMax,   // op(args[0], args[1]) with op "min" or "max"
  Cast,     // name(args[0]) with name a scalar type
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  ExprKind kind = ExprKind::Int;
  SourceLoc loc;  // the token that names the node (operator, identifier, literal)
  int64_t intValue = 0;
  double floatValue = 0;
  std::string name;
  std::string op;
  int dim = 0;
  int depth = 1;  // height of the expression tree (bounded by the parser)
  std::vector<ExprPtr> args;
};

struct DimSpec {
  std::string name;  // empty: a literal extent
  int64_t value = 0;
  SourceLoc loc;
};

struct TypeSpec {
  std::string scalar;  // TC spelling: float, int32, ...
  SourceLoc loc;
  std::vector<DimSpec> dims;
};

struct Param {
  std::string name;
  SourceLoc loc;
  std::optional<TypeSpec> type;  // always set for inputs; optional for outputs
};

struct WhereClause {
  enum class Kind { Range, Let, Exists };
  Kind kind = Kind::Range;
  std::string var;
  SourceLoc loc;
  ExprPtr lo, hi;  // Range: lo:hi (half-open)
  ExprPtr value;   // Let: var = value; Exists: the read that bounds indices
};

enum class AssignOp { Assign, Sum, Prod, Min, Max };

struct Stmt {
  std::string tensor;
  SourceLoc loc;                 // the tensor name on the left
  bool hasIndexList = false;     // `O(...)` as opposed to a bare rank-0 `O`
  std::vector<ExprPtr> indices;  // must be plain identifiers (checked when lowering)
  AssignOp op = AssignOp::Assign;
  bool init = false;  // the `!` of `+=!`
  SourceLoc opLoc;
  ExprPtr rhs;
  std::vector<WhereClause> where;
};

struct Def {
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;
  std::vector<Param> returns;
  std::vector<Stmt> stmts;
};

}  // namespace ast

class Module {
 public:
  Source source;
  std::vector<ast::Def> defs;
  const ast::Def* find(const std::string& name) const {
    for (const auto& d : defs)
      if (d.name == name) return &d;
    return nullptr;
  }
};

}  // namespace tessel::front
