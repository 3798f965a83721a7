// Every peer operator on a small odd shape computes what the interpreter
// computes for the program a suite would map it to. A peer whose library was
// not built in is skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>

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

// `op` of `f` computes what the interpreter computes for `p`, at 1 and 2
// threads, twice in a row, and leaves its inputs as they were.
void expectMatchesInterpreter(PeerFamily& f, const std::string& op, const te::Program& p,
                              const std::string& label) {
  std::vector<runtime::Buffer> inputs = runtime::makeInputs(p, 7);
  std::map<std::string, runtime::Buffer> want = runtime::interpret(p, runtime::inputsByName(p, inputs));
  std::vector<runtime::Buffer> pristine;
  for (const auto& b : inputs) pristine.push_back(b.clone());
  for (int threads : {1, 2}) {
    f.setThreads(threads);
    std::unique_ptr<PreparedPeer> peer = f.prepare(op, p, inputs);
    peer->run();
    peer->run();  // a second run gives the same result (no state carried between runs)
    std::vector<runtime::Buffer> got = peer->outputs();
    auto outs = p.outputs();
    ASSERT_EQ(got.size(), outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      runtime::CheckResult r =
          runtime::compareBuffers(got[i], want.at(outs[i]->name), runtime::toleranceFor(p, outs[i]->name));
      EXPECT_TRUE(r.pass) << label << ", " << threads << " thread(s), " << outs[i]->name << ": " << r.message;
    }
    for (const SideStep& step : peer->sideSteps()) step.run();
  }
  // Peers only read their inputs.
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_TRUE(runtime::compareBuffers(inputs[i], pristine[i], {}).pass)
        << label << ": input " << i << " changed";
}

class PeerOps : public ::testing::TestWithParam<PeerCase> {};

