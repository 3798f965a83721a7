// Names and properties of te's operations and reductions.
#include <limits>

#include "tessel/te.h"

namespace tessel::te {

const char* unaryOpName(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return "-";
    case UnaryOp::Not:
      return "!";
    case UnaryOp::Abs:
      return "abs";
    case UnaryOp::Exp:
      return "exp";
    case UnaryOp::Log:
      return "log";
    case UnaryOp::Sqrt:
      return "sqrt";
    case UnaryOp::Rsqrt:
      return "rsqrt";
    case UnaryOp::Tanh:
      return "tanh";
    case UnaryOp::Sigmoid:
      return "sigmoid";
    case UnaryOp::Erf:
      return "erf";
    case UnaryOp::Floor:
      return "floor";
    case UnaryOp::Ceil:
      return "ceil";
    default:
      return libmName(op);
  }
}

const char* libmName(UnaryOp op) {
  switch (op) {
    case UnaryOp::Sin:
      return "sin";
    case UnaryOp::Cos:
      return "cos";
    case UnaryOp::Tan:
      return "tan";
    case UnaryOp::Asin:
      return "asin";
    case UnaryOp::Acos:
      return "acos";
    case UnaryOp::Atan:
      return "atan";
    case UnaryOp::Sinh:
      return "sinh";
    case UnaryOp::Cosh:
      return "cosh";
    case UnaryOp::Asinh:
      return "asinh";
    case UnaryOp::Acosh:
      return "acosh";
    case UnaryOp::Atanh:
      return "atanh";
    case UnaryOp::Exp2:
      return "exp2";
    case UnaryOp::Expm1:
      return "expm1";
    case UnaryOp::Log2:
      return "log2";
    case UnaryOp::Log10:
      return "log10";
    case UnaryOp::Log1p:
      return "log1p";
    case UnaryOp::Cbrt:
      return "cbrt";
    case UnaryOp::Erfc:
      return "erfc";
    case UnaryOp::Lgamma:
      return "lgamma";
    case UnaryOp::Tgamma:
      return "tgamma";
    case UnaryOp::Round:
      return "round";
    case UnaryOp::Trunc:
      return "trunc";
    default:
      return nullptr;
  }
}

const char* libmName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Atan2:
      return "atan2";
    case BinaryOp::Hypot:
      return "hypot";
    case BinaryOp::Copysign:
      return "copysign";
    case BinaryOp::Fdim:
      return "fdim";
    case BinaryOp::Remainder:
      return "remainder";
    default:
      return nullptr;
  }
}

const char* binaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "+";
    case BinaryOp::Sub:
      return "-";
    case BinaryOp::Mul:
      return "*";
    case BinaryOp::Div:
      return "/";
    case BinaryOp::Mod:
      return "%";
    case BinaryOp::Min:
      return "min";
    case BinaryOp::Max:
      return "max";
    case BinaryOp::Pow:
      return "pow";
    case BinaryOp::Lt:
      return "<";
    case BinaryOp::Le:
      return "<=";
    case BinaryOp::Gt:
      return ">";
    case BinaryOp::Ge:
      return ">=";
    case BinaryOp::Eq:
      return "==";
    case BinaryOp::Ne:
      return "!=";
    case BinaryOp::And:
      return "&&";
    case BinaryOp::Or:
      return "||";
    default:
      return libmName(op);
  }
}

bool isComparison(BinaryOp op) {
  return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
         op == BinaryOp::Eq || op == BinaryOp::Ne;
}
bool isLogical(BinaryOp op) { return op == BinaryOp::And || op == BinaryOp::Or; }

const char* reductionName(Reduction r) {
  switch (r) {
    case Reduction::None:
      return "=";
    case Reduction::Sum:
      return "+=";
    case Reduction::Prod:
      return "*=";
    case Reduction::Max:
      return "max=";
    case Reduction::Min:
      return "min=";
  }
  return "?";
}

double reductionIdentity(Reduction r, DType t) {
  switch (r) {
    case Reduction::None:
    case Reduction::Sum:
      return 0;
    case Reduction::Prod:
      return 1;
    case Reduction::Max:
      if (isFloat(t)) return -std::numeric_limits<double>::infinity();
      if (t == DType::I32) return std::numeric_limits<int32_t>::min();
      if (t == DType::I8) return -128;
      return 0;
    case Reduction::Min:
      if (isFloat(t)) return std::numeric_limits<double>::infinity();
      if (t == DType::I32) return std::numeric_limits<int32_t>::max();
      if (t == DType::I8) return 127;
      if (t == DType::U8) return 255;
      return 1;
  }
  return 0;
}

}  // namespace tessel::te
