#include "runtime/Runner.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "abi/KernelAbi.h"
#include "runtime/CCompiler.h"
#include "runtime/Checker.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"
#include "runtime/KernelLibrary.h"

namespace tessel::runtime {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A bad unproven index: the kernel only reports a status, so replay the
// program in the interpreter, which names the read, the stage and the point.
[[noreturn]] void reportBadIndex(const te::Program& program, const std::map<std::string, Buffer>& inputs) {
  interpret(program, inputs);
  userError("the kernel read through an index that was out of range");
}

void requireOk(int status, const te::Program& program, const std::map<std::string, Buffer>& inputs) {
  if (status == abi::kKernelBadIndex) reportBadIndex(program, inputs);
  if (status == abi::kKernelOutOfMemory) userError("the kernel could not allocate its scratch buffers");
  if (status != abi::kKernelOk)
    throw InternalError("run", "kernel returned status " + std::to_string(status));
}

// Median time of `call` over at least `minRuns` runs and `minSeconds`.
template <typename Call>
double medianTime(const RunOptions& options, int& runs, Call call) {
  std::vector<double> times;
  auto start = Clock::now();
  while (static_cast<int>(times.size()) < options.minRuns || msSince(start) < options.minSeconds * 1000) {
    auto t = Clock::now();
    call();
    times.push_back(msSince(t));
    if (times.size() >= 10000) break;
  }
  std::sort(times.begin(), times.end());
  runs = static_cast<int>(times.size());
  return times[times.size() / 2];
}

}  // namespace

RunReport runKernel(const te::Program& program, const std::string& cSource, const std::string& packedEntry,
                    const RunOptions& options) {
  KernelEntries entries;
  entries.whole = packedEntry;
  return runKernel(program, cSource, entries, options);
}

RunReport runKernel(const te::Program& program, const std::string& cSource, const KernelEntries& entries,
                    const RunOptions& options) {
  RunReport report;
  auto t0 = Clock::now();
  CompiledObject obj = compileSharedObject(cSource, CCompilerOptions::defaults());
  report.compiledFromCache = obj.fromCache;
  report.compileMs = obj.fromCache ? 0 : msSince(t0);
  KernelLibrary lib(obj.path, entries);
  lib.setThreads(options.threads);

  std::vector<Buffer> inputList = makeInputs(program, options.seed);
  // The same storage by name, for the interpreter (Buffer copies share it).
  std::map<std::string, Buffer> inputs = inputsByName(program, inputList);
  std::vector<Buffer> outputs;
  std::vector<Buffer*> args;
  for (auto& b : inputList) args.push_back(&b);
  for (const auto* t : program.outputs()) outputs.emplace_back(t->dtype, t->shape);
  for (auto& b : outputs) args.push_back(&b);

  requireOk(lib.call(args), program, inputs);

  // A kernel that reads some inputs in its own layout also has the prepare
  // and prepared entries: inputs laid out once (as weights would be), then
  // the kernel proper. They are checked and timed too.
  std::vector<Buffer> laidOut, preparedOutputs;
  std::vector<Buffer*> prepareArgs, preparedArgs;
  if (lib.hasPreparedEntries()) {
    for (const auto& [input, shape] : entries.preparedBuffers) {
      laidOut.emplace_back(te::DType::F32, shape);
      report.preparedInputs.push_back(input);
    }
    for (const auto* t : program.outputs()) preparedOutputs.emplace_back(t->dtype, t->shape);
    prepareArgs.assign(args.begin(), args.begin() + static_cast<long>(inputList.size()));
    for (auto& b : laidOut) prepareArgs.push_back(&b);
    preparedArgs = prepareArgs;
    preparedArgs.erase(preparedArgs.begin() + static_cast<long>(inputList.size()), preparedArgs.end());
    for (auto& b : preparedOutputs) preparedArgs.push_back(&b);
    for (auto& b : laidOut) preparedArgs.push_back(&b);
    requireOk(lib.prepare(prepareArgs), program, inputs);
    requireOk(lib.callPrepared(preparedArgs), program, inputs);
  }

  if (options.check) {
    std::map<std::string, double> magnitudes;
    std::map<std::string, Buffer> want = interpret(program, inputs, &magnitudes);
    report.check = "pass";
    auto compare = [&](const std::vector<Buffer>& got, const std::string& suffix) {
      size_t i = 0;
      for (const auto* t : program.outputs()) {
        CheckResult r =
            compareBuffers(got[i++], want.at(t->name), toleranceFor(program, t->name, magnitudes));
        report.outputs.push_back({t->name + suffix, r.pass, r.maxAbsErr, r.message});
        report.maxAbsErr = std::max(report.maxAbsErr, r.maxAbsErr);
        if (!r.pass) report.check = "fail";
      }
    };
    compare(outputs, "");
    if (lib.hasPreparedEntries()) compare(preparedOutputs, " (prepared entry)");
  }

  if (options.time && lib.hasPreparedEntries()) {
    int prepareRuns = 0;
    RunOptions quick = options;
    quick.minRuns = std::min(options.minRuns, 3);
    quick.minSeconds = std::min(options.minSeconds, 0.1);
    report.prepareMs =
        medianTime(quick, prepareRuns, [&] { requireOk(lib.prepare(prepareArgs), program, inputs); });
    report.medianMs =
        medianTime(options, report.runs, [&] { requireOk(lib.callPrepared(preparedArgs), program, inputs); });
  } else if (options.time) {
    report.medianMs = medianTime(options, report.runs, [&] { requireOk(lib.call(args), program, inputs); });
  }
  return report;
}

}  // namespace tessel::runtime