TEST_P(PeerOps, MatchesTheInterpreter) {
  const PeerCase& c = GetParam();
  std::string qualified = c.peer;
  auto families = makePeerFamilies();
  PeerFamily* family = findFamily(families, qualified.substr(0, qualified.find('.')));
  ASSERT_NE(family, nullptr) << qualified;
  if (!family->available()) GTEST_SKIP() << family->name() << " is not built in";
  std::ostringstream label;
  label << c;
  expectMatchesInterpreter(*family, qualified.substr(qualified.find('.') + 1), programAt(c.program, c.sizes),
                           label.str());
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
// The "same"-padded layers of ResNet-50 and MobileNet-v2 (bench/suites/conv-nets.suite) on odd sizes.
const std::map<std::string, int64_t> kSameR = {{"N", 1}, {"C", 7}, {"H", 13}, {"W", 11}, {"K", 5}, {"R", 3}};
const std::map<std::string, int64_t> kDepthwiseSame = {{"N", 1}, {"C", 7}, {"H", 13}, {"W", 11}, {"R", 3}};
const std::map<std::string, int64_t> kBatchMatmul = {{"BS", 3}, {"M", 13}, {"N", 7}, {"K", 11}};
// Image pipelines on sizes that fit neither a vector nor a tile.
const std::map<std::string, int64_t> kBlur = {{"H", 7}, {"W", 13}};
const std::map<std::string, int64_t> kUnsharp = {{"C", 3}, {"H", 13}, {"W", 9}};
const std::map<std::string, int64_t> kHarris = {{"H", 9}, {"W", 13}};
const std::map<std::string, int64_t> kInterpolate = {{"C", 4}, {"H", 13}, {"W", 17}};
// Sub-graphs run op by op (onednn.graph), on sizes that fit no vector nor oneDNN's blocks.
const std::map<std::string, int64_t> kHeads = {{"B", 2}, {"NH", 3}, {"S", 13}};
const std::map<std::string, int64_t> kHidden = {{"B", 1}, {"S", 7}, {"D", 13}};
const std::map<std::string, int64_t> kAttention = {{"B", 2}, {"NH", 3}, {"S", 13}, {"D", 7}};
const std::map<std::string, int64_t> kResidualConv = {{"N", 2}, {"C", 3}, {"H", 7}, {"W", 13}, {"K", 5}};
// Enough channels for oneDNN's blocked layouts (and a partial last block).
const std::map<std::string, int64_t> kBlockedConv = {{"N", 1}, {"C", 17}, {"H", 5}, {"W", 7}, {"K", 19}};

INSTANTIATE_TEST_SUITE_P(
    Bench, PeerOps,
    ::testing::Values(
        PeerCase{"onednn.matmul", "examples/matmul.tc", kMatmul},
        PeerCase{"onednn.matmul", "bench/programs/matmul_nt.tc", kMatmul},
        PeerCase{"onednn.batch_matmul", "examples/batch_matmul.tc", kBatchMatmul},
        PeerCase{"onednn.conv2d", "examples/conv2d.tc", kConv},
        PeerCase{"onednn.conv2d", "bench/programs/conv3x3_same.tc", kSame},
        PeerCase{"onednn.depthwise_conv", "examples/depthwise_conv.tc", kDepthwise},
        PeerCase{"onednn.conv2d", "bench/programs/conv_nhwc_same_s2.tc", kSameR},
        PeerCase{"onednn.conv2d", "bench/programs/conv_nchw_same_s2.tc", kSameR},
        PeerCase{"onednn.depthwise_conv", "bench/programs/dwconv_nhwc_same.tc", kDepthwiseSame},
        PeerCase{"onednn.depthwise_conv", "bench/programs/dwconv_nhwc_same_s2.tc", kDepthwiseSame},
        PeerCase{"onednn.depthwise_conv", "bench/programs/dwconv_nchw_same_s2.tc", kDepthwiseSame},
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
        PeerCase{"onednn.graph", "bench/programs/sg_s2m.tc", kHeads},
        PeerCase{"onednn.graph", "bench/programs/sg_2add.tc", kHidden},
        PeerCase{"onednn.graph", "bench/programs/sg_madd.tc", kHeads},
        PeerCase{"onednn.graph", "bench/programs/sg_maxmin.tc", kHidden},
        PeerCase{"onednn.graph", "bench/programs/sg_indep.tc", {{"N", 2}, {"C", 7}, {"H", 1}, {"W", 5}}},
        PeerCase{"onednn.graph", "bench/programs/sg_mmbias.tc", {{"M", 13}, {"K", 11}, {"N", 7}}},
        PeerCase{"onednn.graph", "bench/programs/sg_mmbias.tc", {{"M", 7}, {"K", 13}, {"N", 1}}},
        PeerCase{"onednn.graph", "bench/programs/sg_transbmm.tc", kAttention},
        PeerCase{"onednn.graph", "bench/programs/sg_bmmtrans.tc", kAttention},
        PeerCase{"onednn.graph", "bench/programs/sg_attention.tc", kAttention},
        PeerCase{"onednn.graph", "bench/programs/sg_add_conv_relu.tc", kResidualConv},
        PeerCase{"onednn.graph", "bench/programs/sg_add_conv_relu.tc", kBlockedConv},
        PeerCase{"onednn.graph", "examples/softmax.tc", kRows},
        PeerCase{"onednn.graph", "examples/layernorm.tc", kRows},
        PeerCase{"onednn.graph", "examples/gelu.tc", kMatrix},
        PeerCase{"onednn.graph", "examples/batchnorm_update.tc", kBatchNorm},
        PeerCase{"onednn.graph",
                 "examples/conv_bias_relu.tc",
                 {{"N", 2}, {"C", 17}, {"H", 7}, {"W", 9}, {"K", 19}, {"KH", 3}, {"KW", 2}}},
        PeerCase{"onednn.graph", "examples/conv2d.tc", kConv},
        PeerCase{"onednn.graph", "examples/depthwise_conv.tc", kDepthwise},
        PeerCase{"onednn.graph", "examples/batch_matmul.tc", kBatchMatmul},
        PeerCase{"onednn.graph", "bench/programs/matmul_nt.tc", kMatmul},
        PeerCase{"onednn.graph", "bench/programs/row_max.tc", kMatrix},
        PeerCase{"onednn.graph", "bench/programs/full_sum.tc", kMatrix},
        PeerCase{"openblas.sgemm", "examples/matmul.tc", kMatmul},
        PeerCase{"openblas.sgemm", "bench/programs/matmul_nt.tc", kMatmul},
        PeerCase{"openblas.sgemm_batched", "examples/batch_matmul.tc", kBatchMatmul},
        PeerCase{"xnnpack.fully_connected", "examples/matmul.tc", kMatmul},
        PeerCase{"xnnpack.fully_connected", "bench/programs/matmul_nt.tc", kMatmul},
        PeerCase{"xnnpack.conv2d", "examples/conv2d.tc", kConv},
        PeerCase{"xnnpack.conv2d", "bench/programs/conv3x3_same.tc", kSame},
        PeerCase{"xnnpack.depthwise_conv", "examples/depthwise_conv.tc", kDepthwise},
        PeerCase{"xnnpack.conv2d", "bench/programs/conv_nhwc_same_s2.tc", kSameR},
        PeerCase{"xnnpack.depthwise_conv", "bench/programs/dwconv_nhwc_same.tc", kDepthwiseSame},
        PeerCase{"xnnpack.depthwise_conv", "bench/programs/dwconv_nhwc_same_s2.tc", kDepthwiseSame},
        PeerCase{"xnnpack.depthwise_conv", "bench/programs/dwconv_nchw_same_s2.tc", kDepthwiseSame},
        PeerCase{"xnnpack.add", "examples/tensor_add.tc", kMatrix},
        PeerCase{"xnnpack.add_relu", "bench/programs/bias_relu.tc", kMatrix},
        PeerCase{"xnnpack.add_relu_mul", "bench/programs/add_relu_mul.tc", kMatrix},
        PeerCase{"xnnpack.relu", "examples/relu.tc", kMatrix},
        PeerCase{"xnnpack.softmax", "examples/softmax.tc", kRows},
        PeerCase{"xnnpack.maxpool", "examples/maxpool.tc", kPool},
        PeerCase{"xnnpack.avgpool", "examples/avgpool.tc", kPool},
        PeerCase{"halide.blur3x3", "bench/programs/blur3x3.tc", kBlur},
        PeerCase{"halide.blur3x3_manual", "bench/programs/blur3x3.tc", kBlur},
        PeerCase{"halide.unsharp", "bench/programs/unsharp.tc", kUnsharp},
        PeerCase{"halide.unsharp_manual", "bench/programs/unsharp.tc", kUnsharp},
        PeerCase{"halide.harris", "bench/programs/harris.tc", kHarris},
        PeerCase{"halide.harris_manual", "bench/programs/harris.tc", kHarris},
        PeerCase{"halide.interpolate", "bench/programs/interpolate.tc", kInterpolate},
        PeerCase{"halide.interpolate_manual", "bench/programs/interpolate.tc", kInterpolate}));

TEST(BenchPeers, CatalogListsEachFamily) {
  auto families = makePeerFamilies();
  PeerCatalog catalog = catalogOf(families);
  EXPECT_EQ(catalog.size(), 4u);
  EXPECT_GE(catalog.at("onednn").size(), 20u);
  EXPECT_EQ(catalog.at("openblas").size(), 2u);
  EXPECT_GE(catalog.at("xnnpack").size(), 10u);
  EXPECT_EQ(catalog.at("halide").size(), 8u);  // four pipelines, autoscheduled and hand-scheduled
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
    std::string op = f->name() == "onednn"     ? "matmul"
                     : f->name() == "openblas" ? "sgemm"
                     : f->name() == "halide"   ? "blur3x3"  // a relu's output is not 2 smaller
                                               : "fully_connected";
    EXPECT_THROW(f->prepare(op, relu, reluInputs), PeerError) << f->name();
    EXPECT_THROW(f->prepare("no_such_operator", mm, mmInputs), PeerError) << f->name();
  }
  EXPECT_THROW(matmulShape(relu), PeerError);
  EXPECT_THROW(convShape(mm, false), PeerError);
  EXPECT_THROW(poolShape(mm), PeerError);
}

