#include "fuzz/Fuzzer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>

namespace tessel::fuzz {

uint64_t programSeed(uint64_t seed, int index) {
  // splitmix64 of (seed, index): well-spread, stable across platforms.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(index) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {

bool stillFails(const ProgramModel& m, const Combination& c, Verdict verdict, int timeoutSeconds) {
  auto results = checkProgram(render(m), {c}, timeoutSeconds);
  return std::any_of(results.begin(), results.end(),
                     [&](const ComboResult& r) { return r.verdict == verdict; });
}

// Drops statement `k`, the tensors only it defined, and keeps one output.
ProgramModel withoutStatement(const ProgramModel& m, size_t k) {
  ProgramModel out = m;
  out.statements.erase(out.statements.begin() + static_cast<long>(k));
  std::vector<int> remap(out.tensors.size(), -1);
  std::vector<TensorModel> kept;
  for (size_t t = 0; t < out.tensors.size(); ++t) {
    bool defined = out.tensors[t].input ||
                   std::any_of(out.statements.begin(), out.statements.end(),
                               [&](const StatementModel& s) { return s.target == static_cast<int>(t); });
    if (!defined) continue;
    remap[t] = static_cast<int>(kept.size());
    kept.push_back(out.tensors[t]);
  }
  out.tensors = kept;
  for (auto& s : out.statements) s.target = remap[static_cast<size_t>(s.target)];
  bool anyOutput =
      std::any_of(out.tensors.begin(), out.tensors.end(), [](const TensorModel& t) { return t.output; });
  if (!anyOutput && !out.statements.empty())
    out.tensors[static_cast<size_t>(out.statements.back().target)].output = true;
  return out;
}

std::string regressionTest(const Failure& f, const std::string& program) {
  std::ostringstream os;
  os << "// Found by tessel fuzz (program seed " << f.programSeed << "): " << verdictName(f.result.verdict)
     << " under " << f.result.combination << ".\n"
     << "TEST(FuzzRegression, Seed" << f.programSeed << ") {\n"
     << "  expectMatchesInterpreter(R\"TC(" << program << ")TC\", \"" << f.result.combination << "\");\n}\n";
  return os.str();
}

}  // namespace

ProgramModel minimize(const ProgramModel& program, const Combination& combination, Verdict verdict,
                      int timeoutSeconds) {
  ProgramModel best = program;
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t k = best.statements.size(); k-- > 0 && best.statements.size() > 1;) {
      ProgramModel candidate = withoutStatement(best, k);
      if (stillFails(candidate, combination, verdict, timeoutSeconds)) {
        best = candidate;
        progress = true;
      }
    }
    for (auto& size : best.sizes) {
      for (int64_t v : {1, 2, 3, 5, 7}) {
        if (v >= size.value) break;
        ProgramModel candidate = best;
        for (auto& s : candidate.sizes)
          if (s.name == size.name) s.value = v;
        if (stillFails(candidate, combination, verdict, timeoutSeconds)) {
          size.value = v;
          progress = true;
          break;
        }
      }
    }
  }
  return best;
}

FuzzReport runFuzz(const FuzzOptions& options, std::ostream& progress) {
  FuzzReport report;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<Combination> matrix = optionMatrix();
  // Up to `jobs` programs are checked at once; their results are taken in
  // program order, so a run reports the same whatever the job count. A
  // finished check waiting behind a slower one does not hold a job, so one
  // slow program does not idle the other cores; a few are kept waiting at most.
  constexpr int kWaitingChecksPerJob = 4;
  const int jobs = std::max(options.jobs, 1);
  std::map<int, std::unique_ptr<ProgramCheck>> running;
  int started = 0;
  auto busy = [&] {
    int n = 0;
    for (auto& entry : running)
      if (!entry.second->poll(0)) ++n;
    return n;
  };
  auto startMore = [&] {
    while (static_cast<int>(running.size()) < kWaitingChecksPerJob * jobs && busy() < jobs &&
           started < options.count && !(options.timeBudget > 0 && elapsed() > options.timeBudget)) {
      std::string text = render(generateProgram(programSeed(options.seed, options.first + started)));
      running[started] = std::make_unique<ProgramCheck>(text, matrix, options.timeoutSeconds);
      ++started;
    }
  };
  startMore();
  for (int i = 0; i < options.count && running.count(i); ++i) {
    // Wait for program i, reading from every running child meanwhile.
    while (!running.at(i)->poll(0)) {
      for (auto& [index, check] : running) check->poll(index == i ? 20 : 0);
      startMore();
    }
    auto results = running.at(i)->results();
    running.erase(i);
    startMore();
    uint64_t seed = programSeed(options.seed, options.first + i);
    ProgramModel model = generateProgram(seed);
    std::string text = render(model);
    ++report.programs;
    report.programSeeds.push_back(seed);
    for (const auto& r : results) {
      ++report.combinations;
      ++report.counts[r.verdict];
      if (r.verdict == Verdict::Rejected && report.rejections.size() < 5)
        report.rejections.push_back(r.detail);
      if (!isFailure(r.verdict)) continue;
      Failure f;
      f.programSeed = seed;
      f.result = r;
      f.program = text;
      Combination failing = matrix.front();
      for (const auto& c : matrix)
        if (c.label == r.combination) failing = c;
      f.minimized = options.minimize && r.verdict != Verdict::Hang
                        ? render(minimize(model, failing, r.verdict, options.timeoutSeconds))
                        : text;
      f.regressionTest = regressionTest(f, f.minimized);
      progress << "FAIL " << verdictName(r.verdict) << " (program seed " << seed << ", " << r.combination
               << "): " << r.detail << "\n"
               << f.regressionTest << std::flush;
      report.failures.push_back(f);
      break;  // one failure per program is enough to report
    }
    if ((i + 1) % 25 == 0)
      progress << "  " << (i + 1) << " programs (to index " << options.first + i << "), " << elapsed()
               << " s\n"
               << std::flush;
  }
  report.seconds = elapsed();
  return report;
}

std::string summarize(const FuzzReport& report, const FuzzOptions& options) {
  auto count = [&](Verdict v) {
    auto it = report.counts.find(v);
    return it == report.counts.end() ? 0 : it->second;
  };
  std::ostringstream os;
  os << "tessel fuzz: seed " << options.seed << ", " << report.programs << " programs (indices "
     << options.first << ".." << options.first + report.programs - 1 << "), " << report.combinations
     << " option combinations run in " << report.seconds << " s\n"
     << "  passed " << count(Verdict::Pass) << ", mismatches " << count(Verdict::Mismatch) << ", crashes "
     << count(Verdict::Crash) << ", hangs " << count(Verdict::Hang) << ", internal errors "
     << count(Verdict::InternalError) << ", kernel errors " << count(Verdict::KernelError) << ", rejections "
     << count(Verdict::Rejected) << "\n";
  for (const auto& r : report.rejections) os << "  rejected: " << r << "\n";
  for (const auto& f : report.failures)
    os << "\nFAILURE " << verdictName(f.result.verdict) << " under " << f.result.combination << ": "
       << f.result.detail << "\nminimized reproducer:\n"
       << f.regressionTest;
  return os.str();
}

}  // namespace tessel::fuzz
