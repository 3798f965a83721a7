#include "backend/CScalarOps.h"

#include <cmath>
#include <cstdio>

#include "tessel/error.h"

namespace tessel::backend {

using te::BinaryOp;
using te::DType;
using te::UnaryOp;

// The C type values of dtype t are computed in (f16/bf16 compute in float,
// small integers in int32 as C promotes them).
const char* computeCType(DType t) {
  switch (t) {
    case DType::F64:
      return "double";
    case DType::F32:
    case DType::F16:
    case DType::BF16:
      return "float";
    default:
      return "int32_t";
  }
}

std::string floatLiteral(double v, DType t) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  if (t == DType::F64) {
    std::snprintf(buf, sizeof buf, "%.17g", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", v);
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (t != DType::F64) s += "f";
  return s[0] == '-' ? "(" + s + ")" : s;
}

std::string intLiteral(int64_t v) {
  if (v == INT32_MIN) return "(-2147483647 - 1)";
  std::string s = std::to_string(v);
  if (v > INT32_MAX || v < INT32_MIN) s += "L";
  return v < 0 ? "(" + s + ")" : s;
}

std::string unaryC(UnaryOp op, DType t, const std::string& x) {
  bool f = te::isFloat(t);
  bool d = t == DType::F64;
  auto fn = [&](const char* name) { return std::string(name) + (d ? "" : "f") + "(" + x + ")"; };
  switch (op) {
    case UnaryOp::Neg:
      return f ? "(-" + x + ")" : "tessel_ineg(" + x + ")";
    case UnaryOp::Not:
      return "(!" + x + ")";
    case UnaryOp::Abs:
      return f ? fn("fabs") : "tessel_iabs(" + x + ")";
    case UnaryOp::Rsqrt:
      return fn("tessel_rsqrt");
    case UnaryOp::Sigmoid:
      return fn("tessel_sigmoid");
    default:  // exp, log, sqrt, tanh, erf, floor, ceil and the libm functions: C names
      return fn(te::unaryOpName(op));
  }
  throw InternalError("emit-c", "unknown unary op");
}

std::string binaryC(BinaryOp op, DType t, const std::string& a, const std::string& b) {
  bool f = te::isFloat(t);
  bool d = t == DType::F64;
  std::string ct = computeCType(t);
  auto fn = [&](const std::string& name) { return name + "(" + a + ", " + b + ")"; };
  auto arith = [&](const char* op, const char* intFn) {
    return f ? "((" + ct + ")" + a + " " + op + " (" + ct + ")" + b + ")" : fn(intFn);
  };
  switch (op) {
    case BinaryOp::Add:
      return arith("+", "tessel_iadd");
    case BinaryOp::Sub:
      return arith("-", "tessel_isub");
    case BinaryOp::Mul:
      return arith("*", "tessel_imul");
    case BinaryOp::Div:
      return arith("/", "tessel_idiv");
    case BinaryOp::Mod:
      return f ? fn(d ? "fmod" : "fmodf") : fn("tessel_imod");
    case BinaryOp::Min:
      return f ? fn(d ? "tessel_fmin" : "tessel_fminf") : fn("tessel_imin");
    case BinaryOp::Max:
      return f ? fn(d ? "tessel_fmax" : "tessel_fmaxf") : fn("tessel_imax");
    case BinaryOp::Pow:
      return fn(d ? "pow" : "powf");
    default:
      if (const char* name = te::libmName(op)) return fn(std::string(name) + (d ? "" : "f"));
      return "(" + a + " " + te::binaryOpName(op) + " " + b + ")";
  }
}

}  // namespace tessel::backend
