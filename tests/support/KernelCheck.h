// Runs a compiled kernel on random inputs on two threads (races show only with
// several) and compares every output with the reference interpreter.
#pragma once

#include <string>

#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "runtime/Runner.h"

namespace tessel::testing {

struct KernelCheck {
  bool pass = true;
  std::string failures;  // one line per output that differs
};

inline KernelCheck checkAgainstInterpreter(const driver::CompiledProgram& cp) {
  runtime::RunOptions ro;
  ro.check = true;
  ro.threads = 2;
  // Inputs read in the kernel's layout count as constant: the prepare and prepared entries are checked too.
  auto r = runtime::runKernel(cp.program, cp.cSource,
                              backend::kernelEntries(cp.kernel, [](const std::string&) { return true; }), ro);
  KernelCheck c;
  for (const auto& out : r.outputs)
    if (!out.pass) {
      c.pass = false;
      c.failures += out.tensor + ": " + out.message + "\n";
    }
  return c;
}

}  // namespace tessel::testing
