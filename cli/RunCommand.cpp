#include <iostream>
#include <nlohmann/json.hpp>

#include "Commands.h"
#include "ProgramOptions.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "runtime/Runner.h"
#include "target/DetectHost.h"
#include "tune/SchemeSearch.h"

namespace tessel::cli {

namespace {

struct RunArgs {
  ProgramArgs program;
  bool check = false;
  bool time = false;
  bool json = false;
  int threads = 0;
  uint64_t seed = 1;
};

int runCommand(const RunArgs& a) {
  front::LoadedProgram lp = front::loadProgram(a.program.spec);
  driver::CompileOptions options = compileOptionsFrom(a.program);
  options.schemeThreads = a.threads;  // a scheme search times kernels as they will run
  driver::CompiledProgram cp = tune::compileTuned(lp.program, options, machineFrom(a.program));
  printDiagnostics(a.program, cp);
  printExplanation(a.program, cp, std::cerr);
  runtime::RunOptions ro;
  ro.check = a.check;
  ro.time = a.time;
  // By default the CPUs this process may use, quota included, which OpenMP's default (the
  // affinity mask) does not know.
  ro.threads = a.threads > 0 ? a.threads : target::availableCores();
  ro.seed = a.seed;
  runtime::RunReport r = runtime::runKernel(
      cp.program, cp.cSource,
      backend::kernelEntries(cp.kernel,
                             [&](const std::string& input) { return options.constantInputs.has(input); }),
      ro);

  if (a.json) {
    nlohmann::json j;
    j["kernel"] = cp.kernel.name;
    j["file"] = a.program.spec.file;
    j["sizes"] = lp.sizes;
    j["fusion"] = driver::fusionName(options.fusion);
    j["threads"] = a.threads;
    j["check"] = r.check;
    j["max_abs_err"] = r.maxAbsErr;
    j["median_ms"] = a.time ? nlohmann::json(r.medianMs) : nlohmann::json(nullptr);
    j["runs"] = r.runs;
    if (!r.preparedInputs.empty()) {
      j["prepared_inputs"] = r.preparedInputs;
      j["prepare_ms"] = a.time ? nlohmann::json(r.prepareMs) : nlohmann::json(nullptr);
    }
    j["compiled_from_cache"] = r.compiledFromCache;
    nlohmann::json outs = nlohmann::json::array();
    for (const auto& o : r.outputs)
      outs.push_back(
          {{"tensor", o.tensor}, {"pass", o.pass}, {"max_abs_err", o.maxAbsErr}, {"message", o.message}});
    j["outputs"] = outs;
    std::cout << j.dump() << "\n";
  } else {
    std::cout << cp.kernel.name << ": compiled" << (r.compiledFromCache ? " (cached)" : "") << "\n";
    for (const auto& o : r.outputs)
      std::cout << "  check " << o.tensor << ": " << (o.pass ? "pass" : "FAIL") << " (max abs err "
                << o.maxAbsErr << ")" << (o.message.empty() ? "" : "  " + o.message) << "\n";
    if (a.time)
      std::cout << "  median " << r.medianMs << " ms over " << r.runs << " runs"
                << (a.threads ? " (" + std::to_string(a.threads) + " threads)" : "") << "\n";
    if (a.time && !r.preparedInputs.empty()) {
      std::string names;
      for (const auto& n : r.preparedInputs) names += (names.empty() ? "" : ", ") + n;
      std::cout << "  with " << names << " already in the kernel's layout; that layout transform takes "
                << r.prepareMs << " ms, once per new value\n";
    }
  }
  return r.check == "fail" ? 1 : 0;
}

}  // namespace

CommandRunner addRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd =
      app.add_subcommand("run", "Compile a .tc program, run it on random inputs, check and time it");
  addProgramOptions(cmd, args->program);
  cmd->add_flag("--check", args->check,
                "compare every output with the reference interpreter (exit 1 on mismatch)");
  cmd->add_flag("--time", args->time, "report the median time of several runs");
  cmd->add_option("--threads", args->threads,
                  "OpenMP threads (default: the CPUs this process may use: its affinity mask, no more than "
                  "its cgroup CPU quota)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", args->seed, "seed of the random inputs");
  cmd->add_flag("--json", args->json, "print one JSON object (check, max_abs_err, median_ms, runs, ...)");
  return [args] { return runCommand(*args); };
}

}  // namespace tessel::cli
