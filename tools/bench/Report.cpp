#include "bench/Report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tessel/error.h"

namespace tessel::bench {

namespace {

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Milliseconds with about four significant digits.
std::string ms(double v) {
  if (v >= 100) return format("%.1f", v);
  if (v >= 1) return format("%.3f", v);
  return format("%.4f", v);
}

std::string rate(const CaseResult& r) {
  return r.roofline.bound == Bound::Compute ? format("%.1f GFLOP/s", r.gflops) : format("%.2f GB/s", r.gbps);
}

std::string percent(const CaseResult& r) {
  return r.percentOfPeak ? format("%.1f%%", *r.percentOfPeak) : "n/a";
}

std::string shortCheck(const std::string& check) {
  if (check == "pass") return "pass";
  if (check.rfind("FAIL", 0) == 0) return "FAIL";
  return "unchecked";
}

// Table cells: padded to their column, and never touching the next one.
std::string pad(std::string s, size_t width) {
  if (s.size() + 1 < width) s.append(width - s.size() - 1, ' ');
  return s + " ";
}

std::string padLeft(const std::string& s, size_t width) {
  return s.size() + 1 < width ? std::string(width - s.size(), ' ') + s : " " + s;
}

std::string gbps(double bytesPerS) { return format("%.1f GB/s", bytesPerS / 1e9); }

std::string peerTime(const PeerResult& p) {
  return p.status == PeerStatus::Ok ? ms(p.medianMs) : std::string(peerStatusName(p.status));
}

std::string peerRatio(const PeerResult& p) {
  if (p.status != PeerStatus::Ok) return "";
  return format(p.ratio < 100 ? "%.2f" : "%.0f", p.ratio);
}

constexpr size_t kCaseWidth = 24;

}  // namespace

void TablePrinter::header(const std::string& suite, const MachineSummary& m) {
  os_ << "suite: " << suite << "\n";
  os_ << "machine: " << (m.name.empty() ? "unknown CPU" : m.name) << ", " << m.cores << " core(s); fp32 peak "
      << (m.peakF32FlopsPerCore > 0 ? format("%.1f GFLOP/s per core", m.peakF32FlopsPerCore / 1e9)
                                    : "unknown")
      << (m.peakSource.empty() ? "" : " (" + m.peakSource + ")") << "; DRAM "
      << (m.dramBytesPerS > 0
              ? gbps(m.dramBytesPerS) +
                    (m.dramBytesPerSPerCore > 0 ? ", " + gbps(m.dramBytesPerSPerCore) + " per core"
                                                : std::string()) +
                    (m.dramSource.empty() ? "" : " (" + m.dramSource + ")")
              : "bandwidth unknown (--measure measures it)")
      << "\n";
  for (const auto& [family, version] : m.peers) os_ << "peer " << family << ": " << version << "\n";
  os_ << "ratio = peer ms / Tessel ms (> 1: Tessel is faster); %peak: of the fp32 FLOP peak (compute-bound) "
         "or of the DRAM bandwidth (memory-bound) the threads used can reach\n\n";
  os_ << pad("case", kCaseWidth) << padLeft("thr", 4) << "  " << pad("bound", 8) << pad("check", 10)
      << padLeft("tessel ms", 10) << padLeft("rate", 16) << padLeft("%peak", 8) << "   " << pad("peer", 28)
      << padLeft("peer ms", 12) << padLeft("ratio", 7) << "\n";
}

void TablePrinter::row(const CaseResult& r) {
  std::string left = pad(r.name, kCaseWidth) + padLeft(std::to_string(r.threads), 4) + "  " +
                     pad(boundName(r.roofline.bound), 8) + pad(shortCheck(r.check), 10) +
                     padLeft(ms(r.tesselMs), 10) + padLeft(rate(r), 16) + padLeft(percent(r), 8);
  std::string blank(left.size(), ' ');
  if (r.peers.empty()) os_ << left << "\n";
  for (size_t i = 0; i < r.peers.size(); ++i) {
    const PeerResult& p = r.peers[i];
    os_ << (i == 0 ? left : blank) << "   " << pad(p.peer, 28) << padLeft(peerTime(p), 12)
        << padLeft(peerRatio(p), 7) << "\n";
  }
  // Details under the row: figures every time, explanations once per case.
  bool firstTime = notedCases_.insert(r.name).second;
  if (firstTime && r.check != "pass") os_ << "      tessel: " << r.check << "\n";
  std::string tesselSide;
  for (const auto& [name, t] : r.tesselSideMs)
    tesselSide += (tesselSide.empty() ? "" : ", ") + name + " " + ms(t) + " ms";
  if (!tesselSide.empty()) os_ << "      tessel: outside the timed region: " << tesselSide << "\n";
  for (const auto& scheme : r.tesselSchemes) os_ << "      tessel: scheme " << scheme << "\n";
  for (const PeerResult& p : r.peers) {
    std::string side;
    for (const auto& [name, t] : p.sideMs) side += (side.empty() ? "" : ", ") + name + " " + ms(t) + " ms";
    if (!side.empty()) os_ << "      " << p.peer << ": outside the timed region: " << side << "\n";
    if (!firstTime) continue;
    if (!p.message.empty()) os_ << "      " << p.peer << ": " << p.message << "\n";
    for (const auto& n : p.notes) os_ << "      " << p.peer << ": " << n << "\n";
  }
  os_.flush();
}

std::map<std::string, std::map<int, std::pair<double, int>>> geomeanRatios(const BenchReport& report) {
  std::map<std::string, std::map<int, std::pair<double, int>>> sums;  // sum of logs, count
  for (const CaseResult& r : report.results)
    for (const PeerResult& p : r.peers) {
      if (p.status != PeerStatus::Ok || p.ratio <= 0) continue;
      auto& [logSum, n] = sums[p.peer.substr(0, p.peer.find('.'))][r.threads];
      logSum += std::log(p.ratio);
      ++n;
    }
  for (auto& [family, byThreads] : sums)
    for (auto& [threads, entry] : byThreads) entry.first = std::exp(entry.first / entry.second);
  return sums;
}

std::optional<double> SweepSummary::slowestFrom64Fraction() const {
  if (!fastest || !slowestFrom64 || fastest->value <= 0) return std::nullopt;
  return slowestFrom64->value / fastest->value;
}

namespace {

// A FAIL's speed says nothing, and without a time or FLOPs there is no rate.
bool tesselCounts(const CaseResult& r) {
  return r.check.rfind("FAIL", 0) != 0 && r.tesselMs > 0 && r.gflops > 0;
}

// Tessel's GFLOP/s over the fastest timed peer's: the lowest peer ms / Tessel
// ms. --versus's contestant is Tessel itself, not a peer.
std::optional<double> ratioToBestPeer(const CaseResult& r) {
  std::optional<double> lowest;
  for (const PeerResult& p : r.peers) {
    if (p.status != PeerStatus::Ok || p.ratio <= 0 || p.peer.rfind("tessel[", 0) == 0) continue;
    if (!lowest || p.ratio < *lowest) lowest = p.ratio;
  }
  return lowest;
}

// Keeps the point with the higher (`higher`) or lower value; the first of equals.
void keep(std::optional<SweepPoint>& kept, SweepPoint candidate, bool higher) {
  if (!kept || (higher ? candidate.value > kept->value : candidate.value < kept->value)) kept = candidate;
}

void addToSweep(SweepSummary& s, const CaseResult& r) {
  if (!tesselCounts(r)) return;
  ++s.cases;
  keep(s.fastest, {r.sweepX, r.gflops}, true);
  if (r.sweepX >= kSmallSweepX) {
    keep(s.slowestFrom64, {r.sweepX, r.gflops}, false);
  } else if (std::optional<double> ratio = ratioToBestPeer(r)) {
    keep(s.lowestPeerRatioBelow64, {r.sweepX, *ratio}, false);
  }
}

// "  mm_k256     1 thr: 88 case(s); fastest X=512 185.3 GFLOP/s; slowest from 64 up: ..."
std::string sweepLine(const SweepSummary& s) {
  std::string line = "  " + pad(s.family, 14) + " " + std::to_string(s.threads) + " thr: ";
  if (s.cases == 0) return line + "no case with a Tessel result that counts (timed, not FAIL)";
  line += std::to_string(s.cases) + " case(s); fastest X=" + std::to_string(s.fastest->x) + " " +
          format("%.1f GFLOP/s", s.fastest->value);
  if (s.slowestFrom64)
    line += "; slowest from " + std::to_string(kSmallSweepX) +
            " up: X=" + std::to_string(s.slowestFrom64->x) + " " +
            format("%.1f GFLOP/s", s.slowestFrom64->value) + ", " +
            format("%.2f", *s.slowestFrom64Fraction()) + " of the fastest";
  if (s.lowestPeerRatioBelow64)
    line += "; below " + std::to_string(kSmallSweepX) + ": lowest vs the best peer " +
            format("%.2f", s.lowestPeerRatioBelow64->value) +
            " at X=" + std::to_string(s.lowestPeerRatioBelow64->x);
  return line;
}

}  // namespace

std::vector<SweepSummary> sweepSummaries(const BenchReport& report) {
  std::map<std::pair<std::string, int>, SweepSummary> byFamily;
  for (const CaseResult& r : report.results) {
    if (r.sweep.empty()) continue;
    SweepSummary& s = byFamily[{r.sweep, r.threads}];
    s.family = r.sweep;
    s.threads = r.threads;
    addToSweep(s, r);
  }
  std::vector<SweepSummary> out;
  for (auto& [key, s] : byFamily) out.push_back(std::move(s));
  return out;
}

void TablePrinter::summary(const BenchReport& report) {
  auto means = geomeanRatios(report);
  os_ << "\ngeomean of peer ms / Tessel ms (> 1: Tessel is faster)\n";
  if (means.empty()) os_ << "  (no peer was timed)\n";
  for (const auto& [family, byThreads] : means) {
    os_ << "  " << pad(family, 10);
    for (const auto& [threads, entry] : byThreads)
      os_ << "  " << threads << " thr: " << format("%.2f", entry.first) << " over " << entry.second
          << " case(s)";
    os_ << "\n";
  }
  int wrong = 0;
  for (const CaseResult& r : report.results)
    for (const PeerResult& p : r.peers)
      wrong += p.status == PeerStatus::Wrong || p.status == PeerStatus::Differs;
  if (wrong)
    os_ << "  " << wrong << " peer result(s) differ from the reference and were not timed (WRONG/DIFFERS)\n";
  std::vector<SweepSummary> sweeps = sweepSummaries(report);
  if (sweeps.empty()) return;
  os_ << "\nsweeps (Tessel GFLOP/s per family)\n";
  for (const SweepSummary& s : sweeps) os_ << sweepLine(s) << "\n";
}

namespace {

std::ofstream openForWriting(const std::string& path) {
  std::ofstream f(path);
  if (!f) userError("cannot write '" + path + "'");
  return f;
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string number(double v) { return format("%.6g", v); }

// The last two CSV columns, sweep and sweep_x: empty for a case in no sweep.
std::string sweepFields(const CaseResult& r) {
  return r.sweep.empty() ? "," : csvField(r.sweep) + "," + std::to_string(r.sweepX);
}

nlohmann::json sweepsJson(const BenchReport& report) {
  nlohmann::json out = nlohmann::json::array();
  for (const SweepSummary& s : sweepSummaries(report)) {
    nlohmann::json j = {{"family", s.family}, {"threads", s.threads}, {"cases", s.cases}};
    if (s.fastest) {
      j["fastest_x"] = s.fastest->x;
      j["fastest_gflops"] = s.fastest->value;
    }
    if (s.slowestFrom64) {
      j["slowest_from_64_x"] = s.slowestFrom64->x;
      j["slowest_from_64_gflops"] = s.slowestFrom64->value;
      j["slowest_from_64_fraction"] = *s.slowestFrom64Fraction();
    }
    if (s.lowestPeerRatioBelow64) {
      j["lowest_peer_ratio_below_64"] = s.lowestPeerRatioBelow64->value;
      j["lowest_peer_ratio_below_64_x"] = s.lowestPeerRatioBelow64->x;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

void writeCsv(const std::string& path, const BenchReport& report) {
  std::ofstream f = openForWriting(path);
  f << "case,threads,contestant,status,median_ms,runs,ratio,gflops,gbps,bound,percent_of_peak,check,flops,"
       "bytes,intensity,message,sweep,sweep_x\n";
  for (const CaseResult& r : report.results) {
    std::string shared = csvField(r.name) + "," + std::to_string(r.threads) + ",";
    f << shared << "tessel,ok," << number(r.tesselMs) << "," << r.runs << ",1," << number(r.gflops) << ","
      << number(r.gbps) << "," << boundName(r.roofline.bound) << ","
      << (r.percentOfPeak ? number(*r.percentOfPeak) : "") << "," << csvField(r.check) << "," << r.flops
      << "," << r.bytes << "," << number(r.roofline.intensity) << ",," << sweepFields(r) << "\n";
    for (const PeerResult& p : r.peers) {
      bool ok = p.status == PeerStatus::Ok && p.medianMs > 0;
      double seconds = p.medianMs / 1000;
      f << shared << csvField(p.peer) << "," << peerStatusName(p.status) << ","
        << (ok ? number(p.medianMs) : "") << "," << p.runs << "," << (ok ? number(p.ratio) : "") << ","
        << (ok ? number(static_cast<double>(r.flops) / seconds / 1e9) : "") << ","
        << (ok ? number(static_cast<double>(r.bytes) / seconds / 1e9) : "") << ","
        << boundName(r.roofline.bound) << ",,," << r.flops << "," << r.bytes << ","
        << number(r.roofline.intensity) << "," << csvField(p.message) << "," << sweepFields(r) << "\n";
    }
  }
  if (!f) userError("cannot write '" + path + "'");
}

void writeJson(const std::string& path, const BenchReport& report) {
  nlohmann::json j;
  j["suite"] = report.suite;
  const MachineSummary& m = report.machine;
  nlohmann::json peers = nlohmann::json::object();
  for (const auto& [family, version] : m.peers) peers[family] = version;
  j["machine"] = {
      {"name", m.name},
      {"cores", m.cores},
      {"peak_f32_flops_per_core", m.peakF32FlopsPerCore},
      {"peak_f32_flops", m.peakF32Flops > 0 ? nlohmann::json(m.peakF32Flops) : nlohmann::json()},
      {"peak_source", m.peakSource},
      {"dram_bytes_per_s", m.dramBytesPerS > 0 ? nlohmann::json(m.dramBytesPerS) : nlohmann::json()},
      {"dram_bytes_per_s_per_core",
       m.dramBytesPerSPerCore > 0 ? nlohmann::json(m.dramBytesPerSPerCore) : nlohmann::json()},
      {"dram_source", m.dramSource},
      {"peers", peers}};
  nlohmann::json results = nlohmann::json::array();
  for (const CaseResult& r : report.results) {
    nlohmann::json peerList = nlohmann::json::array();
    for (const PeerResult& p : r.peers) {
      nlohmann::json side = nlohmann::json::object();
      for (const auto& [name, t] : p.sideMs) side[name] = t;
      bool ok = p.status == PeerStatus::Ok;
      peerList.push_back({{"peer", p.peer},
                          {"status", peerStatusName(p.status)},
                          {"message", p.message},
                          {"median_ms", ok ? nlohmann::json(p.medianMs) : nlohmann::json()},
                          {"runs", p.runs},
                          {"ratio", ok ? nlohmann::json(p.ratio) : nlohmann::json()},
                          {"outside_timed_region_ms", side},
                          {"notes", p.notes}});
    }
    nlohmann::json tesselSide = nlohmann::json::object();
    for (const auto& [name, t] : r.tesselSideMs) tesselSide[name] = t;
    nlohmann::json result = {
        {"case", r.name},
        {"program", r.program},
        {"sizes", r.sizes},
        {"threads", r.threads},
        {"flops", r.flops},
        {"bytes", r.bytes},
        {"bound", boundName(r.roofline.bound)},
        {"intensity", r.roofline.intensity},
        {"balance", r.roofline.balance},
        {"balance_assumed", r.roofline.balanceAssumed},
        // What percent_of_peak is of: the figures these threads can reach.
        {"peak_flops", r.peakFlops > 0 ? nlohmann::json(r.peakFlops) : nlohmann::json()},
        {"dram_bytes_per_s",
         r.bandwidthBytesPerS > 0 ? nlohmann::json(r.bandwidthBytesPerS) : nlohmann::json()},
        {"check", r.check},
        {"tessel",
         {{"median_ms", r.tesselMs},
          {"runs", r.runs},
          {"gflops", r.gflops},
          {"gbps", r.gbps},
          {"percent_of_peak", r.percentOfPeak ? nlohmann::json(*r.percentOfPeak) : nlohmann::json()},
          {"outside_timed_region_ms", tesselSide},
          {"schemes", r.tesselSchemes}}},
        {"peers", peerList}};
    if (!r.sweep.empty()) {
      result["sweep"] = r.sweep;
      result["sweep_x"] = r.sweepX;
    }
    results.push_back(std::move(result));
  }
  j["results"] = results;
  nlohmann::json means = nlohmann::json::object();
  for (const auto& [family, byThreads] : geomeanRatios(report))
    for (const auto& [threads, entry] : byThreads)
      means[family][std::to_string(threads)] = {{"ratio", entry.first}, {"cases", entry.second}};
  j["geomean_ratio"] = means;
  j["sweeps"] = sweepsJson(report);
  std::ofstream f = openForWriting(path);
  f << j.dump(2) << "\n";
  if (!f) userError("cannot write '" + path + "'");
}

}  // namespace tessel::bench
