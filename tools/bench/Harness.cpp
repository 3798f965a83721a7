#include "bench/Harness.h"

#include <algorithm>
#include <functional>
#include <regex>
#include <set>

#include "abi/KernelAbi.h"
#include "backend/CEmitter.h"
#include "bench/CaseProgram.h"
#include "bench/PeerRegistry.h"
#include "driver/Compile.h"
#include "driver/SchemeChoice.h"
#include "runtime/CCompiler.h"
#include "runtime/Checker.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"
#include "runtime/KernelLibrary.h"
#include "tune/MicroKernelStore.h"
#include "tune/SchemeSearch.h"

namespace tessel::bench {

namespace {

using runtime::Buffer;

// The DRAM bandwidth `threads` threads can draw: one core's sustained
// bandwidth per thread, at most the all-core figure.
double dramBandwidth(const target::Hardware& hw, int threads) {
  const target::MemoryLevel* dram = hw.level("DRAM");
  return dram ? reachableWith(threads, hw.cores, dram->bandwidthPerCoreBytesPerS, dram->bandwidthBytesPerS)
              : 0;
}

std::vector<int> threadCounts(const BenchOptions& o, const target::Hardware& hw) {
  if (!o.threads.empty()) return o.threads;
  std::vector<int> counts = {1};
  if (hw.cores > 1) counts.push_back(hw.cores);
  return counts;
}

// Tessel's kernel for one case, loaded, with its argument buffers.
class TesselKernel {
 public:
  TesselKernel(const te::Program& p, const driver::CompileOptions& options, const driver::Machine& machine,
               const std::vector<Buffer>& inputs, const SuiteCase& c)
      : inputs_(inputs), case_(c) {
    driver::CompiledProgram cp = tune::compileTuned(p, options, machine);
    runtime::CompiledObject obj =
        runtime::compileSharedObject(cp.cSource, runtime::CCompilerOptions::defaults());
    runtime::KernelEntries entries = backend::kernelEntries(
        cp.kernel, [&](const std::string& input) { return options.constantInputs.has(input); });
    library_ = std::make_unique<runtime::KernelLibrary>(obj.path, entries);
    schemes_ = cp.microKernelSchemes;
    for (const auto* t : p.outputs()) outputs_.emplace_back(t->dtype, t->shape);
    for (auto& b : inputs_) args_.push_back(&b);
    for (auto& b : outputs_) args_.push_back(&b);
    // Inputs the kernel reads in its own layout are transformed once, outside
    // the timed region, as the peers' reorders are; the transform is timed apart.
    for (const auto& [input, shape] : entries.preparedBuffers) laidOut_.emplace_back(te::DType::F32, shape);
    prepareArgs_.assign(args_.begin(), args_.begin() + static_cast<long>(inputs_.size()));
    for (auto& b : laidOut_) prepareArgs_.push_back(&b);
    preparedArgs_ = args_;
    for (auto& b : laidOut_) preparedArgs_.push_back(&b);
    if (library_->hasPreparedEntries()) prepare();
  }
  TesselKernel(const TesselKernel&) = delete;  // args_ points into the buffers
  TesselKernel& operator=(const TesselKernel&) = delete;
  void run() {
    check(library_->hasPreparedEntries() ? library_->callPrepared(preparedArgs_) : library_->call(args_));
  }
  void prepare() { check(library_->prepare(prepareArgs_)); }
  // Work done once outside the timed region: the layout transform of the inputs read in the kernel's layout.
  std::vector<std::pair<std::string, std::function<void()>>> sideSteps() {
    if (!library_->hasPreparedEntries()) return {};
    return {{"layout transform", [this] { prepare(); }}};
  }
  void setThreads(int n) const { library_->setThreads(n); }
  const std::vector<Buffer>& outputs() const { return outputs_; }
  const std::vector<std::string>& schemes() const { return schemes_; }

