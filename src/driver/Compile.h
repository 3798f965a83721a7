// The whole lowering of one te::Program for one machine: the target's
// pipeline (driver/Pipeline.h, printed by `tessel passes`) run stage after
// stage. Pure: everything about the machine comes in `machine`; the scheme
// search, which measures kernels, runs above it (tune/TunedCompile.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "driver/Machine.h"
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
  // "O: scheme" for each contraction implemented by a TTILE scheme (given or chosen by the model).
  std::vector<std::string> microKernelSchemes;
  std::vector<std::pair<std::string, double>> passSeconds;  // each stage that ran: its wall time, in order
};

// UserError for options the pipeline cannot honour (an unknown --dump-after
// stage, --schedule-constraints without Tessel's scheduler, --scheme search,
// which tune::compileTuned resolves), or for a program they do not fit.
CompiledProgram compile(const te::Program& program, const CompileOptions& options, const Machine& machine,
                        const TargetStrategy& strategy = cpuStrategy());

}  // namespace tessel::driver
