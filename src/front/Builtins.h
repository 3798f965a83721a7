// TC builtin functions (CUDA math names, with or without the single-precision
// `f` suffix) mapped onto te operations, plus the TC builtins Tessel lacks.
#pragma once

#include <string>

#include "tessel/te.h"

namespace tessel::front {

struct Builtin {
  enum class Kind { Unary, Binary, Fma };
  const char* name;
  Kind kind;
  int arity;
  te::UnaryOp unaryOp = te::UnaryOp::Neg;
  te::BinaryOp binaryOp = te::BinaryOp::Add;
};

// The builtin called `name` (e.g. "exp", "expf", "fmax"); nullptr if none.
const Builtin* findBuiltin(const std::string& name);
// True when `name` is a TC builtin (or its `f` form) that Tessel does not implement.
bool isUnsupportedTcBuiltin(const std::string& name);
// "ceil, erf, exp, ..." for messages.
std::string supportedBuiltins();

}  // namespace tessel::front
