// The whole lowering of one te::Program for one machine: the target's
// pipeline (driver/Pipeline.h, printed by `tessel passes`) run stage after
// stage. Pure: everything about the machine comes in `machine`; the scheme
// search, which measures kernels, runs above it (tune/TunedCompile.h).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/Machine.h"
#include "driver/Options.h"
#include "driver/Strategy.h"
#include "lir/Lir.h"
#include "support/Remarks.h"

namespace tessel::driver {

struct CompiledProgram {
  te::Program program;       // as given: the semantic reference (what the interpreter runs)
  std::string scheduleYaml;  // the final schedule tree
  std::string astC;          // the isl AST printed as C
  lir::Kernel kernel;
  std::string cSource;
  std::string dump;                   // text after options.dumpAfter ("" if none)
  Remarks remarks;                    // the passes' decisions and the models behind them (--explain)
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

// One pass of the pipeline run alone (`tessel opt`): the stages before it run
// as usual, except that with a tree the schedule-tree passes before it do not
// run and the tree (checked against the dependences, marks kept) is its input;
// the pipeline stops after it. Returns its output as --dump-after prints it,
// and the remarks it made.
// UserError for an unknown pass, a tree given to a pass that reads no tree,
// or a pass that does not run under these options.
struct PassAlone {
  std::string pass;
  std::optional<CompileOptions::ScheduleFile> tree;
};
struct PassAloneResult {
  std::string output;
  Remarks remarks;  // the pass's own, not those of the stages before it
};
PassAloneResult runPassAlone(const te::Program& program, const CompileOptions& options,
                             const Machine& machine, const PassAlone& alone,
                             const TargetStrategy& strategy = cpuStrategy());

}  // namespace tessel::driver
