// Runs a compiled kernel on random inputs: loads it, optionally checks every
// output against the reference interpreter, optionally times it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/KernelLibrary.h"
#include "tessel/te.h"

namespace tessel::runtime {

struct RunOptions {
  bool check = false;
  bool time = false;
  int threads = 0;          // 0 = the OpenMP default
  uint64_t seed = 1;        // input generator seed
  int minRuns = 5;          // timing: at least this many timed runs
  double minSeconds = 0.2;  // timing: and at least this long in total
};

struct OutputCheck {
  std::string tensor;
  bool pass = true;
  double maxAbsErr = 0;
  std::string message;
};

struct RunReport {
  std::string check = "skipped";  // "pass" | "fail" | "skipped"
  double maxAbsErr = 0;
  std::vector<OutputCheck> outputs;
  double medianMs = 0;
  int runs = 0;
  // A kernel that reads some inputs in its own layout is timed through its
  // prepared entry; the layout transform (its prepare entry) is timed apart.
  std::vector<std::string> preparedInputs;
  double prepareMs = 0;
  bool compiledFromCache = false;
  double compileMs = 0;  // C compiler time (0 when cached)
};

// Throws UserError when the kernel reports an out-of-range read (located by
// replaying the program in the interpreter).
RunReport runKernel(const te::Program& program, const std::string& cSource, const KernelEntries& entries,
                    const RunOptions& options);
RunReport runKernel(const te::Program& program, const std::string& cSource, const std::string& packedEntry,
                    const RunOptions& options);

}  // namespace tessel::runtime
