// Every program from TC's documentation that Tessel accepts (tests/tc_docs;
// the rejected ones and their messages are in tests/front/TcDocsTest.cpp)
// compiles and matches the reference interpreter, for every def in the file.
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

namespace tessel::testing {
namespace {

struct DocCase {
  std::string file;
  std::string entry;
};
void PrintTo(const DocCase& c, std::ostream* os) { *os << c.file << ":" << c.entry; }

std::vector<DocCase> acceptedDefs() {
  std::vector<DocCase> cases;
  for (const auto& e : std::filesystem::directory_iterator(sourcePath("tests/tc_docs"))) {
    if (e.path().extension() != ".tc") continue;
    front::Source src{e.path().string(), readText(e.path().string())};
    try {
      auto m = front::parse(src);
      for (const auto& name : front::defNames(*m)) {
        try {
          front::lower(*m, name, front::defaultSizes(src));
          cases.push_back({e.path().filename().string(), name});
        } catch (const UserError&) {
          // Rejected defs are covered, with their exact messages, by TcDocsTest.
        }
      }
    } catch (const UserError&) {
    }
  }
  std::sort(cases.begin(), cases.end(), [](const DocCase& a, const DocCase& b) {
    return std::tie(a.file, a.entry) < std::tie(b.file, b.entry);
  });
  return cases;
}

class TcDocs : public ::testing::TestWithParam<DocCase> {};

TEST_P(TcDocs, CompilesAndMatchesInterpreter) {
  const DocCase& c = GetParam();
  std::string path = sourcePath("tests/tc_docs/" + c.file);
  front::Source src{path, readText(path)};
  auto m = front::parse(src);
  te::Program p = front::lower(*m, c.entry, front::defaultSizes(src));
  for (auto fusion : {driver::Fusion::Min, driver::Fusion::Max, driver::Fusion::Basteln}) {
    driver::CompileOptions o;
    o.fusion = fusion;
    driver::CompiledProgram cp = testing::compileFor(p, o);
    runtime::RunOptions ro;
    ro.check = true;
    auto r = runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
    for (const auto& out : r.outputs) EXPECT_TRUE(out.pass) << out.tensor << ": " << out.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Accepted, TcDocs, ::testing::ValuesIn(acceptedDefs()),
                         [](const ::testing::TestParamInfo<DocCase>& i) {
                           std::string n =
                               i.param.file.substr(0, i.param.file.size() - 3) + "_" + i.param.entry;
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace tessel::testing