 private:
  void check(int status) const {
    if (status == abi::kKernelBadIndex)
      throw UserError(case_.loc, "case '" + case_.name + "': the kernel read through an out-of-range index",
                      case_.lineText);
    if (status == abi::kKernelOutOfMemory)
      throw UserError(case_.loc,
                      "case '" + case_.name + "': the kernel could not allocate its scratch buffers",
                      case_.lineText);
    if (status != abi::kKernelOk)
      throw InternalError("bench", "kernel returned status " + std::to_string(status));
  }

  std::vector<Buffer> inputs_;
  std::vector<Buffer> outputs_;
  std::vector<Buffer> laidOut_;
  std::vector<Buffer*> args_, prepareArgs_, preparedArgs_;
  std::vector<std::string> schemes_;
  std::unique_ptr<runtime::KernelLibrary> library_;
  const SuiteCase& case_;
};

// Tessel under the --versus options, as a contestant next to the peers.
class TesselVersus final : public PreparedPeer {
 public:
  explicit TesselVersus(std::unique_ptr<TesselKernel> kernel) : kernel_(std::move(kernel)) {}
  void run() override { kernel_->run(); }
  std::vector<runtime::Buffer> outputs() override {
    std::vector<runtime::Buffer> out;
    for (const auto& b : kernel_->outputs()) out.push_back(b.clone());
    return out;
  }
  void setThreads(int threads) const { kernel_->setThreads(threads); }

 private:
  std::unique_ptr<TesselKernel> kernel_;
};

// What every contestant's outputs are compared with: the interpreter's
// outputs when the case is small enough to interpret, else Tessel's.
struct Reference {
  std::vector<Buffer> outputs;
  bool interpreted = false;
  std::map<std::string, double> magnitudes;  // of every tensor, when interpreted (tolerances scale with them)
};

// "" when every output matches; else the first mismatch. An uninterpreted
// reference carries its own error, hence the doubled tolerance.
std::string compareOutputs(const te::Program& p, const std::vector<Buffer>& got, const Reference& ref) {
  auto outs = p.outputs();
  if (got.size() != outs.size())
    return std::to_string(got.size()) + " outputs instead of " + std::to_string(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (got[i].shape() != ref.outputs[i].shape() || got[i].dtype() != ref.outputs[i].dtype())
      return outs[i]->name + ": shape or dtype differs";
    runtime::Tolerance tol = runtime::toleranceFor(p, outs[i]->name, ref.magnitudes);
    if (!ref.interpreted) tol = {2 * tol.abs, 2 * tol.rel};
    runtime::CheckResult r = runtime::compareBuffers(got[i], ref.outputs[i], tol);
    if (!r.pass) return outs[i]->name + ": " + r.message;
  }
  return "";
}

std::set<std::string> familiesOf(const SuiteCase& c) {
  std::set<std::string> names;
  for (const auto& p : c.peers) names.insert(p.family);
  return names;
}

void say(std::ostream* progress, const std::string& line) {
  if (progress) *progress << "bench: " << line << std::endl;
}

// Fills the rates and % of peak from the measured time.
void addRates(CaseResult& r, const target::Hardware& hw) {
  // A run is judged against what its threads can reach, not the whole machine.
  double peakFlops = reachableWith(r.threads, hw.cores, hw.peakF32FlopsPerCore, hw.peakF32Flops);
  double bandwidth = dramBandwidth(hw, r.threads);
  r.peakFlops = peakFlops;
  r.bandwidthBytesPerS = bandwidth;
  r.roofline = classify(r.flops, r.bytes, peakFlops, bandwidth);
  double seconds = r.tesselMs / 1000;
  if (seconds <= 0) return;
  r.gflops = static_cast<double>(r.flops) / seconds / 1e9;
  r.gbps = static_cast<double>(r.bytes) / seconds / 1e9;
  if (r.roofline.bound == Bound::Compute && peakFlops > 0) r.percentOfPeak = 100 * r.gflops * 1e9 / peakFlops;
  if (r.roofline.bound == Bound::Memory && bandwidth > 0) r.percentOfPeak = 100 * r.gbps * 1e9 / bandwidth;
}

class CaseRunner {
 public:
  CaseRunner(const SuiteCase& c, const CaseProgram& cp, const BenchOptions& options,
             const target::Hardware& hw, std::vector<std::unique_ptr<PeerFamily>>& families,
             std::ostream* progress)
      : case_(c),
        program_(cp.program),
        sizes_(cp.sizes),
        options_(options),
        compileOptions_(options.compile),
        hw_(hw),
        machine_(tune::machineFor(hw)),
        families_(families),
        progress_(progress) {}

