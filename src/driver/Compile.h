// The whole lowering of one te::Program for one target, pass after pass:
// widen-accumulators (te -> te) -> extract (te -> Scop, initial tree) -> the strategy's schedule-tree passes
// -> isl AST -> loop IR -> C. Every stage's text can be kept for dumps.
#pragma once

#include <string>
#include <vector>

#include "driver/Options.h"
#include "driver/Strategy.h"
#include "lir/Lir.h"

namespace tessel::driver {

struct CompiledProgram {
  te::Program program;       // as given: the semantic reference (what the interpreter runs)
  std::string scheduleYaml;  // the final schedule tree
  std::string astC;          // the isl AST printed as C
  lir::Kernel kernel;
  std::string cSource;
  std::string dump;                   // text after options.dumpAfter ("" if none)
  std::string explanation;            // the passes' decisions and the models behind them (--explain)
  std::vector<std::string> warnings;  // compiled, but not as asked (e.g. a scheduling fallback)
  // "O: scheme" for each contraction implemented by a TTILE scheme (given or searched).
  std::vector<std::string> microKernelSchemes;
  std::vector<std::pair<std::string, double>> passSeconds;  // each stage's wall time, in order
};

// Names accepted by --dump-after, in pipeline order.
std::vector<std::string> passNames(const TargetStrategy& strategy);

CompiledProgram compile(const te::Program& program, const CompileOptions& options,
                        const TargetStrategy& strategy = cpuStrategy());

}  // namespace tessel::driver