TEST(BenchPeers, AnImagePipelineThatDoesNotFitIsAPeerError) {
  auto families = makePeerFamilies();
  PeerFamily* halide = findFamily(families, "halide");
  ASSERT_NE(halide, nullptr);
  if (!halide->available()) GTEST_SKIP() << "Halide is not built in";
  halide->setThreads(1);
  te::Program blur = programAt("bench/programs/blur3x3.tc", kBlur);
  te::Program unsharp = programAt("bench/programs/unsharp.tc", kUnsharp);
  std::vector<runtime::Buffer> blurInputs = runtime::makeInputs(blur, 1),
                               unsharpInputs = runtime::makeInputs(unsharp, 1);
  // Rank 2 where the operator reads C x H x W, and the other way round.
  EXPECT_THROW(halide->prepare("unsharp", blur, blurInputs), PeerError);
  EXPECT_THROW(halide->prepare("interpolate_manual", blur, blurInputs), PeerError);
  EXPECT_THROW(halide->prepare("harris", unsharp, unsharpInputs), PeerError);
  // Same rank, but harris cuts 4 rows and columns where blur3x3 cuts 2.
  EXPECT_THROW(halide->prepare("harris_manual", blur, blurInputs), PeerError);
  // interpolate reads alpha from channel 3.
  EXPECT_THROW(halide->prepare("interpolate", unsharp, unsharpInputs), PeerError);
  EXPECT_THROW(halide->prepare("blur3x3_automatic", blur, blurInputs), PeerError);
}

