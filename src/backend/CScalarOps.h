// How generated C spells scalar values and operations: literals, the C type
// values of a dtype are computed in, unary and binary operations (the
// prelude's helpers where C's own operators differ from the interpreter's).
// Shared by the kernel emitter and the micro-kernels' epilogues.
#pragma once

#include <cstdint>
#include <string>

#include "tessel/te.h"

namespace tessel::backend {

// The C type values of dtype t are computed in (f16/bf16 compute in float,
// small integers in int32 as C promotes them).
const char* computeCType(te::DType t);
std::string floatLiteral(double v, te::DType t);
std::string intLiteral(int64_t v);
// `x` and `a`, `b` are C expressions already of the operation's type `t`.
std::string unaryC(te::UnaryOp op, te::DType t, const std::string& x);
std::string binaryC(te::BinaryOp op, te::DType t, const std::string& a, const std::string& b);

}  // namespace tessel::backend
