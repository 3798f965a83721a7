// Row-wise programs (softmax, layer normalization) and a compile-and-check
// helper shared by the fusion and contraction tests.
#pragma once

#include <string>

#include "../front/FrontTestUtil.h"
#include "Compile.h"
#include "KernelCheck.h"
#include "driver/Compile.h"

namespace tessel::testing {

struct CheckedProgram {
  driver::CompiledProgram program;
  KernelCheck check;
  // Whether the --explain text has `text`: for a model's wording; decisions are matched on remarks' fields.
  bool has(const std::string& text) const { return program.remarks.text().find(text) != std::string::npos; }
  std::string explained() const { return program.remarks.text(); }
};

inline CheckedProgram compileAndCheck(const std::string& tc, driver::CompileOptions o = {},
                                      const std::optional<target::Hardware>& hardware = std::nullopt) {
  driver::CompiledProgram cp = testing::compileFor(front::testing::lowerText(tc), o, hardware);
  KernelCheck k = checkAgainstInterpreter(cp);
  return {std::move(cp), k};
}

inline std::string rowSizes(int n, int d) {
  return "# sizes: N=" + std::to_string(n) + " D=" + std::to_string(d) + "\n";
}

inline constexpr const char* kRowSoftmax =
    "def f(float(N,D) X) -> (Y) {\n"
    "  mx(n) max=! X(n,d)\n"
    "  e(n,d) = exp(X(n,d) - mx(n))\n"
    "  s(n) +=! e(n,d)\n"
    "  Y(n,d) = e(n,d) / s(n)\n}\n";
inline constexpr const char* kRowLayernorm =
    "def f(float(N,D) X, float(D) G, float(D) B) -> (Y) {\n"
    "  mean(n) +=! X(n,d) / D\n"
    "  xc(n,d) = X(n,d) - mean(n)\n"
    "  var(n) +=! xc(n,d) * xc(n,d) / D\n"
    "  Y(n,d) = xc(n,d) * rsqrt(var(n) + 1e-5) * G(d) + B(d)\n}\n";

}  // namespace tessel::testing