#ifdef __linux__
size_t threadsOfThisProcess() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// Halide's JIT thread pool is process-wide and only grows by itself: the
// count set must both start workers and retire them.
TEST(BenchPeers, HalideRunsOnTheThreadsItIsGiven) {
  auto families = makePeerFamilies();
  PeerFamily* halide = findFamily(families, "halide");
  ASSERT_NE(halide, nullptr);
  if (!halide->available()) GTEST_SKIP() << "Halide is not built in";
  te::Program blur = programAt("bench/programs/blur3x3.tc", {{"H", 130}, {"W", 67}});
  std::vector<runtime::Buffer> inputs = runtime::makeInputs(blur, 1);
  halide->setThreads(1);
  halide->prepare("blur3x3_manual", blur, inputs)->run();
  size_t alone = threadsOfThisProcess();
  halide->setThreads(3);
  auto three = halide->prepare("blur3x3_manual", blur, inputs);
  three->run();
  EXPECT_EQ(threadsOfThisProcess(), alone + 2);  // two workers beside the calling thread
  halide->setThreads(1);
  three->run();
  EXPECT_EQ(threadsOfThisProcess(), alone);
}
#endif

// onednn.graph on programs written here, at M = 13, N = 7.
class OneDnnGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    onednn_ = findFamily(families_, "onednn");
    ASSERT_NE(onednn_, nullptr);
    if (!onednn_->available()) GTEST_SKIP() << "oneDNN is not built in";
    onednn_->setThreads(1);
  }
  static te::Program program(const std::string& text) {
    return front::lower(*front::parse(front::Source{"", text}), "", {{"M", 13}, {"N", 7}});
  }
  std::vector<std::unique_ptr<PeerFamily>> families_ = makePeerFamilies();
  PeerFamily* onednn_ = nullptr;
};

// Forms the sub-graphs do not show: operands read transposed or broadcast in
// either position, subexpressions computed apart, a dot product, a matrix
// times a vector, a copy that converts, an output read by a later stage, a
// matmul continued by a stage reading a value computed after it, a softmax
// along the first index of an input.
TEST_F(OneDnnGraph, MapsEachStageByItsForm) {
  for (const char* text : {
           "def f(float(M, N) A, float(N, M) B) -> (O) { O(m, n) = A(m, n) + B(n, m) }",
           "def f(float(M, N) A, float(N) B) -> (O) { O(m, n) = B(n) / A(m, n) - (2 - A(m, n)) }",
           "def f(float(M, N) A, float(M, N) B, float(M) C) -> (O) {\n"
           "  O(m, n) = fmin((A(m, n) + B(m, n)) * (A(m, n) - B(m, n)), sqrt(fabs(C(m))) + 1) }",
           "def f(float(M, N) A, float(N) B) -> (O, P) { O +=! B(n) * B(n)  P(m) +=! A(m, n) * B(n) }",
           "def f(float(M, N) A) -> (half(N, M) O) { O(n, m) = half(A(m, n)) }",
           "def f(float(M, N) A, float(M) B, float(N, M) C) -> (T, O) {\n"
           "  T(m, n) = tanh(A(m, n)) * B(m)\n"
           "  O(m, j) +=! T(m, n) * C(n, j) }",
           "def f(float(M, N) A, float(N, M) C, float(M) B) -> (O) {\n"
           "  P(m, j) +=! A(m, n) * C(n, j)\n"
           "  Z(m) = B(m) * 2\n"
           "  O(m, j) = fmax(P(m, j) + Z(m), 0) }",
           "def f(float(M, N) X) -> (P) {\n"
           "  Mx(n) max=! X(m, n)\n"
           "  E(m, n) = exp((X(m, n) - Mx(n)) / 2)\n"
           "  S(n) +=! E(m, n)\n"
           "  P(m, n) = E(m, n) / S(n) }",
       }) {
    SCOPED_TRACE(text);
    expectMatchesInterpreter(*onednn_, "graph", program(text), text);
  }
}

