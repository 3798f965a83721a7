// Every examples/*.tc lowers with its default sizes and runs in the reference
// interpreter; a few are also checked against direct loops on odd sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "front/Frontend.h"
#include "runtime/Interpreter.h"

namespace tessel::runtime {
namespace {

namespace fs = std::filesystem;

front::Source readExample(const std::string& name) {
  std::string path = std::string(TESSEL_SOURCE_DIR) + "/examples/" + name;
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return {path, ss.str()};
}

te::Program lowerExample(const std::string& name, std::map<std::string, int64_t> sizes = {}) {
  front::Source src = readExample(name);
  if (sizes.empty()) sizes = front::defaultSizes(src);
  return front::lower(*front::parse(src), "", sizes);
}

std::map<std::string, Buffer> randomInputs(const te::Program& p, uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  std::map<std::string, Buffer> in;
  for (const te::TensorDecl* t : p.inputs()) {
    Buffer b(t->dtype, t->shape);
    b.randomize(rng);
    in.emplace(t->name, std::move(b));
  }
  return in;
}

TEST(ExamplesTest, EveryExampleRuns) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(std::string(TESSEL_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".tc") continue;
    std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    front::Source src = readExample(name);
    ASSERT_EQ(src.text.rfind("# sizes:", 0), 0u) << "first line must give the default sizes";
    ASSERT_EQ(src.text.find("\n# "), src.text.find('\n')) << "second line must say what the example is";
    te::Program p;
    try {
      p = lowerExample(name);
    } catch (const UserError& e) {
      FAIL() << e.render();
    }
    auto out = interpret(p, randomInputs(p));
    EXPECT_EQ(out.size(), p.outputs().size());
    for (const auto& [tensor, b] : out)
      for (int64_t i = 0; i < b.size(); ++i)
        ASSERT_TRUE(std::isfinite(b.get(i))) << tensor << "[" << i << "]";
    ++count;
  }
  EXPECT_GE(count, 17);
}

TEST(ExamplesTest, Conv2dStrideAndPaddingOnOddSizes) {
  const int N = 2, C = 3, H = 7, W = 9, K = 4, KH = 3, KW = 3, HO = 4, WO = 5;
  te::Program p =
      lowerExample("conv2d.tc", {{"N", N}, {"C", C}, {"H", H}, {"W", W}, {"K", K}, {"KH", KH}, {"KW", KW}});
  ASSERT_EQ(p.tensor("O").shape, (std::vector<int64_t>{N, K, HO, WO}));
  auto in = randomInputs(p);
  const Buffer &I = in.at("I"), &Wt = in.at("Wt");
  Buffer O = interpret(p, in).at("O");
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      for (int h = 0; h < HO; ++h)
        for (int w = 0; w < WO; ++w) {
          double want = 0;
          for (int c = 0; c < C; ++c)
            for (int kh = 0; kh < KH; ++kh)
              for (int kw = 0; kw < KW; ++kw) {
                int ih = h * 2 + kh - 1, iw = w * 2 + kw - 1;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                // f32 products (as C computes them), accumulated in double.
                want += static_cast<float>(I.get(((n * C + c) * H + ih) * W + iw) *
                                           Wt.get(((k * C + c) * KH + kh) * KW + kw));
              }
          EXPECT_FLOAT_EQ(O.get(((n * K + k) * HO + h) * WO + w), static_cast<float>(want));
        }
}

TEST(ExamplesTest, MaxpoolOnOddSizes) {
  te::Program p = lowerExample("maxpool.tc", {{"N", 1}, {"C", 2}, {"H", 7}, {"W", 5}});
  ASSERT_EQ(p.tensor("O").shape, (std::vector<int64_t>{1, 2, 3, 2}));
  auto in = randomInputs(p);
  const Buffer& I = in.at("I");
  Buffer O = interpret(p, in).at("O");
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 2; ++w) {
        double want = -INFINITY;
        for (int kh = 0; kh < 2; ++kh)
          for (int kw = 0; kw < 2; ++kw) want = std::max(want, I.get((c * 7 + 2 * h + kh) * 5 + 2 * w + kw));
        EXPECT_EQ(O.get((c * 3 + h) * 2 + w), want);
      }
}

TEST(ExamplesTest, SoftmaxRowsSumToOne) {
  te::Program p = lowerExample("softmax.tc", {{"N", 5}, {"D", 13}});
  EXPECT_EQ(p.outputs().size(), 1u);
  Buffer Y = interpret(p, randomInputs(p)).at("Y");
  for (int n = 0; n < 5; ++n) {
    double sum = 0;
    for (int d = 0; d < 13; ++d) sum += Y.get(n * 13 + d);
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(ExamplesTest, OneHot) {
  te::Program p = lowerExample("one_hot.tc", {{"N", 4}, {"D", 3}});
  Buffer idx(te::DType::I32, {4});
  for (int i = 0; i < 4; ++i) idx.set(i, std::vector<int>{2, 0, 5, -1}[i]);
  Buffer O = interpret(p, {{"Idx", idx}}).at("O");
  std::vector<double> want{0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(O.get(i), want[i]) << i;
}

TEST(ExamplesTest, CastRoundsLikeC) {
  te::Program p = lowerExample("cast.tc", {{"M", 1}, {"N", 3}});
  Buffer a(te::DType::F32, {1, 3});
  std::vector<double> v{0.0015, -0.0027, 0.33333};
  for (int i = 0; i < 3; ++i) a.set(i, v[i]);
  auto out = interpret(p, {{"A", a}});
  EXPECT_EQ(out.at("Q").dtype(), te::DType::I32);
  EXPECT_EQ(out.at("H").dtype(), te::DType::F16);
  for (int i = 0; i < 3; ++i) {
    double x = te::roundToDType(v[i], te::DType::F32);
    EXPECT_EQ(out.at("Q").get(i), std::trunc(x * 1000)) << i;
    EXPECT_EQ(out.at("H").get(i), te::roundToDType(x, te::DType::F16)) << i;
  }
}

}  // namespace
}  // namespace tessel::runtime
