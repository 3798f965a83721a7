// `tessel bench`: for each case of a suite and each thread count, compiles the
// program with Tessel, checks it against the interpreter, checks each peer's
// result against the same reference (a peer that differs is WRONG and never
// timed), then times Tessel and the peers round-robin and reports medians,
// rates, % of the machine's peak and peer/Tessel ratios.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "bench/Metrics.h"
#include "bench/Peer.h"
#include "bench/Suite.h"
#include "bench/Timing.h"
#include "driver/Options.h"
#include "target/Hardware.h"

namespace tessel::bench {

struct BenchOptions {
  std::string filter;        // regular expression searched in case names; "" = every case
  std::vector<int> threads;  // empty = 1 and all cores
  TimingOptions timing;
  driver::CompileOptions compile;  // its `hardware` is replaced by the machine runBench is given
  // Tessel again under other options, timed side by side with the peers as
  // the contestant "tessel[TEXT]" (a scheduler or fusion strategy against
  // another in one run). TEXT is as --options gives it.
  struct Versus {
    std::string text;
    driver::CompileOptions compile;
  };
  std::optional<Versus> versus;
  // Cases whose statement instances exceed this are not interpreted (it
  // would take minutes): Tessel and the peers are then compared with each
  // other only. About 3e7 instances per second.
  int64_t checkLimit = 300'000'000;
  uint64_t seed = 1;
};

enum class PeerStatus {
  Ok,       // matched the reference, timed
  Wrong,    // differs from the interpreter's result: the suite maps the case to the wrong operator, or a bug
  Differs,  // differs from Tessel's result when the case was too large to interpret
  Unsupported,  // the operator cannot compute this program (PeerError), or the library refused it
  Unavailable,  // Tessel was built without the library
};
const char* peerStatusName(PeerStatus s);  // "ok", "WRONG", "DIFFERS", "unsupported", "unavailable"

struct PeerResult {
  std::string peer;  // "onednn.matmul"
  PeerStatus status = PeerStatus::Ok;
  std::string message;  // why, when not ok
  double medianMs = 0;
  int runs = 0;
  double ratio = 0;  // peer time / Tessel time (> 1: Tessel is faster); ok only
  std::vector<std::pair<std::string, double>> sideMs;  // work outside the timed region, median ms
  std::vector<std::string> notes;
};

struct CaseResult {
  std::string name;
  std::string program;
  std::map<std::string, int64_t> sizes;
  std::string sweep;  // the suite's sweep=FAMILY:X, "" = none
  int64_t sweepX = 0;
  int threads = 1;
  int64_t flops = 0;
  int64_t bytes = 0;
  Roofline roofline;
  std::string check;  // "pass", "FAIL: ...", or "unchecked (...)"
  double tesselMs = 0;
  int runs = 0;
  std::vector<std::pair<std::string, double>>
      tesselSideMs;                        // Tessel's work outside the timed region, median ms
  std::vector<std::string> tesselSchemes;  // the TTILE schemes of Tessel's kernel ("O: R_n, ...")
  double gflops = 0;                       // GFLOP/s
  double gbps = 0;                         // GB/s of compulsory traffic
  std::optional<double> percentOfPeak;  // of the FLOP peak (compute-bound) or DRAM bandwidth (memory-bound)
  // What this run's threads can reach, which % of peak is of: per core x
  // threads, at most the whole machine's; 0 = unknown.
  double peakFlops = 0;
  double bandwidthBytesPerS = 0;
  std::vector<PeerResult> peers;
};

struct MachineSummary {
  std::string name;
  int cores = 1;
  double peakF32FlopsPerCore = 0;
  double peakF32Flops = 0;  // all cores; 0 = unknown
  std::string peakSource;
  double dramBytesPerS = 0;         // all cores; 0 = unknown
  double dramBytesPerSPerCore = 0;  // one core alone; 0 = unknown
  std::string dramSource;
  std::vector<std::pair<std::string, std::string>> peers;  // family -> version, or "unavailable"
};

struct BenchReport {
  std::string suite;
  MachineSummary machine;
  std::vector<CaseResult> results;
};

// Runs every case matching the filter. Cases are loaded and checked for
// mistakes (UserError at the suite line) before anything is timed.
// `onResult` sees each result as soon as it is measured; `progress` (may be
// null) gets one line per step.
BenchReport runBench(const Suite& suite, const BenchOptions& options, const target::Hardware& hw,
                     std::vector<std::unique_ptr<PeerFamily>>& families,
                     const std::function<void(const CaseResult&)>& onResult, std::ostream* progress);

// The cases matching `filter`, loaded and checked as runBench would, with
// their costs: what `tessel bench --list` prints.
struct CaseSummary {
  std::string name;
  std::string program;
  std::map<std::string, int64_t> sizes;
  int64_t flops = 0;
  int64_t bytes = 0;
  std::vector<std::string> peers;
};
std::vector<CaseSummary> listCases(const Suite& suite, const std::string& filter);

// The machine's peaks as the report states them.
MachineSummary summarize(const target::Hardware& hw,
                         const std::vector<std::unique_ptr<PeerFamily>>& families);

}  // namespace tessel::bench
