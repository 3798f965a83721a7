// Every program of tests/tc_docs (TC's documentation, written out with
// concrete sizes) lowers, or fails with the precise error listed here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "front/Frontend.h"

namespace tessel::front {
namespace {

namespace fs = std::filesystem;

struct Expected {
  std::string entry;   // def that fails ("" = every def must fail the same way)
  std::string reason;  // the error message
  int line, col;
};

// Documented programs Tessel rejects, and why.
const std::map<std::string, Expected> kRejected = {
    {"matmul_grad.tc", {"", "unknown tensor or function 'O_grad'", 4, 22}},
    {"convolution_grad.tc",
     {"", "index 'h' is inferred to range over 2:8, so 'I_grad' would have unwritten", 4, 45}},
    {"inference_reverted.tc", {"", "index 'i' is inferred to range over 3:11", 4, 17}},
    {"inference_average_pool.tc",
     {"average_pool_2_where",
      "index 'k' appears only on the right-hand side, so it is reduced, but 'A' is assigned with '='", 7,
      18}},
    {"inference_dynamic_stride.tc", {"", "unknown type 'int'", 3, 29}},
    {"inference_lut.tc", {"", "index 0 of 'B' has type f32; tensor indices must be integers", 4, 12}},
    {"inference_lut_clamped.tc", {"", "index 0 of 'B' has type f32; tensor indices must be integers", 4, 12}},
    {"conventions_triangular_filter.tc",
     {"", "expected ')' but found 'and' (TC writes logical and as '&&')", 4, 31}},
    {"conventions_triangular_where.tc",
     {"", "range bounds must be size expressions (integers, sizes, T.d), but 'm1' is not a size", 4, 57}},
};

std::string readFile(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(FrontTcDocs, EveryDocumentedProgramLowersOrIsRejectedPrecisely) {
  fs::path dir = fs::path(TESSEL_SOURCE_DIR) / "tests" / "tc_docs";
  std::set<std::string> seen;
  int lowered = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".tc") continue;
    std::string name = entry.path().filename().string();
    seen.insert(name);
    SCOPED_TRACE(name);
    Source src{name, readFile(entry.path())};
    auto expected = kRejected.find(name);
    try {
      auto m = parse(src);
      auto sizes = defaultSizes(src);
      ASSERT_FALSE(sizes.empty()) << "missing '# sizes:' comment";
      for (const auto& def : defNames(*m)) {
        std::map<std::string, int64_t> own;
        for (const auto& n : sizeNames(*m, def)) own[n] = sizes.at(n);
        bool mustFail =
            expected != kRejected.end() && (expected->second.entry.empty() || expected->second.entry == def);
        try {
          te::Program p = lower(*m, def, own);
          EXPECT_FALSE(mustFail) << def << " lowered but should be rejected";
          EXPECT_FALSE(p.outputs().empty());
          ++lowered;
        } catch (const UserError& e) {
          ASSERT_TRUE(mustFail) << e.render();
          EXPECT_NE(e.reason().find(expected->second.reason), std::string::npos) << e.render();
          EXPECT_EQ(e.loc().line, expected->second.line) << e.render();
          EXPECT_EQ(e.loc().col, expected->second.col) << e.render();
        }
      }
    } catch (const UserError& e) {  // parse errors
      ASSERT_NE(expected, kRejected.end()) << e.render();
      EXPECT_NE(e.reason().find(expected->second.reason), std::string::npos) << e.render();
      EXPECT_EQ(e.loc().line, expected->second.line) << e.render();
      EXPECT_EQ(e.loc().col, expected->second.col) << e.render();
    }
  }
  for (const auto& [name, e] : kRejected) EXPECT_TRUE(seen.count(name)) << name << " is listed but missing";
  EXPECT_GE(lowered, 35);
}

}  // namespace
}  // namespace tessel::front
