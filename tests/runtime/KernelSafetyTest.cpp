// Generated kernels never read outside a tensor: data-dependent indices and
// reads whose guard cannot be proven are checked at run time (status 1), and
// padded reads proven safe by isl carry no check at all.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "abi/KernelAbi.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "runtime/CCompiler.h"
#include "runtime/Interpreter.h"
#include "runtime/KernelLibrary.h"

namespace tessel {
namespace {

struct Loaded {
  driver::CompiledProgram cp;
  std::unique_ptr<runtime::KernelLibrary> lib;
};

Loaded load(const std::string& tc) {
  Loaded l;
  l.cp = testing::compileFor(front::testing::lowerText(tc), driver::CompileOptions{});
  auto obj = runtime::compileSharedObject(l.cp.cSource, runtime::CCompilerOptions::defaults());
  l.lib = std::make_unique<runtime::KernelLibrary>(obj.path, backend::packedEntryName(l.cp.kernel));
  return l;
}

TEST(KernelSafety, IndirectIndexOutOfRangeReportsStatus) {
  Loaded l = load(
      "# sizes: B=3 R=4 N=5\n"
      "def lut(float(B, R) LUT, int32(B, N) I) -> (O) {\n  O(b, n) +=! LUT(I(b, n), r)\n}\n");
  EXPECT_NE(l.cp.cSource.find("tessel_checked_index(tessel_trunc_i64"), std::string::npos);
  runtime::Buffer lut(te::DType::F32, {3, 4}), idx(te::DType::I32, {3, 5}), out(te::DType::F32, {3, 5});
  std::mt19937_64 rng(7);
  lut.randomize(rng);
  idx.randomizeIndices(rng, 3);
  EXPECT_EQ(l.lib->call({&lut, &idx, &out}), abi::kKernelOk);
  auto want = runtime::interpret(l.cp.program, {{"LUT", lut}, {"I", idx}});
  for (int64_t i = 0; i < out.size(); ++i) EXPECT_FLOAT_EQ(out.get(i), want.at("O").get(i));
  idx.set(7, 3);  // row 3 of a 3-row table
  EXPECT_EQ(l.lib->call({&lut, &idx, &out}), abi::kKernelBadIndex);
  idx.set(7, -1);
  EXPECT_EQ(l.lib->call({&lut, &idx, &out}), abi::kKernelBadIndex);
  EXPECT_THROW(runtime::interpret(l.cp.program, {{"LUT", lut}, {"I", idx}}), UserError);
}

TEST(KernelSafety, DataDependentGuardIsCheckedAtRunTime) {
  Loaded l = load(
      "# sizes: N=6\n"
      "def shift(float(N) A, float(N) B) -> (O) {\n  O(i) = A(i) > 0 ? B(i + 1) : 0\n}\n");
  EXPECT_NE(l.cp.cSource.find("tessel_checked_index(tessel_trunc_i64"), std::string::npos);
  runtime::Buffer a(te::DType::F32, {6}), b(te::DType::F32, {6}), o(te::DType::F32, {6});
  b.fill(2);
  a.fill(-1);
  EXPECT_EQ(l.lib->call({&a, &b, &o}), abi::kKernelOk);
  a.set(5, 1);  // reads B(6)
  EXPECT_EQ(l.lib->call({&a, &b, &o}), abi::kKernelBadIndex);
}

TEST(KernelSafety, ProvenPaddedReadsAreNotChecked) {
  Loaded l = load(
      "# sizes: H=9\n"
      "def pad(float(H) I) -> (O) {\n"
      "  O(h) +=! (h + k - 1 >= 0 && h + k - 1 < H) ? I(h + k - 1) : 0 where h in 0:H, k in 0:3\n}\n");
  EXPECT_EQ(l.cp.cSource.find("tessel_checked_index(tessel_trunc_i64"), std::string::npos);
}

// Quotients by constants (an upsampling's h / 2) are proven in range by
// isl like affine indices, so they carry no run-time check.
TEST(KernelSafety, ProvenQuasiAffineReadsAreNotChecked) {
  Loaded l = load(
      "# sizes: N=7\n"
      "def up(float(N) X) -> (O) {\n  O(i) = X(i / 2) + X((i + 1) / 2) + X((i - 5) / 2 + 2) where i in 0:2 * "
      "N - 1\n}\n");
  EXPECT_EQ(l.cp.cSource.find("tessel_checked_index(tessel_trunc_i64"), std::string::npos);
  runtime::Buffer x(te::DType::F32, {7}), o(te::DType::F32, {13});
  std::mt19937_64 rng(3);
  x.randomize(rng);
  EXPECT_EQ(l.lib->call({&x, &o}), abi::kKernelOk);
  auto want = runtime::interpret(l.cp.program, {{"X", x}});
  for (int64_t i = 0; i < o.size(); ++i) EXPECT_FLOAT_EQ(o.get(i), want.at("O").get(i)) << i;
}

TEST(KernelSafety, QuasiAffineReadOutOfBoundsIsACompileError) {
  try {
    load("# sizes: N=6\ndef f(float(N) X) -> (O) {\n  O(i) = X(i + i / 2) where i in 0:N\n}\n");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is out of bounds at i = 4 ('X' has shape (6))"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.loc().line, 3);
  }
}

TEST(KernelSafety, LibraryNameClashIsRenamed) {
  Loaded l = load("# sizes: N=4\ndef abs(float(N) A) -> (O) {\n  O(i) = fabs(A(i))\n}\n");
  EXPECT_EQ(backend::kernelSymbol(l.cp.kernel), "abs_kernel");
  runtime::Buffer a(te::DType::F32, {4}), o(te::DType::F32, {4});
  a.fill(-3);
  EXPECT_EQ(l.lib->call({&a, &o}), abi::kKernelOk);
  EXPECT_EQ(o.get(2), 3.0);
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

TEST(KernelSafety, WrappingGuardIsNotTrusted) {
  // i * 2^32 + i wraps to i in the kernel's int32 arithmetic (and in the
  // interpreter's), while isl would reason with exact integers: the read is
  // checked at run time instead of being "proven" by the guard.
  Loaded l = load(
      "# sizes: N=7\ndef f(float(N) A) -> (O) {\n"
      "  O(i) = (i * 65536 * 65536 + i < N) ? A(i * 65536 * 65536 + i) : 5.0 where i in 0:N\n}\n");
  EXPECT_NE(l.cp.cSource.find("tessel_checked_index(tessel_trunc_i64"), std::string::npos);
  runtime::Buffer a(te::DType::F32, {7}), o(te::DType::F32, {7});
  std::mt19937_64 rng(3);
  a.randomize(rng);
  EXPECT_EQ(l.lib->call({&a, &o}), abi::kKernelOk);
  auto want = runtime::interpret(l.cp.program, {{"A", a}});
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(o.get(i), want.at("O").get(i));
}

TEST(KernelSafety, ExactGuardThatDoesNotProtectIsACompileError) {
  te::Program p = front::testing::lowerText(
      "# sizes: N=5\ndef f(float(N) A) -> (O) {\n  O(i) = i >= 0 ? A(i + 1) : 0 where i in 0:N\n}\n");
  try {
    testing::compileFor(p, driver::CompileOptions{});
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.reason(),
              "read A((i + 1)) is out of bounds at i = 4, although it is guarded ('A' has shape (5))");
    EXPECT_EQ(e.loc().line, 3);
    EXPECT_EQ(e.loc().col, 19);
  }
}

TEST(KernelSafety, ShortCircuitGuardsProtectReads) {
  Loaded l = load(
      "# sizes: N=6\ndef f(float(N) A) -> (P, Q) {\n"
      "  P(i) = (i > 0 && A(i - 1) > 0) ? 1.0 : 2.0 where i in 0:N\n"
      "  Q(i) = (i == 0 || A(i - 1) > 0) ? 1.0 : 2.0 where i in 0:N\n}\n");
  EXPECT_EQ(l.cp.cSource.find("tessel_checked_index(tessel_trunc_i64"), std::string::npos);
  runtime::Buffer a(te::DType::F32, {6}), p(te::DType::F32, {6}), q(te::DType::F32, {6});
  std::mt19937_64 rng(5);
  a.randomize(rng);
  EXPECT_EQ(l.lib->call({&a, &p, &q}), abi::kKernelOk);
  auto want = runtime::interpret(l.cp.program, {{"A", a}});
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(p.get(i), want.at("P").get(i));
    EXPECT_EQ(q.get(i), want.at("Q").get(i));
  }
}

// Scratch arrays are kept between calls (tessel_take / tessel_keep): a kept
// array is zeroed again where the program needs zeros, and calls from
// several threads at once each get an array of their own.
TEST(KernelSafety, KeptScratchArraysAreRightOnEveryCallAndThread) {
  // T is read two rows apart: it stays a full array. S accumulates onto zeros.
  Loaded l = load(
      "# sizes: N=37 M=19\n"
      "def f(float(N, M) X) -> (O) {\n"
      "  T(i, j) = X(i, j) * 2\n"
      "  S(i, j) += T(i, j)\n"
      "  O(i, j) = S(i, j) + T(i + 2, j) where i in 0:N-2\n}\n");
  EXPECT_NE(l.cp.cSource.find("tessel_take(&"), std::string::npos) << l.cp.cSource;
  std::mt19937_64 rng(11);
  std::vector<runtime::Buffer> inputs, outputs;
  for (int t = 0; t < 4; ++t) {
    inputs.emplace_back(te::DType::F32, std::vector<int64_t>{37, 19});
    inputs.back().randomize(rng);
    outputs.emplace_back(te::DType::F32, std::vector<int64_t>{35, 19});
  }
  auto check = [&](int t) {
    auto want = runtime::interpret(l.cp.program, {{"X", inputs[t]}});
    for (int64_t i = 0; i < outputs[t].size(); ++i)
      ASSERT_FLOAT_EQ(outputs[t].get(i), want.at("O").get(i)) << "input " << t << " element " << i;
  };
  for (int call = 0; call < 3; ++call) {
    ASSERT_EQ(l.lib->call({&inputs[call % 4], &outputs[call % 4]}), abi::kKernelOk);
    check(call % 4);
  }
  std::vector<std::thread> threads;
  std::vector<int> status(4, -1);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 20; ++k) status[t] = std::max(status[t], l.lib->call({&inputs[t], &outputs[t]}));
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(status[t], abi::kKernelOk);
    check(t);
  }
}

}  // namespace
}  // namespace tessel
