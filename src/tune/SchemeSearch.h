// TTILE's search for one contraction (paper 002 §2): the micro-kernel
// classes of this machine, compositions covering the unrolled dimension
// exactly, a few loop orders over two tiling levels, each candidate scheme
// ranked by the data-movement model (the 40% with the longest accumulation
// loop above the register tile, then the least modelled movement), the best
// `budget` measured, and the compiler's own code measured too: a scheme is
// kept only if it is faster. Results are cached per program, options and
// machine, so a second compile measures nothing.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "driver/Compile.h"
#include "microkernel/SchemeRanking.h"
#include "tune/MicroBench.h"
#include "tune/MicroKernelStore.h"

namespace tessel::tune {

struct SchemeSearchOptions {
  int budget = 200;          // schemes measured
  int threads = 0;           // threads the kernels are timed on (0: the OpenMP default)
  double minSeconds = 0.05;  // timing per candidate
  // Measuring stops once the search has run this long (the bound is
  // two minutes per layer); what was measured by then decides.
  double timeLimitSeconds = 110;
  bool useCache = true;
  // Families of micro-kernels the contraction uses and the machine's table
  // lacks are measured first (`microbench`'s settings) and stored; false:
  // the stored table as it is, else the register model. Never for a
  // described machine other than this one.
  bool measureMicroKernels = false;
  MicroBenchOptions microbench;
  std::function<void(const std::string&)> progress;  // one line per step
};

struct SchemeSearchResult {
  std::string scheme;  // "" when the compiler's own code was faster, or no scheme applies
  std::string why;     // what was decided, for --explain
  double baselineMs = 0, bestMs = 0;
  size_t enumerated = 0, measured = 0;
  bool fromCache = false;
  std::vector<std::string> familiesMeasured;  // micro-kernel families measured first by this search
};

// `options.scheme.text` is "search" or "TENSOR: search" (microkernel/Scheme.h).
// Unnamed, the search takes the program's contraction with the most work, and
// a program without one keeps the compiler's own code.
SchemeSearchResult searchScheme(const te::Program& program, const driver::CompileOptions& options,
                                const driver::Machine& machine, const SchemeSearchOptions& search);

// The options with the searched scheme in place of "search" (or none, if the
// compiler's own code won); adds what was decided to `remarks` (applied with
// its "scheme", or missed), then one analysis remark per measurement.
driver::CompileOptions resolveSchemeSearch(const te::Program& program, driver::CompileOptions options,
                                           const driver::Machine& machine, const SchemeSearchOptions& search,
                                           Remarks& remarks);

// The options with the scheme that --scheme search (with the options' budget,
// threads and classes) finds in place of "search"; the options as they are
// when they ask for none. Adds what was decided to `remarks`.
driver::CompileOptions withSearchedScheme(const te::Program& program, const driver::CompileOptions& options,
                                          const driver::Machine& machine, Remarks& remarks);
// driver::compile, after the search the options ask for (--scheme search,
// with their budget, threads and classes), whose measurements go to
// --explain before the compilation's.
// The name its remarks carry: it runs before the pipeline, not as a stage.
inline constexpr const char* kSchemeSearch = "scheme-search";

driver::CompiledProgram compileTuned(const te::Program& program, const driver::CompileOptions& options,
                                     const driver::Machine& machine);

}  // namespace tessel::tune
