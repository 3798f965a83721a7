#include "tune/SchemeSearch.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "backend/CEmitter.h"
#include "driver/SchemeChoice.h"
#include "runtime/CCompiler.h"
#include "runtime/Hash.h"
#include "runtime/Runner.h"
#include "target/DetectHost.h"

namespace tessel::tune {

namespace {

using microkernel::Contraction;

// Bumped when the enumeration or the generated code changes, so that cached
// choices made by an older search are searched again. 2: blocked layouts
// (L_X); 3: initialization folded in; 4: layouts to vectorize; 5: partial
// vectors; 6: schemes parallel on the thread count measured first; 7:
// padded operands, outputs laid out (L_O); 8-11: lambda branches run in
// parallel, vector panels packed under the vector tiles, the cut's ties
// broken by modelled movement, L_O only for rows shorter than two vectors;
// 12: short reduction loops around the register tile kept rolled; 13: the
// families a contraction uses measured before the search.
constexpr int kSearchGeneration = 13;

std::string cachePath(const te::Program& program, const driver::CompileOptions& options,
                      const target::Hardware& host, int threads, const microkernel::MicroKernelTable& table) {
  std::string classes;
  for (const auto& c : table.classes)
    classes += c.family + std::to_string(c.alpha) + "x" + std::to_string(c.betaMin) + "-" +
               std::to_string(c.betaMax) + ";";
  driver::CompileOptions key = options;
  key.scheme.text.clear();
  // Another Tessel may enumerate, model or generate differently: its results are its own.
  std::string text = std::string("tessel ") + TESSEL_VERSION + " search " +
                     std::to_string(kSearchGeneration) + "|" + te::toString(program) + "|" + key.toString() +
                     "|" + host.name + "|" + target::vectorIsa(host) + "|threads=" + std::to_string(threads) +
                     "|" + options.scheme.text + "|" + table.source + ":" + classes;
  return runtime::CCompilerOptions::defaults().cacheDir + "/scheme-" +
         runtime::hexDigest(runtime::fnv1a64(text)) + ".txt";
}

double timeIt(const te::Program& program, const driver::CompileOptions& options,
              const driver::Machine& machine, const SchemeSearchOptions& search) {
  driver::CompiledProgram compiled = driver::compile(program, options, machine);
  runtime::RunOptions ro;
  ro.time = true;
  ro.threads = search.threads;
  ro.minSeconds = search.minSeconds;
  ro.minRuns = 3;
  return runtime::runKernel(compiled.program, compiled.cSource,
                            backend::kernelEntries(
                                compiled.kernel,
                                [&](const std::string& input) { return options.constantInputs.has(input); }),
                            ro)
      .medianMs;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

SchemeSearchResult searchScheme(const te::Program& program, const driver::CompileOptions& options,
                                const driver::Machine& machine, const SchemeSearchOptions& search) {
  const target::Hardware& host = machine.hardware;
  auto [tensor, start] = microkernel::splitSelection(options.scheme.text);
  SchemeSearchResult result;
  // Named: that contraction (an error if it is none). Unnamed: the one with
  // the most work, or none at all, which leaves the compiler's own code.
  std::optional<Contraction> chosen =
      tensor.empty() ? microkernel::largestContraction(program)
                     : microkernel::selectContraction(program, tensor, options.scheme.origin);
  if (!chosen) {
    result.why = "the program has no contraction O(...) +=! A(...) * B(...) for a scheme";
    return result;
  }
  const Contraction& contraction = *chosen;
  std::string prefix = contraction.output.tensor + ": ";
  // The classes come first: a decision made from other classes (the
  // register model's, a table measured again) is not reused.
  std::string tableNote;
  microkernel::MicroKernelTable table;
  // A described machine is measured only if it is this one (tessel bench
  // describes the host it runs on).
  target::Hardware here = target::detectHost();
  bool measurable = here.name == host.name && target::vectorIsa(here) == target::vectorIsa(host);
  if (search.measureMicroKernels && measurable) {
    auto measuring = std::chrono::steady_clock::now();
    table = tableWithFamilies(host, microkernel::familiesFor(contraction), search.microbench,
                              result.familiesMeasured);
    if (!result.familiesMeasured.empty()) {
      std::string families;
      for (const auto& f : result.familiesMeasured) families += (families.empty() ? "" : ", ") + f;
      char line[160];
      std::snprintf(
          line, sizeof line, "measured this machine's micro-kernels of famil%s %s first (%.0f s, once)",
          result.familiesMeasured.size() > 1 ? "ies" : "y", families.c_str(), secondsSince(measuring));
      tableNote = std::string(line) + "; stored in " + defaultTablePath(host);
      if (search.progress) search.progress(tableNote);
    }
  } else {
    table = machine.microKernels;
  }
  std::string path = cachePath(program, options, host, search.threads, table);
  if (search.useCache) {
    std::ifstream in(path);
    std::string line;
    if (in && std::getline(in, line)) {
      result.scheme = line == "none" ? "" : line;
      result.fromCache = true;
      result.why = "search result cached in " + path;
      return result;
    }
  }
  auto started = std::chrono::steady_clock::now();
  std::string classesUsed;
  std::vector<microkernel::SchemeCandidate> ranked =
      microkernel::rankedSchemes(contraction, host, table, result.why, &classesUsed);
  result.enumerated = ranked.size();
  microkernel::preferParallel(ranked, contraction, host, search.threads > 0 ? search.threads : host.cores);
  driver::CompileOptions base = options;
  base.scheme.text.clear();
  if (!ranked.empty()) {
    result.baselineMs = timeIt(program, base, machine, search);
    if (search.progress) search.progress("without a scheme: " + std::to_string(result.baselineMs) + " ms");
    double best = result.baselineMs;
    bool outOfTime = false;
    for (size_t i = 0; i < ranked.size() && static_cast<int>(i) < search.budget; ++i) {
      if (secondsSince(started) > search.timeLimitSeconds) {
        outOfTime = true;
        break;
      }
      driver::CompileOptions o = base;
      o.scheme.text = prefix + ranked[i].scheme;
      ranked[i].measuredMs = timeIt(program, o, machine, search);
      ++result.measured;
      if (search.progress)
        search.progress(ranked[i].scheme + ": " + std::to_string(ranked[i].measuredMs) + " ms");
      if (ranked[i].measuredMs < best) {
        best = ranked[i].measuredMs;
        result.scheme = prefix + ranked[i].scheme;
      }
    }
    result.bestMs = best;
    char line[512];
    std::snprintf(line, sizeof line,
                  "%zu schemes from %s, %zu measured%s in %.0f s: best %.4g ms, %.4g ms without a scheme",
                  result.enumerated, classesUsed.c_str(), result.measured,
                  outOfTime ? " (the time limit stopped the search)" : "", secondsSince(started), best,
                  result.baselineMs);
    result.why = line;
  }
  if (search.useCache) {
    std::ofstream out(path);
    out << (result.scheme.empty() ? "none" : result.scheme) << "\n";
  }
  return result;
}

driver::CompileOptions resolveSchemeSearch(const te::Program& program, driver::CompileOptions options,
                                           const driver::Machine& machine, const SchemeSearchOptions& search,
                                           Remarks& remarks) {
  if (!driver::asksForSearch(options.scheme.text)) return options;
  // Each measurement goes to --explain too, after the verdict.
  Remarks measured;
  SchemeSearchOptions traced = search;
  traced.progress = [&](const std::string& line) {
    if (search.progress) search.progress(line);
    measured.analysis("", "scheme search:   " + line);
  };
  SchemeSearchResult r = searchScheme(program, options, machine, traced);
  Remarks::Values values{{"enumerated", r.enumerated},
                         {"measured", r.measured},
                         {"baseline_ms", r.baselineMs},
                         {"cached", r.fromCache}};
  if (r.scheme.empty()) {
    values.emplace_back("reason", r.why);
    remarks.missed("", "scheme search: " + r.why + "; the compiler's own code is kept", std::move(values));
  } else {
    values.emplace_back("scheme", r.scheme);
    values.emplace_back("best_ms", r.bestMs);
    remarks.applied("", "scheme search: " + r.why + "; chose [" + r.scheme + "]", std::move(values));
  }
  for (const Remark& m : measured.all()) remarks.add(m);  // under the search's name
  options.scheme.text = r.scheme;
  return options;
}

driver::CompileOptions withSearchedScheme(const te::Program& program, const driver::CompileOptions& options,
                                          const driver::Machine& machine, Remarks& remarks) {
  if (!driver::asksForSearch(options.scheme.text)) return options;
  SchemeSearchOptions search;
  search.budget = options.schemeBudget;
  search.threads = options.schemeThreads;
  search.measureMicroKernels = options.schemeClasses == driver::CompileOptions::SchemeClasses::Measure;
  return resolveSchemeSearch(program, options, machine, search, remarks);
}

driver::CompiledProgram compileTuned(const te::Program& program, const driver::CompileOptions& options,
                                     const driver::Machine& machine) {
  Remarks decided;
  decided.setPass(kSchemeSearch);
  driver::CompiledProgram out =
      driver::compile(program, withSearchedScheme(program, options, machine, decided), machine);
  out.remarks.prepend(decided);
  return out;
}

}  // namespace tessel::tune
