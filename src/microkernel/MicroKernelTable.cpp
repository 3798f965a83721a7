#include "microkernel/MicroKernelTable.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "support/JsonText.h"
#include "tessel/error.h"

namespace tessel::microkernel {

namespace {

using Json = nlohmann::ordered_json;

// Independent FMAs that hide the FMA latency: two ports, four cycles each.
constexpr int kMinIndependentFmas = 8;
constexpr int kMaxBeta = 15;

}  // namespace

const std::vector<MicroKernelFamily>& microKernelFamilies() {
  static const std::vector<MicroKernelFamily> families = {
      {"A", false, false}, {"B", false, true}, {"C", true, false}, {"D", true, true}};
  return families;
}

const MicroKernelFamily* microKernelFamily(const std::string& name) {
  for (const auto& f : microKernelFamilies())
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<MicroKernelClass> classesFrom(const std::vector<MeasuredMicroKernel>& kernels, double threshold) {
  std::map<std::string, double> best;
  for (const auto& k : kernels) best[k.family] = std::max(best[k.family], k.gflops);
  // family -> alpha -> beta -> share of the family's best
  std::map<std::string, std::map<int, std::map<int, double>>> good;
  for (const auto& k : kernels)
    if (best[k.family] > 0 && k.gflops >= threshold * best[k.family])
      good[k.family][k.alpha][k.beta] = k.gflops / best[k.family];
  std::vector<MicroKernelClass> classes;
  for (const auto& [family, alphas] : good)
    for (const auto& [alpha, betas] : alphas) {
      MicroKernelClass c{family, alpha, 0, 0, 0};
      for (const auto& [beta, share] : betas) {
        if (c.betaMax > 0 && beta != c.betaMax + 1) {
          classes.push_back(c);
          c = {family, alpha, 0, 0, 0};
        }
        if (c.betaMin == 0) c.betaMin = beta;
        c.betaMax = beta;
        c.bestShare = std::max(c.bestShare, share);
      }
      classes.push_back(c);
    }
  return classes;
}

MicroKernelTable modelledTable(const VectorIsa& isa) {
  MicroKernelTable t;
  t.isa = isa.name;
  t.source = "register model";
  for (const auto& f : microKernelFamilies())
    for (int alpha = 1; alpha <= isa.registers; ++alpha) {
      MicroKernelClass c{f.name, alpha, 0, 0, 1};
      for (int beta = 1; beta <= kMaxBeta; ++beta) {
        // Window families' shared streamed values (BoundScheme's registerNeeds)
        // are not counted here: binding a scheme rejects the tiles they overflow.
        int kept = std::min(alpha, beta);
        bool fits = alpha * beta + kept + streamedRegisters(isa, kept) <= isa.registers;
        if (!fits || alpha * beta < kMinIndependentFmas) continue;
        if (c.betaMin == 0) c.betaMin = beta;
        c.betaMax = beta;
      }
      if (c.betaMin > 0) t.classes.push_back(c);
    }
  return t;
}

std::string toJson(const MicroKernelTable& t) {
  Json j;
  j["machine"] = t.machine;
  j["isa"] = t.isa;
  j["source"] = t.source;
  j["kernels"] = Json::array();
  for (const auto& k : t.kernels)
    j["kernels"].push_back({{"family", k.family},
                            {"alpha", k.alpha},
                            {"beta", k.beta},
                            {"gflops", k.gflops},
                            {"peakShare", k.peakShare}});
  j["classes"] = Json::array();
  for (const auto& c : t.classes)
    j["classes"].push_back({{"family", c.family},
                            {"alpha", c.alpha},
                            {"betaMin", c.betaMin},
                            {"betaMax", c.betaMax},
                            {"bestShare", c.bestShare}});
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

MicroKernelTable tableFromJson(const std::string& text, const std::string& origin) {
  Json j = parseJsonText(text, origin);
  auto fail = [&](const std::string& what) {
    userError(SourceLoc{origin, 0, 0}, "bad micro-kernel table: " + what);
  };
  auto field = [&](const Json& object, const char* name, const char* where) -> const Json& {
    if (!object.is_object() || !object.contains(name)) fail(std::string(where) + " has no \"" + name + "\"");
    return object[name];
  };
  auto integer = [&](const Json& object, const char* name, const char* where) {
    const Json& v = field(object, name, where);
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1024)
      fail(std::string(where) + ": \"" + name + "\" is not an integer from 1 to 1024");
    return v.get<int>();
  };
  auto family = [&](const Json& object, const char* where) {
    const Json& v = field(object, "family", where);
    if (!v.is_string() || !microKernelFamily(v.get<std::string>()))
      fail(std::string(where) + ": \"family\" is not one of A, B, C, D");
    return v.get<std::string>();
  };
  MicroKernelTable t;
  for (const char* name : {"machine", "isa", "source"}) {
    const Json& v = field(j, name, "the table");
    if (!v.is_string()) fail(std::string("\"") + name + "\" is not a string");
  }
  t.machine = j["machine"].get<std::string>();
  t.isa = j["isa"].get<std::string>();
  t.source = j["source"].get<std::string>();
  const Json& kernels = field(j, "kernels", "the table");
  const Json& classes = field(j, "classes", "the table");
  if (!kernels.is_array() || !classes.is_array()) fail("\"kernels\" and \"classes\" must be arrays");
  for (const auto& k : kernels) {
    MeasuredMicroKernel m{family(k, "a kernel"), integer(k, "alpha", "a kernel"),
                          integer(k, "beta", "a kernel"), 0, 0};
    if (!field(k, "gflops", "a kernel").is_number()) fail("a kernel's \"gflops\" is not a number");
    m.gflops = k["gflops"].get<double>();
    if (k.contains("peakShare") && k["peakShare"].is_number()) m.peakShare = k["peakShare"].get<double>();
    t.kernels.push_back(m);
  }
  for (const auto& c : classes) {
    MicroKernelClass m{family(c, "a class"), integer(c, "alpha", "a class"), integer(c, "betaMin", "a class"),
                       integer(c, "betaMax", "a class"), 1};
    if (m.betaMax < m.betaMin) fail("a class has betaMax < betaMin");
    if (c.contains("bestShare") && c["bestShare"].is_number()) m.bestShare = c["bestShare"].get<double>();
    t.classes.push_back(m);
  }
  return t;
}

MicroKernelTable mergedTable(const MicroKernelTable& stored, const MicroKernelTable& fresh) {
  std::set<std::string> remeasured;
  for (const auto& k : fresh.kernels) remeasured.insert(k.family);
  MicroKernelTable merged = fresh;
  for (const auto& k : stored.kernels)
    if (!remeasured.count(k.family)) merged.kernels.push_back(k);
  for (const auto& c : stored.classes)
    if (!remeasured.count(c.family)) merged.classes.push_back(c);
  return merged;
}

std::vector<std::string> unmeasuredFamilies(const MicroKernelTable& table,
                                            const std::vector<std::string>& wanted) {
  std::vector<std::string> missing;
  for (const auto& family : wanted)
    if (std::none_of(table.kernels.begin(), table.kernels.end(),
                     [&](const MeasuredMicroKernel& k) { return k.family == family; }))
      missing.push_back(family);
  return missing;
}

}  // namespace tessel::microkernel