  std::vector<CaseResult> run() {
    say(progress_, case_.name + ": compiling");
    inputs_ = runtime::makeInputs(program_, options_.seed);
    std::vector<int> counts = threadCounts(options_, hw_);
    // A searched scheme is searched for the thread count it will run on.
    bool perThreadCount = driver::asksForSearch(compileOptions_.scheme.text);
    auto compileFor = [&](int threads) {
      driver::CompileOptions o = compileOptions_;
      o.schemeThreads = threads;
      auto kernel = std::make_unique<TesselKernel>(program_, o, machine_, inputs_, case_);
      kernel->run();
      return kernel;
    };
    std::unique_ptr<TesselKernel> kernel = compileFor(counts.front());
    std::string check = makeReference(*kernel);
    std::vector<CaseResult> results;
    for (size_t i = 0; i < counts.size(); ++i) {
      if (i > 0 && perThreadCount) {
        say(progress_, case_.name + ": compiling for " + std::to_string(counts[i]) + " thread(s)");
        kernel = compileFor(counts[i]);
        // An interpreted reference is compared with every run below; Tessel's own only here.
        std::string mismatch =
            reference_.interpreted ? "" : compareOutputs(program_, kernel->outputs(), reference_);
        if (!mismatch.empty() && check.rfind("FAIL", 0) != 0)
          check = "FAIL (kernel for " + std::to_string(counts[i]) + " threads): " + mismatch;
      }
      results.push_back(runWithThreads(*kernel, counts[i], check));
    }
    return results;
  }

 private:
  std::string makeReference(TesselKernel& kernel) {
    int64_t points = domainPoints(program_);
    if (points > options_.checkLimit) {
      reference_.outputs.clear();
      for (const auto& b : kernel.outputs()) reference_.outputs.push_back(b.clone());
      reference_.interpreted = false;
      return "unchecked (" + std::to_string(points) + " points > --check-limit)";
    }
    say(progress_, case_.name + ": checking against the interpreter");
    std::map<std::string, Buffer> want =
        runtime::interpret(program_, runtime::inputsByName(program_, inputs_), &reference_.magnitudes);
    for (const auto* t : program_.outputs()) reference_.outputs.push_back(want.at(t->name));
    reference_.interpreted = true;
    std::string mismatch = compareOutputs(program_, kernel.outputs(), reference_);
    return mismatch.empty() ? "pass" : "FAIL: " + mismatch;
  }

  // A peer prepared for this thread count and checked, or its failure.
  struct PeerSlot {
    PeerResult result;
    std::unique_ptr<PreparedPeer> prepared;
  };

  PeerSlot preparePeer(const SuitePeer& peer) {
    PeerSlot slot;
    slot.result.peer = peer.qualified();
    PeerFamily* family = findFamily(families_, peer.family);
    if (!family || !family->available()) {
      slot.result.status = PeerStatus::Unavailable;
      slot.result.message = peer.family + " is not built into this tessel, or cannot run on this machine";
      return slot;
    }
    try {
      slot.prepared = family->prepare(peer.op, program_, inputs_);
      slot.prepared->run();
      std::string mismatch = compareOutputs(program_, slot.prepared->outputs(), reference_);
      slot.result.notes = slot.prepared->notes;
      if (!mismatch.empty()) {
        slot.result.status = reference_.interpreted ? PeerStatus::Wrong : PeerStatus::Differs;
        slot.result.message = mismatch;
        slot.prepared.reset();
      }
    } catch (const PeerError& e) {
      slot.result.status = PeerStatus::Unsupported;
      slot.result.message = e.what();
      slot.prepared.reset();
    }
    return slot;
  }

