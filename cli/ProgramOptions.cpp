#include "ProgramOptions.h"

#include <cctype>
#include <iomanip>
#include <iostream>

#include "target/HardwareJson.h"

namespace tessel::cli {

void addProgramOptions(CLI::App* cmd, ProgramArgs& args) {
  cmd->add_option("file", args.spec.file, "Tensor Comprehensions source file")->required();
  cmd->add_option("--entry", args.spec.entry, "def to compile (default: the only def in the file)");
  cmd->add_option("--size", args.spec.sizeArgs,
                  "bind a size: NAME=VALUE (repeatable; defaults from '# sizes:')");
  cmd->add_option("--fusion", args.fusion,
                  "fusion strategy: none (each statement its own loop nests, in source order), min, "
                  "smart, max, or basteln (default: nests grouped along quasi-identity dependences, "
                  "then producers recomputed inside the tiles of their consumers)")
      ->check(CLI::IsMember({"none", "min", "smart", "max", "basteln"}));
  cmd->add_option("--basteln-redundancy", args.bastelnRedundancy,
                  "under --fusion basteln: the largest share of a producer's executions that may be "
                  "recomputations, e.g. 40% (default); 100% fuses whatever it costs");
  cmd->add_option(
      "--schedule", args.scheduleFile,
      "use this schedule tree (isl YAML, e.g. edited --dump-after output) instead of the scheduler's; "
      "it is checked against the dependences");
  cmd->add_option(
         "--scheduler", args.scheduler,
         "isl (default): isl's scheduler; tessel: Tessel's own Pluto-style scheduler, which "
         "accepts --schedule-constraints (it falls back to isl's, with a warning, where it cannot finish)")
      ->check(CLI::IsMember({"isl", "tessel"}));
  cmd->add_option("--schedule-constraints", args.scheduleConstraintsFile,
                  "a constraint tree file steering --scheduler tessel: per schedule row, alternative affine "
                  "constraints on the schedule coefficients (see README); 'auto': the tree of paper 004's "
                  "vectorization scenarios for this program and machine");
  cmd->add_option(
         "--tiling", args.tiling,
         "auto: Auto Tiling chooses tile sizes for the caches; off: no tiling except what --tiles asks")
      ->check(CLI::IsMember({"auto", "off"}));
  cmd->add_option("--vectorize", args.vectorize,
                  "on: SIMD code (AVX-512 or AVX2) for the loops that allow it; off: scalar loops only")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option(
         "--transposes", args.transposes,
         "registers: a vector loop whose read is strided along it but contiguous along the loop "
         "above runs in blocks of the vector width, the read transposed through registers; off: such "
         "loops stay scalar")
      ->check(CLI::IsMember({"registers", "off"}));
  cmd->add_option("--promote", args.promote,
                  "auto: copy reused operand tiles into contiguous per-thread buffers (packing) where the "
                  "cost model expects a gain; all: wherever legal; off: read operands in place")
      ->check(CLI::IsMember({"auto", "all", "off"}));
  cmd->add_option("--stream-stores", args.streamStores,
                  "auto: non-temporal stores for outputs at least as large as the caches that the kernel "
                  "does not read "
                  "back; always: for every such output; off: never")
      ->check(CLI::IsMember({"auto", "always", "off"}));
  cmd->add_option(
         "--inline", args.inlineElementwise,
         "cheap (default): inline temporaries that a few cheap operations compute from the inputs and "
         "that are larger than the private caches, even where read several times; on: also inline "
         "elementwise temporaries whose elements are each read once (paper 001 Alg. 5); off: keep them all")
      ->check(CLI::IsMember({"on", "cheap", "off"}));
  cmd->add_option("--tiles", args.tiles,
                  "tiling policy, e.g. 'S_1: 64@L2/32@L1, 64@L2/32@L1, 16@L1' (or @FILE); see README");
  cmd->add_option(
      "--scheme", args.scheme,
      "implement the program's contraction (O(...) +=! A(...) * B(...)) with this TTILE scheme, "
      "e.g. 'R_k, R_h, R_w, T_{64,c}, U_{4,h}, U_{2,k}, V_k', prefixed with 'TENSOR:' when the "
      "program has several (or @FILE); 'search' (or 'TENSOR: search') measures the best-modelled schemes of "
      "this machine's micro-kernels against the compiler's own code and keeps the fastest (cached); "
      "'auto' (default): the best-modelled scheme, unmeasured, for a 3x3 or 1x1 convolution, "
      "else the compiler's own code; 'none': the compiler's own code; see README");
  cmd->add_option("--scheme-budget", args.schemeBudget,
                  "under --scheme search: schemes measured (default 200)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--scheme-classes", args.schemeClasses,
                  "under --scheme search: the micro-kernel classes it composes from. model (default): this "
                  "machine's table (tessel microbench) as it is, else classes from the register budget "
                  "alone; measure: families of micro-kernels the contraction uses and the table lacks are "
                  "measured first and stored, about 30 s to 2 min once per machine")
      ->check(CLI::IsMember({"measure", "model"}));
  cmd->add_option("--constant-inputs", args.constantInputs,
                  "inputs that keep their values from call to call (weights): 'all' or names, as in 'Wt,B'. "
                  "An input a scheme reads in its own layout (L_X) is then laid out once, untimed, when "
                  "the kernel is timed (run --time, bench, --scheme search); otherwise each timed call "
                  "includes the layout transform");
  cmd->add_option("--hardware", args.hardwareFile,
                  "compile for the machine described in this JSON file (see 'tessel target --json')");
  cmd->add_option("--schedule-time-limit", args.scheduleTimeLimitSeconds,
                  "seconds the scheduler may spend per attempt before it falls back to less fusion, with a "
                  "warning (0: no limit; default 10)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--fusion-check-time-limit", args.fusionCheckTimeLimitSeconds,
                  "seconds basteln's dataflow check may spend per fusion before it refuses that fusion (0: "
                  "no limit; default 30; an operation quota usually stops a check first)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_flag("--explain", args.explain,
                "print the passes' decisions (tile sizes and the model's numbers)");
  cmd->add_flag("--time-passes", args.timePasses, "print each compilation stage's wall time to stderr");
}

driver::CompileOptions compileOptionsFrom(const ProgramArgs& args) {
  driver::CompileOptions o;
  o.fusion = driver::parseFusion(args.fusion);
  if (!args.bastelnRedundancy.empty())
    o.bastelnRedundancy = driver::parsePercent(args.bastelnRedundancy, "--basteln-redundancy");
  if (!args.scheduleFile.empty())
    o.schedule = driver::CompileOptions::ScheduleFile{args.scheduleFile, readTextFile(args.scheduleFile)};
  o.scheduler = driver::parseScheduler(args.scheduler);
  if (args.scheduleConstraintsFile == "auto")
    o.scheduleConstraints = driver::CompileOptions::ConstraintsFile{"auto", "", true};
  else if (!args.scheduleConstraintsFile.empty())
    o.scheduleConstraints = driver::CompileOptions::ConstraintsFile{
        args.scheduleConstraintsFile, readTextFile(args.scheduleConstraintsFile)};
  o.autoTiling = args.tiling == "auto";
  o.vectorize = args.vectorize == "on";
  o.registerTransposes = args.transposes == "registers";
  o.inlineElementwise = args.inlineElementwise == "on";
  o.recomputeCheap = args.inlineElementwise != "off";
  o.promotion = driver::parsePromotion(args.promote);
  o.streamingStores = driver::parseStreamingStores(args.streamStores);
  o.scheduleTimeLimit = std::chrono::milliseconds(static_cast<int64_t>(args.scheduleTimeLimitSeconds * 1000));
  o.fusionCheckTimeLimit =
      std::chrono::milliseconds(static_cast<int64_t>(args.fusionCheckTimeLimitSeconds * 1000));
  if (!args.tiles.empty()) {
    bool fromFile = args.tiles[0] == '@';
    std::string origin = fromFile ? args.tiles.substr(1) : "--tiles";
    o.tiles = tile::parseTilePolicy(fromFile ? readTextFile(origin) : args.tiles, origin);
  }
  if (!args.scheme.empty()) {
    bool fromFile = args.scheme[0] == '@';
    o.scheme.origin = fromFile ? args.scheme.substr(1) : "--scheme";
    o.scheme.text = fromFile ? readTextFile(o.scheme.origin) : args.scheme;
    // A file's trailing newline is not part of the scheme.
    while (!o.scheme.text.empty() && std::isspace(static_cast<unsigned char>(o.scheme.text.back())))
      o.scheme.text.pop_back();
  }
  o.schemeBudget = args.schemeBudget;
  o.schemeClasses = args.schemeClasses == "measure" ? driver::CompileOptions::SchemeClasses::Measure
                                                    : driver::CompileOptions::SchemeClasses::Model;
  if (!args.constantInputs.empty())
    o.constantInputs = driver::parseConstantInputs(args.constantInputs, "--constant-inputs");
  if (!args.hardwareFile.empty())
    o.hardware = target::hardwareFromJson(readTextFile(args.hardwareFile), args.hardwareFile);
  return o;
}

void printDiagnostics(const ProgramArgs& args, const driver::CompiledProgram& compiled) {
  for (const auto& w : compiled.warnings) std::cerr << "tessel: warning: " << w << "\n";
  if (!args.timePasses) return;
  double total = 0;
  for (const auto& [name, seconds] : compiled.passSeconds) total += seconds;
  std::cerr << "tessel: compile stages (wall ms):\n";
  for (const auto& [name, seconds] : compiled.passSeconds)
    std::cerr << "  " << std::left << std::setw(22) << name << std::right << std::fixed
              << std::setprecision(1) << std::setw(9) << seconds * 1e3 << "\n";
  std::cerr << "  " << std::left << std::setw(22) << "total" << std::right << std::setw(9) << total * 1e3
            << "\n"
            << std::defaultfloat;
}

}  // namespace tessel::cli
