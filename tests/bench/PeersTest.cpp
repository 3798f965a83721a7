// Every peer operator on a small odd shape computes what the interpreter
// computes for the program a suite would map it to. A peer whose library was
// not built in is skipped.
#include <gtest/gtest.h>

#include <map>

#include "../support/RunTool.h"
#include "bench/OperatorShapes.h"
#include "bench/PeerRegistry.h"
#include "front/Frontend.h"
#include "runtime/Checker.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"

namespace tessel::bench {
namespace {

using tessel::testing::readText;
using tessel::testing::sourcePath;

te::Program programAt(const std::string& relative, const std::map<std::string, int64_t>& sizes,
                      const std::string& entry = "") {
  front::Source src{relative, readText(sourcePath(relative))};
  return front::lower(*front::parse(src), entry, sizes);
}

struct PeerCase {
  const char* peer;  // "onednn.matmul"
  const char* program;
  std::map<std::string, int64_t> sizes;
};

std::ostream& operator<<(std::ostream& os, const PeerCase& c) { return os << c.peer << " on " << c.program; }

class PeerOps : public ::testing::TestWithParam<PeerCase> {};

TEST_P(PeerOps, MatchesTheInterpreter) {
  const PeerCase& c = GetParam();
  std::string qualified = c.peer;
  auto families = makePeerFamilies();
  PeerFamily* family = findFamily(families, qualified.substr(0, qualified.find('.')));
  ASSERT_NE(family, nullptr) << qualified;
  PeerFamily& f = *family;
  if (!f.available()) GTEST_SKIP() << f.name() << " is not built in";
  te::Program p = programAt(c.program, c.sizes);
  std::vector<runtime::Buffer> inputs = runtime::makeInputs(p, 7);
  std::map<std::string, runtime::Buffer> want = runtime::interpret(p, runtime::inputsByName(p, inputs));
  std::vector<runtime::Buffer> pristine;
  for (const auto& b : inputs) pristine.push_back(b.clone());
  for (int threads : {1, 2}) {
    f.setThreads(threads);
    std::unique_ptr<PreparedPeer> peer = f.prepare(qualified.substr(qualified.find('.') + 1), p, inputs);
    peer->run();
    peer->run();  // a second run gives the same result (no state carried between runs)
    std::vector<runtime::Buffer> got = peer->outputs();
    auto outs = p.outputs();
    ASSERT_EQ(got.size(), outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      runtime::CheckResult r =
          runtime::compareBuffers(got[i], want.at(outs[i]->name), runtime::toleranceFor(p, outs[i]->name));
      EXPECT_TRUE(r.pass) << c << ", " << threads << " thread(s), " << outs[i]->name << ": " << r.message;
    }
    for (const SideStep& step : peer->sideSteps()) step.run();
  }
  // Peers only read their inputs.
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_TRUE(runtime::compareBuffers(inputs[i], pristine[i], {}).pass)
        << c << ": input " << i << " changed";
}

const std::map<std::string, int64_t> kMatmul = {{"M", 13}, {"N", 7}, {"K", 11}};
const std::map<std::string, int64_t> kMatrix = {{"M", 13}, {"N", 7}};
const std::map<std::string, int64_t> kRows = {{"N", 13}, {"D", 7}};
const std::map<std::string, int64_t> kPool = {{"N", 2}, {"C", 7}, {"H", 14}, {"W", 10}};
const std::map<std::string, int64_t> kBatchNorm = {{"N", 2}, {"C", 7}, {"H", 5}, {"W", 3}};
const std::map<std::string, int64_t> kConv = {{"N", 2}, {"C", 3},  {"H", 13}, {"W", 11},
                                              {"K", 5}, {"KH", 3}, {"KW", 3}};
const std::map<std::string, int64_t> kSame = {{"N", 1}, {"C", 7}, {"H", 13}, {"W", 13}, {"K", 5}};
const std::map<std::string, int64_t> kDepthwise = {{"N", 2},  {"C", 7},  {"H", 13},
                                                   {"W", 11}, {"KH", 3}, {"KW", 3}};
const std::map<std::string, int64_t> kBatchMatmul = {{"BS", 3}, {"M", 13}, {"N", 7}, {"K", 11}};

INSTANTIATE_TEST_SUITE_P(
    Bench, PeerOps,
    ::testing::Values(PeerCase{"onednn.matmul", "examples/matmul.tc", kMatmul},
                      PeerCase{"onednn.matmul", "bench/programs/matmul_nt.tc", kMatmul},
                      PeerCase{"onednn.batch_matmul", "examples/batch_matmul.tc", kBatchMatmul},
                      PeerCase{"onednn.conv2d", "examples/conv2d.tc", kConv},
                      PeerCase{"onednn.conv2d", "bench/programs/conv3x3_same.tc", kSame},
                      PeerCase{"onednn.depthwise_conv", "examples/depthwise_conv.tc", kDepthwise},
                      PeerCase{"onednn.relu", "examples/relu.tc", kMatrix},
                      PeerCase{"onednn.gelu", "examples/gelu.tc", kMatrix},
                      PeerCase{"onednn.softmax", "examples/softmax.tc", kRows},
                      PeerCase{"onednn.layernorm", "examples/layernorm.tc", kRows},
                      PeerCase{"onednn.batchnorm_inference", "examples/batchnorm_update.tc", kBatchNorm},
                      PeerCase{"onednn.batchnorm_stats", "examples/batchnorm_reduce.tc", kBatchNorm},
                      PeerCase{"onednn.reduce_sum", "bench/programs/row_sum.tc", kMatrix},
                      PeerCase{"onednn.reduce_sum", "bench/programs/full_sum.tc", kMatrix},
                      PeerCase{"onednn.reduce_max", "bench/programs/row_max.tc", kMatrix},
                      PeerCase{"onednn.maxpool", "examples/maxpool.tc", kPool},
                      PeerCase{"onednn.avgpool", "examples/avgpool.tc", kPool},
                      PeerCase{"onednn.add", "examples/tensor_add.tc", kMatrix},
                      PeerCase{"onednn.add_relu", "bench/programs/bias_relu.tc", kMatrix},
                      PeerCase{"onednn.add_relu_mul", "bench/programs/add_relu_mul.tc", kMatrix},
                      PeerCase{"onednn.transpose", "examples/transpose.tc", kMatrix},
                      PeerCase{"openblas.sgemm", "examples/matmul.tc", kMatmul},
                      PeerCase{"openblas.sgemm", "bench/programs/matmul_nt.tc", kMatmul},
                      PeerCase{"openblas.sgemm_batched", "examples/batch_matmul.tc", kBatchMatmul},
                      PeerCase{"xnnpack.fully_connected", "examples/matmul.tc", kMatmul},
                      PeerCase{"xnnpack.fully_connected", "bench/programs/matmul_nt.tc", kMatmul},
                      PeerCase{"xnnpack.conv2d", "examples/conv2d.tc", kConv},
                      PeerCase{"xnnpack.conv2d", "bench/programs/conv3x3_same.tc", kSame},
                      PeerCase{"xnnpack.depthwise_conv", "examples/depthwise_conv.tc", kDepthwise},
                      PeerCase{"xnnpack.add", "examples/tensor_add.tc", kMatrix},
                      PeerCase{"xnnpack.add_relu", "bench/programs/bias_relu.tc", kMatrix},
                      PeerCase{"xnnpack.add_relu_mul", "bench/programs/add_relu_mul.tc", kMatrix},
                      PeerCase{"xnnpack.relu", "examples/relu.tc", kMatrix},
                      PeerCase{"xnnpack.softmax", "examples/softmax.tc", kRows},
                      PeerCase{"xnnpack.maxpool", "examples/maxpool.tc", kPool},
                      PeerCase{"xnnpack.avgpool", "examples/avgpool.tc", kPool}));

TEST(BenchPeers, CatalogListsEachFamily) {
  auto families = makePeerFamilies();
  PeerCatalog catalog = catalogOf(families);
  EXPECT_EQ(catalog.size(), 3u);
  EXPECT_GE(catalog.at("onednn").size(), 20u);
  EXPECT_EQ(catalog.at("openblas").size(), 2u);
  EXPECT_GE(catalog.at("xnnpack").size(), 10u);
}

TEST(BenchPeers, AnOperatorThatDoesNotFitIsAPeerError) {
  auto families = makePeerFamilies();
  te::Program relu = programAt("examples/relu.tc", kMatrix);
  te::Program mm = programAt("examples/matmul.tc", kMatmul);
  std::vector<runtime::Buffer> reluInputs = runtime::makeInputs(relu, 1),
                               mmInputs = runtime::makeInputs(mm, 1);
  for (const auto& f : families) {
    if (!f->available()) continue;
    f->setThreads(1);
    std::string op = f->name() == "onednn" ? "matmul" : f->name() == "openblas" ? "sgemm" : "fully_connected";
    EXPECT_THROW(f->prepare(op, relu, reluInputs), PeerError) << f->name();
    EXPECT_THROW(f->prepare("no_such_operator", mm, mmInputs), PeerError) << f->name();
  }
  EXPECT_THROW(matmulShape(relu), PeerError);
  EXPECT_THROW(convShape(mm, false), PeerError);
  EXPECT_THROW(poolShape(mm), PeerError);
}

TEST(BenchPeers, AWronglyMappedOperatorGivesADifferentResult) {
  auto families = makePeerFamilies();
  PeerFamily* onednn = findFamily(families, "onednn");
  ASSERT_NE(onednn, nullptr);
  if (!onednn->available()) GTEST_SKIP() << "oneDNN is not built in";
  onednn->setThreads(1);
  te::Program relu = programAt("examples/relu.tc", kMatrix);
  std::vector<runtime::Buffer> inputs = runtime::makeInputs(relu, 3);
  auto want = runtime::interpret(relu, runtime::inputsByName(relu, inputs));
  auto tanh = onednn->prepare("tanh", relu, inputs);  // same signature, another function
  tanh->run();
  EXPECT_FALSE(
      runtime::compareBuffers(tanh->outputs()[0], want.at("O"), runtime::toleranceFor(relu, "O")).pass);
}

TEST(BenchPeers, ShapesAreReadOffThePrograms) {
  MatmulShape nt = matmulShape(programAt("bench/programs/matmul_nt.tc", kMatmul));
  EXPECT_FALSE(nt.transA);
  EXPECT_TRUE(nt.transB);
  EXPECT_EQ(nt.m, 13);
  EXPECT_EQ(nt.n, 7);
  EXPECT_EQ(nt.k, 11);
  ConvShape conv = convShape(programAt("examples/conv2d.tc", kConv), false);
  EXPECT_EQ(conv.h.stride, 2);
  EXPECT_EQ(conv.h.padBefore, 1);
  EXPECT_EQ(conv.h.out, 7);
  EXPECT_EQ(conv.w.out, 6);
  PoolShape pool = poolShape(programAt("examples/maxpool.tc", kPool));
  EXPECT_EQ(pool.h.kernel, 2);
  EXPECT_EQ(pool.h.stride, 2);
  EXPECT_EQ(pool.w.padAfter, 0);
  te::Program bias = programAt("bench/programs/bias_relu.tc", kMatrix);
  EXPECT_EQ(broadcastDims(bias, "Bias"), (std::vector<int64_t>{1, 7}));
  te::Program rowSum = programAt("bench/programs/row_sum.tc", kMatrix);
  ReductionShape rs = reductionShape(rowSum, rowSum.stages[0]);
  EXPECT_EQ(rs.dstDims, (std::vector<int64_t>{13, 1}));
}

}  // namespace
}  // namespace tessel::bench