  PeerSlot prepareVersus(int threads) {
    PeerSlot slot;
    slot.result.peer = "tessel[" + options_.versus->text + "]";
    driver::CompileOptions o = options_.versus->compile;
    o.schemeThreads = threads;
    auto versus =
        std::make_unique<TesselVersus>(std::make_unique<TesselKernel>(program_, o, machine_, inputs_, case_));
    versus->setThreads(threads);
    versus->run();
    std::string mismatch = compareOutputs(program_, versus->outputs(), reference_);
    if (!mismatch.empty()) {
      slot.result.status = reference_.interpreted ? PeerStatus::Wrong : PeerStatus::Differs;
      slot.result.message = mismatch;
      return slot;
    }
    slot.prepared = std::move(versus);
    return slot;
  }

  CaseResult runWithThreads(TesselKernel& kernel, int threads, const std::string& check) {
    CaseResult r;
    r.name = case_.name;
    r.program = case_.program;
    r.sizes = sizes_;
    r.sweep = case_.sweep;
    r.sweepX = case_.sweepX;
    r.threads = threads;
    r.flops = countFlops(program_);
    r.bytes = compulsoryBytes(program_);
    r.check = check;
    kernel.setThreads(threads);
    for (const auto& name : familiesOf(case_))
      if (PeerFamily* f = findFamily(families_, name); f && f->available()) f->setThreads(threads);

    // Prepared after the thread count is set: libraries size their blocking by it.
    std::vector<PeerSlot> slots;
    for (const auto& peer : case_.peers) slots.push_back(preparePeer(peer));
    if (options_.versus) slots.push_back(prepareVersus(threads));
    // Tessel's result may depend on the thread count too.
    kernel.run();
    if (reference_.interpreted && r.check == "pass") {
      std::string mismatch = compareOutputs(program_, kernel.outputs(), reference_);
      if (!mismatch.empty()) r.check = "FAIL (" + std::to_string(threads) + " threads): " + mismatch;
    }

    std::vector<std::function<void()>> contestants = {[&kernel] { kernel.run(); }};
    std::vector<size_t> timedSlots;
    for (size_t i = 0; i < slots.size(); ++i) {
      if (!slots[i].prepared) continue;
      PreparedPeer* peer = slots[i].prepared.get();
      contestants.push_back([peer] { peer->run(); });
      timedSlots.push_back(i);
    }
    say(progress_, case_.name + ": timing with " + std::to_string(threads) + " thread(s), " +
                       std::to_string(contestants.size()) + " contestant(s)");
    std::vector<Timing> timings = timeRoundRobin(contestants, options_.timing);
    r.tesselMs = timings[0].medianMs;
    r.runs = timings[0].runs;
    for (size_t j = 0; j < timedSlots.size(); ++j) {
      PeerSlot& slot = slots[timedSlots[j]];
      slot.result.medianMs = timings[j + 1].medianMs;
      slot.result.runs = timings[j + 1].runs;
      slot.result.ratio = r.tesselMs > 0 ? slot.result.medianMs / r.tesselMs : 0;
      timeSideSteps(*slot.prepared, slot.result);
    }
    for (auto& [name, step] : kernel.sideSteps()) r.tesselSideMs.emplace_back(name, timeSideStep(step));
    r.tesselSchemes = kernel.schemes();
    for (auto& slot : slots) r.peers.push_back(std::move(slot.result));
    addRates(r, hw_);
    return r;
  }

  void timeSideSteps(PreparedPeer& peer, PeerResult& result) {
    for (const SideStep& step : peer.sideSteps())
      result.sideMs.emplace_back(step.name, timeSideStep(step.run));
  }

