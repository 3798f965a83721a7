// Typed compilation options; they print themselves for --explain and logs.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "schedule/Scheduler.h"
#include "tessel/te.h"
#include "tile/TilePolicy.h"

namespace tessel::driver {

// How eagerly statements share loops: the scheduler's strategies, or
// basteln (paper 001: nests grouped along quasi-identity dependences, then
// producers recomputed inside the tiles of their consumers).
enum class Fusion { None, Min, Smart, Max, Basteln };

struct CompileOptions {
  // basteln by measurement: on every case of bench/suites/ it is as fast as
  // smart fusion or faster (pipelines 10-35%, attention 9%; docs/performance.md).
  Fusion fusion = Fusion::Basteln;
  // Under basteln fusion: the largest share of a producer's executions that
  // may be recomputations (1 = fuse whatever it costs). 40%: unsharp's 5-tap
  // blur recomputed at 33% in 8-row strips is 14-19% faster than unfused.
  double bastelnRedundancy = 0.4;
  // Wall-clock bound on each scheduling attempt (0 = none); past it the
  // scheduler falls back to a cheaper schedule and warns.
  std::chrono::milliseconds scheduleTimeLimit{10'000};
  // Wall-clock bound on each of basteln's dataflow checks (0 = none); past
  // it that fusion is refused. Its isl operation quota usually stops a check
  // first (interpolate's largest fusion takes about 10 s), so that the
  // fusions made do not depend on the machine's load.
  std::chrono::milliseconds fusionCheckTimeLimit{30'000};
  // Which scheduler computes the schedule: isl's, or Tessel's own (paper
  // 004), which accepts constraint trees.
  enum class Scheduler { Isl, Tessel };
  Scheduler scheduler = Scheduler::Isl;
  // A constraint tree (schedule/ConstraintTree.h) injected into Tessel's
  // scheduler; parsed against the program's statements when scheduling.
  struct ConstraintsFile {
    std::string origin;  // where the text came from, for messages
    std::string text;
    // "auto": the tree of paper 004's vectorization scenarios
    // (schedule/VectorScenarios.h), built for the program and the machine.
    bool automatic = false;
  };
  std::optional<ConstraintsFile> scheduleConstraints;
  std::string dumpAfter;  // name of a pass whose result to keep as text ("" = none)
  // Called with that text as soon as the pass has run, so that a later
  // stage's failure (an internal error in AST generation, say) does not hide
  // it; the CLI prints it. Not part of the options' identity.
  std::function<void(const std::string&)> dumpSink;
  // A schedule tree (isl YAML, as --dump-after prints it) used instead of the
  // scheduler's; checked against the dependences before use.
  struct ScheduleFile {
    std::string origin;  // where the text came from, for messages
    std::string text;
  };
  std::optional<ScheduleFile> schedule;
  bool autoTiling = true;  // Auto Tiling for bands the tile policy does not cover
  tile::TilePolicy tiles;  // --tiles: the user's tiling policy
  bool vectorize = true;   // SIMD code for the loops the schedule marks vectorizable
  // Reads strided along a vector loop but contiguous along the loop above it
  // are transposed through registers (target/cpu/MarkVectorLoops.h); off:
  // such loops stay scalar, as before that existed (for comparisons).
  bool registerTransposes = true;
  // Elementwise temporaries whose elements are each read once are inlined
  // into their readers before scheduling (paper 001 Alg. 5). Off by default:
  // on a CPU the contracted temporary costs about as little, and inlining
  // changes what basteln can fuse (interpolate: 21 -> 27 ms at 1 thread).
  bool inlineElementwise = false;
  // Temporaries cheap to recompute from the inputs and too large for the
  // private caches are inlined even where they are read several times
  // (fuse/InlineElementwise.h); `--inline off` turns this off too. Never with
  // --schedule, whose tree names the program's statements.
  bool recomputeCheap = true;
  // Copying reused operand tiles into contiguous local buffers: where the
  // cost model expects a gain (auto), wherever it is legal (all: for testing
  // the copies), or never.
  enum class Promotion { Auto, All, Off };
  Promotion promotion = Promotion::Auto;
  // Non-temporal stores for outputs the kernel does not read back: when they
  // are at least as large as the caches in all (auto), for every such output (always: exercises
  // them in tests and fuzzing), or never.
  enum class StreamingStores { Auto, Always, Off };
  StreamingStores streamingStores = StreamingStores::Auto;
  // A TTILE scheme (microkernel/Scheme.h, "[TENSOR:] R_k, ...") that
  // implements the program's contraction (target/cpu/GraftMicroKernels.h);
  // empty or "none": the contraction is compiled like any statement; "auto":
  // the model's choice for a 3x3-window convolution (tune/SchemeSearch.h).
  struct SchemeText {
    std::string origin = "--scheme";  // where the text came from, for messages
    std::string text = "auto";
    // Chosen by the model (--scheme auto), not written by the user: where it
    // does not graft, the compiler's own code runs instead of an error.
    bool chosenByModel = false;
  };
  SchemeText scheme;
  // Scheme text "search" (or "TENSOR: search"): the scheme is searched for
  // (tune/SchemeSearch.h), measuring this many candidates on this many
  // threads (0: the OpenMP default); the result is cached per machine.
  int schemeBudget = 200;
  int schemeThreads = 0;
  // The micro-kernel classes the search composes from: Model (the stored
  // table, `tessel microbench`, as it is, else the register model) or
  // Measure (where the table lacks a family the contraction uses, that
  // family is measured first and stored, once per machine). Model stays the
  // default until measured classes are shown to search better (see
  // docs/performance.md: one convolution better, one worse on the AMD VM).
  enum class SchemeClasses { Model, Measure };
  SchemeClasses schemeClasses = SchemeClasses::Model;
  // Inputs that keep their values from call to call (weights). A kernel that
  // reads an input in its own layout (a scheme's L_X) lays it out in its
  // prepare entry; when every such input is constant, timings (run --time,
  // bench, the scheme search) call the prepare entry once, untimed, and time
  // the prepared entry, as the peers' weight reorders are; otherwise they
  // time the whole kernel, transforms included.
  struct ConstantInputs {
    bool all = false;
    std::vector<std::string> names;
    bool has(const std::string& input) const;
    bool empty() const { return !all && names.empty(); }
    std::string toString() const;  // "all" or "A+B"
  };
  ConstantInputs constantInputs;
  // The options that differ from the defaults, as KEY=VALUE items that
  // `tessel bench --options` reads back (driver/OptionTable.h); "" at the defaults.
  std::string toString() const;
};

const char* fusionName(Fusion f);                        // "none", "min", "smart", "max", "basteln"
const char* schedulerName(CompileOptions::Scheduler s);  // "isl", "tessel"
// The isl scheduler's strategy for `f` (basteln starts from min fusion).
schedule::FusionStrategy schedulerFusion(Fusion f);
// "25%": a share from 0 to 100 percent; UserError otherwise.
double parsePercent(const std::string& text, const std::string& what);
std::string percentText(double share);

// "all", or input names separated by ',' or '+'; UserError when empty or malformed.
CompileOptions::ConstantInputs parseConstantInputs(const std::string& text);
// UserError naming `origin` for a name that is not an input of `program`.
void checkConstantInputs(const te::Program& program, const CompileOptions::ConstantInputs& inputs,
                         const std::string& origin);

}  // namespace tessel::driver
