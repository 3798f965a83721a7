#include "front/Builtins.h"

#include <set>

namespace tessel::front {

namespace {

using K = Builtin::Kind;
using te::BinaryOp;
using te::UnaryOp;

const Builtin kBuiltins[] = {
    {"exp", K::Unary, 1, UnaryOp::Exp},
    {"log", K::Unary, 1, UnaryOp::Log},
    {"sqrt", K::Unary, 1, UnaryOp::Sqrt},
    {"rsqrt", K::Unary, 1, UnaryOp::Rsqrt},
    {"tanh", K::Unary, 1, UnaryOp::Tanh},
    {"sigmoid", K::Unary, 1, UnaryOp::Sigmoid},
    {"erf", K::Unary, 1, UnaryOp::Erf},
    {"floor", K::Unary, 1, UnaryOp::Floor},
    {"ceil", K::Unary, 1, UnaryOp::Ceil},
    {"fabs", K::Unary, 1, UnaryOp::Abs},
    {"fmax", K::Binary, 2, {}, BinaryOp::Max},
    {"fmin", K::Binary, 2, {}, BinaryOp::Min},
    {"pow", K::Binary, 2, {}, BinaryOp::Pow},
    {"fdivide", K::Binary, 2, {}, BinaryOp::Div},
    {"fma", K::Fma, 3},
    {"sin", K::Unary, 1, UnaryOp::Sin},
    {"cos", K::Unary, 1, UnaryOp::Cos},
    {"tan", K::Unary, 1, UnaryOp::Tan},
    {"asin", K::Unary, 1, UnaryOp::Asin},
    {"acos", K::Unary, 1, UnaryOp::Acos},
    {"atan", K::Unary, 1, UnaryOp::Atan},
    {"sinh", K::Unary, 1, UnaryOp::Sinh},
    {"cosh", K::Unary, 1, UnaryOp::Cosh},
    {"asinh", K::Unary, 1, UnaryOp::Asinh},
    {"acosh", K::Unary, 1, UnaryOp::Acosh},
    {"atanh", K::Unary, 1, UnaryOp::Atanh},
    {"exp2", K::Unary, 1, UnaryOp::Exp2},
    {"expm1", K::Unary, 1, UnaryOp::Expm1},
    {"log2", K::Unary, 1, UnaryOp::Log2},
    {"log10", K::Unary, 1, UnaryOp::Log10},
    {"log1p", K::Unary, 1, UnaryOp::Log1p},
    {"cbrt", K::Unary, 1, UnaryOp::Cbrt},
    {"erfc", K::Unary, 1, UnaryOp::Erfc},
    {"lgamma", K::Unary, 1, UnaryOp::Lgamma},
    {"tgamma", K::Unary, 1, UnaryOp::Tgamma},
    {"round", K::Unary, 1, UnaryOp::Round},
    {"trunc", K::Unary, 1, UnaryOp::Trunc},
    {"atan2", K::Binary, 2, {}, BinaryOp::Atan2},
    {"hypot", K::Binary, 2, {}, BinaryOp::Hypot},
    {"copysign", K::Binary, 2, {}, BinaryOp::Copysign},
    {"fdim", K::Binary, 2, {}, BinaryOp::Fdim},
    {"remainder", K::Binary, 2, {}, BinaryOp::Remainder},
    {"fmod", K::Binary, 2, {}, BinaryOp::Mod},
};

// TC's builtin list (CUDA math API); the ones above are the implemented subset.
const std::set<std::string> kTcBuiltins = {
    "acos",    "acosh",     "asin",    "asinh",   "atan2",   "atan",          "atanh",         "cbrt",
    "ceil",    "copysign",  "cos",     "cosh",    "cospi",   "cyl_bessel_i0", "cyl_bessel_i1", "erfc",
    "erfcinv", "erfcx",     "erf",     "erfinv",  "exp10",   "exp2",          "exp",           "expm1",
    "fabs",    "fdim",      "fdivide", "floor",   "fma",     "fmax",          "fmin",          "fmod",
    "hypot",   "j0",        "j1",      "lgamma",  "log10",   "log1p",         "log2",          "logb",
    "log",     "nextafter", "normf",   "norm3d",  "norm4d",  "normcdf",       "normcdfinv",    "pow",
    "rcbrt",   "remainder", "rhypot",  "rnorm3d", "rnorm4d", "round",         "rsqrt",         "sin",
    "sinh",    "sinpi",     "sqrt",    "tan",     "tanh",    "tgamma",        "trunc",         "y0",
    "y1",
};

// "expf" -> "exp": CUDA's single-precision spelling of the same function.
std::string withoutF(const std::string& name) {
  if (name.size() > 1 && name.back() == 'f') return name.substr(0, name.size() - 1);
  return name;
}

}  // namespace

const Builtin* findBuiltin(const std::string& name) {
  for (const auto& b : kBuiltins)
    if (name == b.name) return &b;
  std::string base = withoutF(name);
  for (const auto& b : kBuiltins)
    if (base == b.name) return &b;
  return nullptr;
}

bool isUnsupportedTcBuiltin(const std::string& name) {
  if (findBuiltin(name)) return false;
  return kTcBuiltins.count(name) > 0 || kTcBuiltins.count(withoutF(name)) > 0;
}

std::string supportedBuiltins() {
  std::set<std::string> names;
  for (const auto& b : kBuiltins) names.insert(b.name);
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace tessel::front
