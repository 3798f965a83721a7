// Micro-kernel grafting (paper 002 through AKG's grafting, paper 000 §4.5):
// a contraction statement given a scheme is taken out of the isl schedule
// and implemented by the scheme's generated C. Its update statement becomes
// its own child of a top-level sequence, between the statements it depends
// on and the rest (each keeping the schedule the scheduler gave it), under a
// mark that code generation replaces with a call. Later passes leave marked
// statements alone.
#pragma once

#include <isl/cpp.h>

#include <functional>
#include <string>

#include "poly/Scop.h"
#include "support/Remarks.h"
#include "target/MicroKernelPlan.h"

namespace tessel::target::cpu {

struct GraftOptions {
  // "[TENSOR:] scheme" (microkernel/Scheme.h); TENSOR names the contraction's
  // output when the program has several. Empty: nothing is grafted.
  std::string scheme;
  std::string origin = "--scheme";  // where the text came from, for messages
  // A scheme the user did not write (the model's): where it cannot replace
  // the contraction, the pass leaves the tree as it is and says why (a missed
  // remark) instead of a UserError.
  bool optional = false;
  std::string vectorIsa;  // "avx512", "avx2" or "" (scalar)
  bool parallel = true;
  // Whether the user declared an input constant (--constant-inputs); null:
  // none declared. A laid-out input gets the prepare entry (laid out once,
  // apart) unless others were declared constant and it was not: then the
  // kernel lays it out on every call, like a temporary.
  std::function<bool(const std::string&)> declaredConstant;
};

isl::schedule graftMicroKernels(const poly::Scop& scop, const isl::schedule& schedule,
                                const GraftOptions& options, MicroKernelPlan& plan, Remarks& remarks);

}  // namespace tessel::target::cpu
