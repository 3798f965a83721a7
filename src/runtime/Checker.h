// Compares a kernel's output with the reference interpreter's, with tolerances
// that follow the dtype and the length of the reductions feeding the tensor.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "runtime/Buffer.h"
#include "tessel/te.h"

namespace tessel::runtime {

// An element passes when |got - want| <= abs + rel * |want|; NaN matches NaN
// and an infinity matches the same infinity. abs = rel = 0 means exact.
struct Tolerance {
  double abs = 0;
  double rel = 0;
};
std::string toString(const Tolerance& t);

struct CheckResult {
  bool pass = true;
  double maxAbsErr = 0;        // over elements where both values are finite
  double maxRelErr = 0;        // same, relative to |want| (elements with want == 0 excluded)
  int64_t firstBadIndex = -1;  // flat index; -1 when everything matched
  std::string message;         // empty on pass
};

CheckResult compareBuffers(const Buffer& got, const Buffer& want, const Tolerance& tol);

// Tolerance for `tensor` of `program`: exact for integers and bool; for floats
// a relative term for the dtype plus an absolute term that grows with the
// number of terms accumulated on the way to the tensor (reductions chained
// through temporaries included) and with the magnitude of those terms.
// `magnitudes` (largest |value| of each tensor, from the interpreter) gives
// that magnitude; tensors it does not name count as magnitude 1.
Tolerance toleranceFor(const te::Program& program, const std::string& tensor,
                       const std::map<std::string, double>& magnitudes = {});

}  // namespace tessel::runtime
