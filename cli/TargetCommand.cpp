// tessel target: the hardware description Tessel plans for — this machine's,
// detected (and optionally measured), or one read from a JSON file.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "Commands.h"
#include "target/DetectHost.h"
#include "target/HardwareJson.h"
#include "target/MeasureHost.h"
#include "tessel/error.h"

namespace tessel::cli {

namespace {

struct TargetArgs {
  bool print = false;
  bool json = false;
  bool measure = false;
  std::string loadFile;
};

std::string formatBytes(int64_t bytes) {
  if (bytes == 0) return "unbounded";
  char buf[32];
  if (bytes >= (int64_t{1} << 30) && bytes % (int64_t{1} << 30) == 0)
    std::snprintf(buf, sizeof buf, "%lld GiB", static_cast<long long>(bytes >> 30));
  else if (bytes >= (1 << 20) && bytes % (1 << 20) == 0)
    std::snprintf(buf, sizeof buf, "%lld MiB", static_cast<long long>(bytes >> 20));
  else if (bytes >= (1 << 10) && bytes % (1 << 10) == 0)
    std::snprintf(buf, sizeof buf, "%lld KiB", static_cast<long long>(bytes >> 10));
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

std::string formatRate(double perSecond, const char* unit) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", perSecond / 1e9, unit);
  return buf;
}

std::string padded(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

std::string summary(const target::Hardware& hw) {
  std::ostringstream out;
  out << hw.name << " (" << hw.kind << ")\n";
  out << "  isa:       " << (hw.isa.empty() ? "-" : joined(hw.isa)) << "\n";
  out << "  cores:     " << hw.cores << "\n";
  char freq[32];
  std::snprintf(freq, sizeof freq, "%.2f GHz", hw.frequencyHz / 1e9);
  out << "  frequency: " << (hw.frequencyHz > 0 ? freq : "unknown") << "\n";
  out << "  memory (fastest first; bandwidth per instance, for all its sharers, and for one core alone):\n";
  for (const target::MemoryLevel& m : hw.memory) {
    std::string bandwidth = m.bandwidthBytesPerS > 0 ? formatRate(m.bandwidthBytesPerS, "GB/s") : "unknown";
    if (m.bandwidthPerCoreBytesPerS > 0)
      bandwidth += ", one core " + formatRate(m.bandwidthPerCoreBytesPerS, "GB/s");
    if ((m.bandwidthBytesPerS > 0 || m.bandwidthPerCoreBytesPerS > 0) && !m.bandwidthSource.empty())
      bandwidth += " (" + m.bandwidthSource + ")";
    out << "    " << padded(m.name, 6) << padded(formatBytes(m.capacityBytes), 11)
        << padded("line " + std::to_string(m.lineBytes), 10)
        << padded("shared by " + std::to_string(m.sharedBy), 13) << padded("bandwidth " + bandwidth + " ", 32)
        << (m.managed ? "managed, " : "") << "source: " << (m.source.empty() ? "-" : m.source) << "\n";
  }
  out << "  units (best first):\n";
  for (const target::ComputeUnit& u : hw.units) {
    std::string width = u.matrix ? std::to_string(u.vectorBits / 8) + "-byte tiles"
                                 : (u.vectorBits > 0 ? std::to_string(u.vectorBits) + " bits" : "scalar");
    out << "    " << padded(u.name, 8) << padded(width, 17)
        << padded(std::to_string(u.registers) + " registers", 14)
        << padded(std::to_string(u.fmaPerCycle) + " FMA/cycle", 13) << joined(u.dtypes) << "\n";
  }
  out << "  peak f32:  " << formatRate(hw.peakF32FlopsPerCore, "GFLOP/s") << " per core, "
      << formatRate(hw.peakF32Flops, "GFLOP/s") << " on " << hw.cores << " cores"
      << (hw.peakSource.empty() ? "" : " (" + hw.peakSource + ")") << "\n";
  return out.str();
}

target::Hardware loadDescription(const std::string& path) {
  std::ifstream f(path);
  if (!f) userError("cannot read '" + path + "'");
  std::ostringstream text;
  text << f.rdbuf();
  return target::hardwareFromJson(text.str(), path);
}

int targetCommand(const TargetArgs& a) {
  target::Hardware hw = a.loadFile.empty() ? target::detectHost() : loadDescription(a.loadFile);
  if (a.measure) {
    std::cerr << "measuring the FMA peak and the L2 and DRAM bandwidths (a few seconds)...\n";
    target::measureHost(hw, &std::cerr);
  }
  if (a.json)
    std::cout << target::toJson(hw) << "\n";
  else
    std::cout << summary(hw);
  return 0;
}

}  // namespace

CommandRunner addTargetCommand(CLI::App& app) {
  auto args = std::make_shared<TargetArgs>();
  CLI::App* cmd = app.add_subcommand(
      "target",
      "Describe the hardware Tessel compiles for: this machine (detected, or measured) or a JSON file");
  auto* print = cmd->add_flag("--print", args->print, "print a readable summary (the default)");
  auto* json = cmd->add_flag("--json", args->json, "print the description as JSON (the format --load reads)");
  print->excludes(json);
  auto* measure = cmd->add_flag("--measure", args->measure,
                                "measure the FMA peak and the L2 and DRAM bandwidths first (a few seconds)");
  auto* load =
      cmd->add_option("--load", args->loadFile, "read a description from a JSON file instead of detecting");
  measure->excludes(load);
  return [args] { return targetCommand(*args); };
}

}  // namespace tessel::cli