// A select, a product of three reads, an index used as a value.
TEST_F(OneDnnGraph, NamesTheStageItCannotMap) {
  for (auto [text, stage] : std::vector<std::pair<const char*, const char*>>{
           {"def f(float(M, N) A, float(M, N) B) -> (O) {\n"
            "  T(m, n) = A(m, n) + B(m, n)\n"
            "  O(m, n) = T(m, n) > 0 ? T(m, n) : 0.5 * T(m, n) }",
            "stage O:"},
           {"def f(float(M, N) A, float(N) B) -> (O, P) {\n"
            "  O(m) +=! A(m, n) * B(n) * A(m, n)\n"
            "  P(m, n) = A(m, n) + 1 }",
            "stage O:"},
           {"def f(float(M, N) A) -> (O) { O(m, n) = A(m, n) + m }", "stage O:"},
       }) {
    te::Program p = program(text);
    std::vector<runtime::Buffer> inputs = runtime::makeInputs(p, 1);
    try {
      onednn_->prepare("graph", p, inputs);
      ADD_FAILURE() << "no PeerError for " << text;
    } catch (const PeerError& e) {
      EXPECT_NE(std::string(e.what()).find(stage), std::string::npos) << e.what();
    }
  }
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
  // NHWC (TTILE's layers): a 1x1 window with stride 2.
  ConvShape nhwc = convShape(programAt("bench/programs/conv_nhwc_s2.tc",
                                       {{"N", 1}, {"HI", 13}, {"WI", 13}, {"CI", 8}, {"K", 16}, {"R", 1}}),
                             false);
  EXPECT_TRUE(nhwc.nhwc);
  EXPECT_EQ(nhwc.c, 8);
  EXPECT_EQ(nhwc.k, 16);
  EXPECT_EQ(nhwc.h.out, 7);
  EXPECT_EQ(nhwc.h.stride, 2);
  EXPECT_EQ(nhwc.w.kernel, 1);
  // NHWC depthwise (MobileNet-v2's): (R, R, C) weights, C groups, stride 2 and padding 1.
  te::Program dwNhwc = programAt("bench/programs/dwconv_nhwc_same_s2.tc", kDepthwiseSame);
  ConvShape dw = convShape(dwNhwc, true);
  EXPECT_TRUE(dw.nhwc);
  EXPECT_EQ(dw.c, 7);
  EXPECT_EQ(dw.k, 7);
  EXPECT_EQ(dw.groups, 7);
  EXPECT_EQ(dw.h.kernel, 3);
  EXPECT_EQ(dw.h.stride, 2);
  EXPECT_EQ(dw.h.padBefore, 1);
  EXPECT_EQ(dw.h.out, 7);
  EXPECT_EQ(dw.w.out, 6);
  EXPECT_EQ(dw.w.padAfter, 1);
  EXPECT_THROW(convShape(dwNhwc, false), PeerError);  // (R, R, C) weights are no dense convolution's
  ConvShape dwNchw = convShape(programAt("bench/programs/dwconv_nchw_same.tc", kDepthwiseSame), true);
  EXPECT_FALSE(dwNchw.nhwc);
  EXPECT_EQ(dwNchw.groups, 7);
  EXPECT_EQ(dwNchw.h.out, 13);
  EXPECT_EQ(dwNchw.w.padBefore, 1);
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
