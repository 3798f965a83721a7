#include "backend/CNames.h"

#include <set>

namespace tessel::backend {

bool clashesWithC(const std::string& n) {
  static const std::set<std::string> names = [] {
    std::set<std::string> s = {
        // C keywords and the names every program has.
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
        "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
        "volatile", "while", "main", "errno",
        // <stdlib.h>, <string.h>
        "abs", "labs", "llabs", "div", "ldiv", "malloc", "calloc", "realloc", "free", "aligned_alloc",
        "abort", "exit", "atexit", "atoi", "atol", "atof", "strtol", "strtod", "strtof", "qsort", "bsearch",
        "rand", "srand", "getenv", "system", "memcpy", "memset", "memmove", "memcmp", "strlen", "strcpy",
        "strcmp", "strcat", "strncpy", "strchr", "strstr", "strdup", "random", "select"};
    // <math.h>, each also with the f and l suffixes.
    for (const char* m :
         {"exp",    "exp2",     "expm1",     "log",       "log2",    "log10",     "log1p",  "sqrt",
          "cbrt",   "pow",      "sin",       "cos",       "tan",     "asin",      "acos",   "atan",
          "atan2",  "sinh",     "cosh",      "tanh",      "asinh",   "acosh",     "atanh",  "erf",
          "erfc",   "tgamma",   "lgamma",    "gamma",     "floor",   "ceil",      "round",  "trunc",
          "rint",   "lrint",    "lround",    "nearbyint", "fmod",    "remainder", "remquo", "fmax",
          "fmin",   "fabs",     "fdim",      "fma",       "hypot",   "ldexp",     "frexp",  "modf",
          "nan",    "copysign", "nextafter", "scalbn",    "scalbln", "logb",      "ilogb",  "significand",
          "j0",     "j1",       "jn",        "y0",        "y1",      "yn",        "exp10",  "drem",
          "finite", "isinf",    "isnan"})
      for (const char* suffix : {"", "f", "l"}) s.insert(std::string(m) + suffix);
    return s;
  }();
  return names.count(n) || n.rfind("tessel_", 0) == 0 || n.rfind("omp_", 0) == 0 || n.rfind("__", 0) == 0;
}

// Tensor names are user identifiers; rename the few that would collide with C
// or with names the emitter itself uses.
std::string cName(const std::string& n) {
  static const std::set<std::string> types = {"int32_t", "int8_t", "uint8_t", "uint16_t",
                                              "int64_t", "size_t", "args"};
  bool looksInternal =
      n.rfind("v_", 0) == 0 || n.rfind("_", 0) == 0 ||
      (n.size() > 1 && n[0] == 'c' && n.find_first_not_of("0123456789", 1) == std::string::npos);
  return clashesWithC(n) || types.count(n) || looksInternal ? n + "_t" : n;
}

std::string kernelSymbol(const lir::Kernel& kernel) {
  return clashesWithC(kernel.name) ? kernel.name + "_kernel" : kernel.name;
}

}  // namespace tessel::backend
