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

}  // namespace

RunReport runKernel(const te::Program& program, const std::string& cSource, const std::string& packedEntry,
                    const RunOptions& options) {
  RunReport report;
  auto t0 = Clock::now();
  CompiledObject obj = compileSharedObject(cSource, CCompilerOptions::defaults());
  report.compiledFromCache = obj.fromCache;
  report.compileMs = obj.fromCache ? 0 : msSince(t0);
  KernelLibrary lib(obj.path, packedEntry);
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

  if (options.check) {
    std::map<std::string, double> magnitudes;
    std::map<std::string, Buffer> want = interpret(program, inputs, &magnitudes);
    report.check = "pass";
    size_t i = 0;
    for (const auto* t : program.outputs()) {
      CheckResult r =
          compareBuffers(outputs[i++], want.at(t->name), toleranceFor(program, t->name, magnitudes));
      report.outputs.push_back({t->name, r.pass, r.maxAbsErr, r.message});
      report.maxAbsErr = std::max(report.maxAbsErr, r.maxAbsErr);
      if (!r.pass) report.check = "fail";
    }
  }

  if (options.time) {
    std::vector<double> times;
    auto start = Clock::now();
    while (static_cast<int>(times.size()) < options.minRuns || msSince(start) < options.minSeconds * 1000) {
      auto t = Clock::now();
      requireOk(lib.call(args), program, inputs);
      times.push_back(msSince(t));
      if (times.size() >= 10000) break;
    }
    std::sort(times.begin(), times.end());
    report.runs = static_cast<int>(times.size());
    report.medianMs = times[times.size() / 2];
  }
  return report;
}

}  // namespace tessel::runtime
