// Golden tests of single passes, in the style of LLVM's lit and FileCheck:
// each tests/passes/*.tc holds its command and its expected lines next to
// the program it runs on.
//   # RUN: ARGS        `tessel ARGS` with %s the file itself, %S its folder
//   # CHECK: TEXT      a line of the output containing TEXT, after the previous match
//   # CHECK-NEXT: TEXT the line right after the previous match contains TEXT
//   # CHECK-NOT: TEXT  no line between the previous match and the next contains TEXT
//   # ERROR: TEXT      the command fails as a user error (exit 2) and says TEXT
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "../support/RunTool.h"

namespace tessel::testing {
namespace {

struct Directive {
  std::string kind;  // RUN, CHECK, CHECK-NEXT, CHECK-NOT, ERROR
  std::string text;
  int line = 0;
};

std::vector<Directive> directivesOf(const std::string& path) {
  std::vector<Directive> directives;
  std::istringstream in(readText(path));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    for (const char* kind : {"RUN", "CHECK-NEXT", "CHECK-NOT", "CHECK", "ERROR"}) {
      std::string prefix = std::string("# ") + kind + ": ";
      if (line.rfind(prefix, 0) == 0) {
        directives.push_back({kind, line.substr(prefix.size()), number});
        break;
      }
    }
  }
  return directives;
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string substituted(std::string run, const std::string& path) {
  std::string folder = std::filesystem::path(path).parent_path().string();
  for (auto [pattern, value] : {std::pair<std::string, std::string>{"%s", path}, {"%S", folder}})
    for (size_t at = run.find(pattern); at != std::string::npos; at = run.find(pattern, at + value.size()))
      run.replace(at, pattern.size(), value);
  return run;
}

// The failures of `output` against the CHECK directives, "" when it matches.
std::string checkOutput(const std::vector<Directive>& directives, const std::vector<std::string>& output) {
  size_t next = 0;  // the first line a CHECK may match
  std::vector<const Directive*> pendingNot;
  for (const Directive& d : directives) {
    std::string where = "line " + std::to_string(d.line) + " (" + d.kind + ": " + d.text + ")";
    if (d.kind == "CHECK-NOT") {
      pendingNot.push_back(&d);
    } else if (d.kind == "CHECK") {
      size_t found = next;
      while (found < output.size() && output[found].find(d.text) == std::string::npos) ++found;
      if (found == output.size())
        return where + ": no line after line " + std::to_string(next) + " of the output";
      for (const Directive* n : pendingNot)
        for (size_t l = next; l < found; ++l)
          if (output[l].find(n->text) != std::string::npos)
            return "line " + std::to_string(n->line) + " (CHECK-NOT: " + n->text + "): output line " +
                   std::to_string(l + 1) + ": " + output[l];
      pendingNot.clear();
      next = found + 1;
    } else if (d.kind == "CHECK-NEXT") {
      if (next == 0 || next >= output.size() || output[next].find(d.text) == std::string::npos)
        return where + ": output line " + std::to_string(next + 1) + " is " +
               (next < output.size() ? "'" + output[next] + "'" : "past the end");
      ++next;
    }
  }
  for (const Directive* n : pendingNot)
    for (size_t l = next; l < output.size(); ++l)
      if (output[l].find(n->text) != std::string::npos)
        return "line " + std::to_string(n->line) + " (CHECK-NOT: " + n->text + "): output line " +
               std::to_string(l + 1) + ": " + output[l];
  return "";
}

std::vector<std::string> goldenFiles() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(sourcePath("tests/passes")))
    if (e.path().extension() == ".tc") files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

class PassGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(PassGolden, OutputMatchesTheChecks) {
  std::string path = sourcePath("tests/passes/" + GetParam());
  std::vector<Directive> directives = directivesOf(path);
  auto run =
      std::find_if(directives.begin(), directives.end(), [](const Directive& d) { return d.kind == "RUN"; });
  ASSERT_NE(run, directives.end()) << path << " has no # RUN: line";
  ToolResult r = runTessel(substituted(run->text, path));
  std::vector<std::string> errors;
  for (const Directive& d : directives)
    if (d.kind == "ERROR") errors.push_back(d.text);
  if (!errors.empty()) {
    EXPECT_EQ(r.exitCode, 2) << r.err;
    for (const auto& e : errors) EXPECT_NE(r.err.find(e), std::string::npos) << e << "\n" << r.err;
    return;
  }
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::string failure = checkOutput(directives, linesOf(r.out));
  EXPECT_EQ(failure, "") << GetParam() << "\n" << r.out;
}

INSTANTIATE_TEST_SUITE_P(Passes, PassGolden, ::testing::ValuesIn(goldenFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 3);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The checker itself: a mismatch is found and said.
TEST(PassGoldenChecks, MismatchesAreFound) {
  std::vector<std::string> out = {"a", "b", "c"};
  EXPECT_EQ(checkOutput({{"CHECK", "a"}, {"CHECK-NEXT", "b"}, {"CHECK", "c"}}, out), "");
  EXPECT_NE(checkOutput({{"CHECK", "b"}, {"CHECK", "a"}}, out), "");
  EXPECT_NE(checkOutput({{"CHECK", "a"}, {"CHECK-NEXT", "c"}}, out), "");
  EXPECT_NE(checkOutput({{"CHECK", "a"}, {"CHECK-NOT", "b"}, {"CHECK", "c"}}, out), "");
  EXPECT_EQ(checkOutput({{"CHECK", "a"}, {"CHECK-NOT", "x"}, {"CHECK", "c"}}, out), "");
}

}  // namespace
}  // namespace tessel::testing