  // Median ms of a step outside the timed region, timed briefly.
  double timeSideStep(const std::function<void()>& step) const {
    TimingOptions quick = options_.timing;
    quick.minRuns = std::min(quick.minRuns, 3);
    quick.minSeconds = std::min(quick.minSeconds, 0.1);
    return timeRoundRobin({step}, quick)[0].medianMs;
  }

  const SuiteCase& case_;
  const te::Program& program_;
  const std::map<std::string, int64_t>& sizes_;
  const BenchOptions& options_;
  driver::CompileOptions compileOptions_;
  const target::Hardware& hw_;
  // Tessel's kernels are built for the machine the results are judged against.
  driver::Machine machine_;
  std::vector<std::unique_ptr<PeerFamily>>& families_;
  std::ostream* progress_;
  std::vector<Buffer> inputs_;
  Reference reference_;
};

}  // namespace

const char* peerStatusName(PeerStatus s) {
  switch (s) {
    case PeerStatus::Ok:
      return "ok";
    case PeerStatus::Wrong:
      return "WRONG";
    case PeerStatus::Differs:
      return "DIFFERS";
    case PeerStatus::Unsupported:
      return "unsupported";
    case PeerStatus::Unavailable:
      return "unavailable";
  }
  return "?";
}

MachineSummary summarize(const target::Hardware& hw,
                         const std::vector<std::unique_ptr<PeerFamily>>& families) {
  MachineSummary m;
  m.name = hw.name;
  m.cores = hw.cores;
  m.peakF32FlopsPerCore = hw.peakF32FlopsPerCore;
  m.peakF32Flops = hw.peakF32Flops;
  m.peakSource = hw.peakSource;
  if (const target::MemoryLevel* dram = hw.level("DRAM")) {
    m.dramBytesPerS = dram->bandwidthBytesPerS;
    m.dramBytesPerSPerCore = dram->bandwidthPerCoreBytesPerS;
    m.dramSource = dram->bandwidthSource;
  }
  for (const auto& f : families)
    m.peers.emplace_back(f->name(), f->available() ? f->version() : "unavailable");
  return m;
}

namespace {

// Every selected case is loaded first, so a mistake stops the run before any timing.
std::vector<std::pair<const SuiteCase*, CaseProgram>> loadSelected(const Suite& suite,
                                                                   const std::string& pattern) {
  std::regex filter;
  try {
    filter = std::regex(pattern.empty() ? ".*" : pattern);
  } catch (const std::regex_error& e) {
    userError("bad --filter '" + pattern + "': " + e.what());
  }
  std::vector<std::pair<const SuiteCase*, CaseProgram>> cases;
  for (const auto& c : suite.cases)
    if (std::regex_search(c.name, filter)) cases.emplace_back(&c, loadCaseProgram(c));
  return cases;
}

}  // namespace

std::vector<CaseSummary> listCases(const Suite& suite, const std::string& filter) {
  std::vector<CaseSummary> out;
  for (const auto& [spec, program] : loadSelected(suite, filter)) {
    CaseSummary s{spec->name,
                  spec->program,
                  program.sizes,
                  countFlops(program.program),
                  compulsoryBytes(program.program),
                  {}};
    for (const auto& p : spec->peers) s.peers.push_back(p.qualified());
    out.push_back(std::move(s));
  }
  return out;
}

BenchReport runBench(const Suite& suite, const BenchOptions& options, const target::Hardware& hw,
                     std::vector<std::unique_ptr<PeerFamily>>& families,
                     const std::function<void(const CaseResult&)>& onResult, std::ostream* progress) {
  for (int t : threadCounts(options, hw))
    if (t < 1) userError("bad thread count " + std::to_string(t) + ": at least 1");
  auto cases = loadSelected(suite, options.filter);

  BenchReport report;
  report.suite = suite.file;
  report.machine = summarize(hw, families);
  for (const auto& [spec, program] : cases) {
    CaseRunner runner(*spec, program, options, hw, families, progress);
    for (CaseResult& r : runner.run()) {
      if (onResult) onResult(r);
      report.results.push_back(std::move(r));
    }
  }
  return report;
}

}  // namespace tessel::bench
