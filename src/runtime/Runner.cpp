#include "runtime/Runner.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <random>

#include "abi/KernelAbi.h"
#include "runtime/CCompiler.h"
#include "runtime/Checker.h"
#include "runtime/Interpreter.h"
#include "runtime/KernelLibrary.h"

namespace tessel::runtime {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Inputs read directly as an index of another tensor (LUT(I(b, n), r)) get
// values inside that dimension, so random test inputs exercise the kernel
// instead of its out-of-range error path.
void collectIndexExtents(const te::Expr& e, const te::Program& p, std::map<std::string, int64_t>& extents) {
  if (e->kind == te::ExprKind::Access) {
    const te::TensorDecl& t = p.tensor(e->name);
    for (size_t d = 0; d < e->operands.size(); ++d) {
      const te::ExprNode* idx = e->operands[d].get();
      while (idx->kind == te::ExprKind::Cast) idx = idx->operands[0].get();
      if (idx->kind != te::ExprKind::Access) continue;
      auto [it, fresh] = extents.try_emplace(idx->name, t.shape[d]);
      if (!fresh) it->second = std::min(it->second, t.shape[d]);
    }
  }
  for (const auto& o : e->operands) collectIndexExtents(o, p, extents);
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

  std::mt19937_64 rng(options.seed);
  std::map<std::string, Buffer> inputs;
  std::vector<Buffer> outputs;
  std::vector<Buffer*> args;
  std::map<std::string, int64_t> indexExtents;
  for (const auto& s : program.stages) collectIndexExtents(s.rhs, program, indexExtents);
  for (const auto* t : program.inputs()) {
    Buffer b(t->dtype, t->shape);
    auto ext = indexExtents.find(t->name);
    if (ext != indexExtents.end() && t->dtype != te::DType::Bool) {
      b.randomizeIndices(rng, ext->second);
    } else {
      b.randomize(rng);
    }
    inputs.emplace(t->name, b);
  }
  for (const auto* t : program.inputs()) args.push_back(&inputs.at(t->name));
  for (const auto* t : program.outputs()) outputs.emplace_back(t->dtype, t->shape);
  for (auto& b : outputs) args.push_back(&b);

  requireOk(lib.call(args), program, inputs);

  if (options.check) {
    std::map<std::string, Buffer> want = interpret(program, inputs);
    report.check = "pass";
    size_t i = 0;
    for (const auto* t : program.outputs()) {
      CheckResult r = compareBuffers(outputs[i++], want.at(t->name), toleranceFor(program, t->name));
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
