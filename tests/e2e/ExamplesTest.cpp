// Every example, at its default sizes and at the awkward shapes listed in
// example_shapes.txt (1, 7, 13, 127, primes), compiled with every fusion
// strategy, with small tiles forced on two levels, and with Tessel's own
// scheduler (which must not fall back to isl's), and checked against the
// reference interpreter. The benchmarks' sub-graphs and image pipelines
// (bench/programs, listed there by path) run at their listed shapes only
// (their defaults are benchmark-sized), also under basteln with small tiles
// and with tiny caches (fusion tiles), so producers are recomputed in partial
// and overlapping tiles.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/Compile.h"
#include "../support/RunTool.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "front/Frontend.h"
#include "runtime/Runner.h"
#include "target/DetectHost.h"
#include "tile/TilePolicy.h"

namespace tessel::testing {
namespace {

struct ExampleCase {
  std::string file;                      // relative to the repository
  std::map<std::string, int64_t> sizes;  // overrides of the file's defaults
  driver::Fusion fusion;
  std::string label;
  std::string tiles;  // a tiling policy forced on every statement ("" = Auto Tiling)
  double redundancy = driver::CompileOptions{}.bastelnRedundancy;
  bool tinyCaches = false;  // caches so small that even these shapes get Auto Tiling's and basteln's tiles
  driver::CompileOptions::Scheduler scheduler = driver::CompileOptions::Scheduler::Isl;
};

// Small tiles that leave partial tiles at every awkward size, on two levels.
constexpr const char* kSmallTiles = "*: 4@L2/3@L1, 5@L2/2@L1, 3@L1, 2@L1, 3@L1, 2@L1";

// Keeps ctest's test names short (the default prints the bytes).
void PrintTo(const ExampleCase& c, std::ostream* os) { *os << c.label; }

std::map<std::string, int64_t> parseSizes(const std::string& text) {
  std::map<std::string, int64_t> sizes;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq != std::string::npos) sizes[word.substr(0, eq)] = std::stoll(word.substr(eq + 1));
  }
  return sizes;
}

std::string caseLabel(const std::string& file, const std::map<std::string, int64_t>& sizes,
                      const std::string& variant) {
  std::string label = std::filesystem::path(file).stem().string();
  for (const auto& [n, v] : sizes) label += "_" + n + std::to_string(v);
  label += "_" + variant;
  for (auto& c : label)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return label;
}

// example_shapes.txt: `file.tc: A=1 B=7 ...` per line (a file in examples/,
// or a repository path); `#` comments.
std::vector<ExampleCase> allCases() {
  std::vector<std::pair<std::string, std::map<std::string, int64_t>>> shapes;
  for (const auto& entry : std::filesystem::directory_iterator(sourcePath("examples")))
    if (entry.path().extension() == ".tc")
      shapes.push_back({"examples/" + entry.path().filename().string(), {}});
  std::istringstream lines(readText(sourcePath("tests/e2e/example_shapes.txt")));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string file = line.substr(0, colon);
    if (file.find('/') == std::string::npos) file = "examples/" + file;
    shapes.push_back({file, parseSizes(line.substr(colon + 1))});
  }
  std::sort(shapes.begin(), shapes.end());
  std::vector<ExampleCase> cases;
  for (const auto& [file, sizes] : shapes) {
    for (auto f : {driver::Fusion::None, driver::Fusion::Min, driver::Fusion::Smart, driver::Fusion::Max,
                   driver::Fusion::Basteln})
      cases.push_back({file, sizes, f, caseLabel(file, sizes, driver::fusionName(f)), ""});
    cases.push_back({file, sizes, driver::Fusion::Smart, caseLabel(file, sizes, "small_tiles"), kSmallTiles});
    // Tessel's own scheduler, its schedule checked against the dependences by the compiler.
    cases.push_back({file, sizes, driver::Fusion::Smart, caseLabel(file, sizes, "tessel_scheduler"), "",
                     driver::CompileOptions{}.bastelnRedundancy, false,
                     driver::CompileOptions::Scheduler::Tessel});
    // 100%: every producer the tiles can take is recomputed, however small the tiles.
    if (file.rfind("examples/", 0) != 0) {
      cases.push_back({file, sizes, driver::Fusion::Basteln, caseLabel(file, sizes, "basteln_small_tiles"),
                       kSmallTiles, 1.0});
      cases.push_back({file, sizes, driver::Fusion::Basteln, caseLabel(file, sizes, "basteln_tiny_caches"),
                       "", 1.0, true});
      cases.push_back({file, sizes, driver::Fusion::Basteln,
                       caseLabel(file, sizes, "basteln_tessel_scheduler"), "", 1.0, true,
                       driver::CompileOptions::Scheduler::Tessel});
    }
  }
  return cases;
}

class Examples : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(Examples, MatchesInterpreter) {
  const ExampleCase& c = GetParam();
  front::Source src{c.file, readText(sourcePath(c.file))};
  auto module = front::parse(src);
  auto sizes = front::defaultSizes(src);
  for (const auto& [n, v] : c.sizes) sizes[n] = v;
  te::Program program = front::lower(*module, "", sizes);
  driver::CompileOptions options;
  options.fusion = c.fusion;
  options.bastelnRedundancy = c.redundancy;
  options.scheduler = c.scheduler;
  if (!c.tiles.empty()) options.tiles = tile::parseTilePolicy(c.tiles, "test");
  std::optional<target::Hardware> machine;
  if (c.tinyCaches) machine = target::withCaches(target::detectHost(), 4096, 16384, 2);
  driver::CompiledProgram cp = testing::compileFor(program, options, machine);
  for (const auto& w : cp.warnings) EXPECT_EQ(w.find("Tessel's scheduler"), std::string::npos) << w;
  runtime::RunOptions ro;
  ro.check = true;
  ro.threads = c.tiles.empty() && !c.tinyCaches ? 0 : 2;
  runtime::RunReport r = runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
  for (const auto& o : r.outputs) EXPECT_TRUE(o.pass) << o.tensor << ": " << o.message;
  EXPECT_EQ(r.check, "pass");
}

INSTANTIATE_TEST_SUITE_P(All, Examples, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<ExampleCase>& i) { return i.param.label; });

}  // namespace
}  // namespace tessel::testing
