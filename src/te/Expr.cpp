#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <sstream>

#include "tessel/te.h"

namespace tessel::te {

namespace {
std::shared_ptr<ExprNode> node(ExprKind k, DType t, SourceLoc loc) {
  auto n = std::make_shared<ExprNode>();
  n->kind = k;
  n->type = t;
  n->loc = std::move(loc);
  return n;
}
}  // namespace

Expr constant(double v, DType t, SourceLoc loc) {
  auto n = node(ExprKind::Const, t, std::move(loc));
  n->value = roundToDType(v, t);
  return n;
}

Expr var(const std::string& name, SourceLoc loc) {
  auto n = node(ExprKind::Var, DType::I32, std::move(loc));
  n->name = name;
  return n;
}

Expr access(const std::string& tensor, DType t, std::vector<Expr> indices, SourceLoc loc) {
  auto n = node(ExprKind::Access, t, std::move(loc));
  n->name = tensor;
  n->operands = std::move(indices);
  return n;
}

Expr unary(UnaryOp op, Expr x, SourceLoc loc) {
  DType t = x->type;
  switch (op) {
    case UnaryOp::Not:
      t = DType::Bool;
      break;
    case UnaryOp::Neg:
      if (t == DType::Bool || t == DType::U8 || t == DType::I8) t = DType::I32;
      break;
    case UnaryOp::Abs:
      if (t == DType::Bool) t = DType::I32;
      break;
    default:  // transcendental and rounding functions compute in floating point
      if (!isFloat(t)) t = DType::F32;
      break;
  }
  auto n = node(ExprKind::Unary, t, std::move(loc));
  n->unaryOp = op;
  n->operands = {std::move(x)};
  return n;
}

DType binaryResultType(BinaryOp op, DType a, DType b) {
  if (isComparison(op) || isLogical(op)) return DType::Bool;
  DType t = promote(a, b);
  if ((op == BinaryOp::Pow || libmName(op)) && !isFloat(t)) return DType::F32;
  // C's usual arithmetic conversions: small integers compute in int.
  if (!isFloat(t) && op != BinaryOp::Min && op != BinaryOp::Max) return DType::I32;
  return t;
}

Expr binary(BinaryOp op, Expr a, Expr b, SourceLoc loc) {
  DType t = binaryResultType(op, a->type, b->type);
  auto n = node(ExprKind::Binary, t, std::move(loc));
  n->binaryOp = op;
  n->operands = {std::move(a), std::move(b)};
  return n;
}

Expr select(Expr cond, Expr a, Expr b, SourceLoc loc) {
  DType t = promote(a->type, b->type);
  auto n = node(ExprKind::Select, t, std::move(loc));
  n->operands = {std::move(cond), std::move(a), std::move(b)};
  return n;
}

Expr cast(DType t, Expr x, SourceLoc loc) {
  auto n = node(ExprKind::Cast, t, std::move(loc));
  n->operands = {std::move(x)};
  return n;
}

namespace {
void print(std::ostream& os, const Expr& e) {
  switch (e->kind) {
    case ExprKind::Const: {
      if (isFloat(e->type)) {
        std::ostringstream v;
        v.precision(9);
        v << e->value;
        os << v.str();
        if (v.str().find_first_of(".einf") == std::string::npos) os << ".0";
        if (e->type != DType::F32) os << ":" << dtypeName(e->type);
      } else {
        os << static_cast<int64_t>(e->value);
        if (e->type != DType::I32) os << ":" << dtypeName(e->type);
      }
      return;
    }
    case ExprKind::Var:
      os << e->name;
      return;
    case ExprKind::Access: {
      os << e->name;
      if (!e->operands.empty()) {
        os << "(";
        for (size_t i = 0; i < e->operands.size(); ++i) {
          if (i) os << ", ";
          print(os, e->operands[i]);
        }
        os << ")";
      }
      return;
    }
    case ExprKind::Unary:
      if (e->unaryOp == UnaryOp::Neg || e->unaryOp == UnaryOp::Not) {
        os << "(" << unaryOpName(e->unaryOp);
        print(os, e->operands[0]);
        os << ")";
      } else {
        os << unaryOpName(e->unaryOp) << "(";
        print(os, e->operands[0]);
        os << ")";
      }
      return;
    case ExprKind::Binary:
      if (e->binaryOp == BinaryOp::Min || e->binaryOp == BinaryOp::Max || e->binaryOp == BinaryOp::Pow ||
          libmName(e->binaryOp)) {
        os << binaryOpName(e->binaryOp) << "(";
        print(os, e->operands[0]);
        os << ", ";
        print(os, e->operands[1]);
        os << ")";
      } else {
        os << "(";
        print(os, e->operands[0]);
        os << " " << binaryOpName(e->binaryOp) << " ";
        print(os, e->operands[1]);
        os << ")";
      }
      return;
    case ExprKind::Select:
      os << "(";
      print(os, e->operands[0]);
      os << " ? ";
      print(os, e->operands[1]);
      os << " : ";
      print(os, e->operands[2]);
      os << ")";
      return;
    case ExprKind::Cast:
      os << dtypeName(e->type) << "(";
      print(os, e->operands[0]);
      os << ")";
      return;
  }
}

}  // namespace

std::string toString(const Expr& e) {
  std::ostringstream os;
  print(os, e);
  return os.str();
}

}  // namespace tessel::te
