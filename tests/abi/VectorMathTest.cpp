// Accuracy and special values of the vector math functions (src/abi/VectorMath.h): a small C
// kernel built from the prelude, the embedded header and an evaluation loop is compiled by the
// kernel compiler, and every function is compared with libm in double rounded to f32 on
// ~1.5 million inputs each (every 4099th bit pattern, a dense sweep of the interesting range,
// uniform random values and the special values), for the AVX-512 and the AVX2 versions.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "abi/KernelPreludeText.h"
#include "abi/VectorMathText.h"
#include "runtime/CCompiler.h"

namespace tessel::abi {
namespace {

// Evaluates function `fn` (the order of kFunctions) on n inputs, n a multiple of 16.
const char* const kEvalSource = R"C(
int tessel_vm_test_has_v16(void) {
#if defined(__AVX512F__)
  return 1;
#else
  return 0;
#endif
}
int tessel_vm_test_has_v8(void) {
#if defined(__AVX2__) && defined(__FMA__)
  return 1;
#else
  return 0;
#endif
}
void tessel_vm_test_eval_v16(int fn, const float* in, float* out, long n) {
#if defined(__AVX512F__)
  for (long i = 0; i < n; i += 16) {
    __m512 x = _mm512_loadu_ps(in + i), y;
    switch (fn) {
      case 0: y = tessel_exp_v16(x); break;
      case 1: y = tessel_log_v16(x); break;
      case 2: y = tessel_tanh_v16(x); break;
      case 3: y = tessel_sigmoid_v16(x); break;
      default: y = tessel_erf_v16(x); break;
    }
    _mm512_storeu_ps(out + i, y);
  }
#endif
}
void tessel_vm_test_eval_v8(int fn, const float* in, float* out, long n) {
#if defined(__AVX2__) && defined(__FMA__)
  for (long i = 0; i < n; i += 8) {
    __m256 x = _mm256_loadu_ps(in + i), y;
    switch (fn) {
      case 0: y = tessel_exp_v8(x); break;
      case 1: y = tessel_log_v8(x); break;
      case 2: y = tessel_tanh_v8(x); break;
      case 3: y = tessel_sigmoid_v8(x); break;
      default: y = tessel_erf_v8(x); break;
    }
    _mm256_storeu_ps(out + i, y);
  }
#endif
}
)C";

using EvalFn = void (*)(int, const float*, float*, long);

struct TestKernel {
  bool hasV16 = false, hasV8 = false;
  EvalFn evalV16 = nullptr, evalV8 = nullptr;
};

const TestKernel& testKernel() {
  static const TestKernel kernel = [] {
    std::string source = std::string(kKernelPrelude) + vectorMathText() + kEvalSource;
    auto object = runtime::compileSharedObject(source, runtime::CCompilerOptions::defaults());
    void* handle = dlopen(object.path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept for the process
    if (!handle) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    auto has = [&](const char* name) { return reinterpret_cast<int (*)()>(dlsym(handle, name))() != 0; };
    TestKernel k;
    k.hasV16 = has("tessel_vm_test_has_v16");
    k.hasV8 = has("tessel_vm_test_has_v8");
    k.evalV16 = reinterpret_cast<EvalFn>(dlsym(handle, "tessel_vm_test_eval_v16"));
    k.evalV8 = reinterpret_cast<EvalFn>(dlsym(handle, "tessel_vm_test_eval_v8"));
    return k;
  }();
  return kernel;
}

struct MathFunction {
  const char* name;
  double (*reference)(double);
  int documentedMaxUlp;    // the bound VectorMath.h states (measured exhaustively over all floats)
  float sweepLo, sweepHi;  // the range where the function is neither trivial nor saturated
};

double sigmoidReference(double x) { return 1.0 / (1.0 + std::exp(-x)); }

const MathFunction kFunctions[] = {
    {"exp", [](double x) { return std::exp(x); }, 1, -104.0f, 89.0f},
    {"log", [](double x) { return std::log(x); }, 1, 0.0f, 1e10f},
    {"tanh", [](double x) { return std::tanh(x); }, 2, -10.0f, 10.0f},
    {"sigmoid", sigmoidReference, 2, -105.0f, 20.0f},
    {"erf", [](double x) { return std::erf(x); }, 1, -4.5f, 4.5f},
};
constexpr int kExp = 0, kLog = 1, kTanh = 2, kSigmoid = 3, kErf = 4;

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint32_t toBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}
// Position on the number line counted in floats (+0 and -0 both 0), so that
// |ordinal(a) - ordinal(b)| is the distance in ulps, across binades and denormals too.
int64_t ordinal(float f) {
  uint32_t bits = toBits(f);
  int64_t magnitude = bits & 0x7fffffffu;
  return (bits >> 31) ? -magnitude : magnitude;
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> specialInputs() {
  std::vector<float> v = {0.0f, -0.0f, kInf, -kInf, kNaN, -kNaN,
                          fromBits(0x7f800001u),  // signalling NaN
                          std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::max(), 1.0f, 0.5f, 2.0f,
                          88.72283935546875f,  // largest x with a finite expf
                          88.7228470f,
                          -87.336544f,  // exp(x) near FLT_MIN
                          -103.972076f,
                          -103.972084f,  // exp(x) near half the smallest denormal
                          0.549306144f,  // tanh's branch point (erf's is 1)
                          9.01f, 3.9192059f, 0.70710677f, 1.41421354f, 1.41421366f,
                          // The worst cases of the exhaustive measurement.
                          0x1p-24f,         // exp: 1 ulp
                          0x1.197514p-1f,   // tanh: 2 ulp
                          -0x1.194ac2p+0f,  // sigmoid: 2 ulp
                          0x1.91b4p-135f};  // erf: 1 ulp
  size_t n = v.size();
  for (size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  return v;
}

std::vector<float> accuracyInputs(const MathFunction& f) {
  std::vector<float> in = specialInputs();
  // Every 4099th bit pattern: both signs, every binade, denormals, infinities and NaNs.
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4099)
    in.push_back(fromBits(static_cast<uint32_t>(bits)));
  // A dense sweep of the interesting range, equally spaced in ulps.
  int64_t lo = ordinal(f.sweepLo), hi = ordinal(f.sweepHi);
  int64_t step = std::max<int64_t>(1, (hi - lo) / 400000) | 1;  // odd: reaches every low mantissa bit
  for (int64_t o = lo; o <= hi; o += step)
    in.push_back(o < 0 ? fromBits(static_cast<uint32_t>(-o) | 0x80000000u)
                       : fromBits(static_cast<uint32_t>(o)));
  // Uniform random values, which weigh large magnitudes more than the sweeps.
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> uniform(f.sweepLo, f.sweepHi);
  for (int i = 0; i < 200000; ++i) in.push_back(uniform(rng));
  while (in.size() % 16) in.push_back(1.0f);
  return in;
}

struct Measurement {
  int64_t maxUlp = 0;
  float worstInput = 0, worstResult = 0, worstReference = 0;
  std::vector<std::string> specialFailures;  // NaN, infinity or zero-sign mismatches
};

Measurement measure(const MathFunction& f, int fn, EvalFn eval) {
  std::vector<float> in = accuracyInputs(f), out(in.size());
  eval(fn, in.data(), out.data(), static_cast<long>(in.size()));
  Measurement m;
  for (size_t i = 0; i < in.size(); ++i) {
    float want = static_cast<float>(f.reference(static_cast<double>(in[i])));
    float got = out[i];
    bool special =
        std::isnan(want) || std::isnan(got) || std::isinf(want) || std::isinf(got) || (want == 0 && got == 0);
    if (special) {
      bool same = std::isnan(want) ? std::isnan(got) : toBits(want) == toBits(got);
      if (!same && m.specialFailures.size() < 10) {
        char line[160];
        std::snprintf(line, sizeof line, "%s(%a) = %a, want %a", f.name, in[i], got, want);
        m.specialFailures.push_back(line);
      }
      continue;
    }
    int64_t ulps = std::llabs(ordinal(got) - ordinal(want));
    if (ulps > m.maxUlp) {
      m.maxUlp = ulps;
      m.worstInput = in[i];
      m.worstResult = got;
      m.worstReference = want;
    }
  }
  return m;
}

void checkAccuracy(EvalFn eval, const char* width) {
  for (int fn = 0; fn < 5; ++fn) {
    const MathFunction& f = kFunctions[fn];
    Measurement m = measure(f, fn, eval);
    std::printf("  %-8s %s: max %lld ulp (documented %d) at x = %a: got %a, libm %a\n", f.name, width,
                static_cast<long long>(m.maxUlp), f.documentedMaxUlp, m.worstInput, m.worstResult,
                m.worstReference);
    EXPECT_LE(m.maxUlp, f.documentedMaxUlp) << f.name << " " << width << " at x = " << m.worstInput;
    for (const auto& failure : m.specialFailures) ADD_FAILURE() << width << ": " << failure;
  }
}

TEST(VectorMathTest, AccuracyAvx512) {
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512F on this CPU";
  ASSERT_TRUE(testKernel().hasV16) << "kernels are compiled without AVX-512F";
  checkAccuracy(testKernel().evalV16, "v16");
}

TEST(VectorMathTest, AccuracyAvx2) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "no AVX2+FMA on this CPU";
  ASSERT_TRUE(testKernel().hasV8) << "kernels are compiled without AVX2+FMA";
  checkAccuracy(testKernel().evalV8, "v8");
}

// A vectorized loop may mix widths (v16 body, v8 remainder): both must give the same bits.
TEST(VectorMathTest, WidthsAgreeBitForBit) {
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512F on this CPU";
  for (int fn = 0; fn < 5; ++fn) {
    std::vector<float> in = accuracyInputs(kFunctions[fn]), wide(in.size()), narrow(in.size());
    testKernel().evalV16(fn, in.data(), wide.data(), static_cast<long>(in.size()));
    testKernel().evalV8(fn, in.data(), narrow.data(), static_cast<long>(in.size()));
    int64_t differences = 0;
    for (size_t i = 0; i < in.size(); ++i)
      if (!(std::isnan(wide[i]) && std::isnan(narrow[i])) && toBits(wide[i]) != toBits(narrow[i]))
        ++differences;
    EXPECT_EQ(differences, 0) << kFunctions[fn].name;
  }
}

// The C library's special values, lane by lane, with the specials mixed among ordinary
// values so that no lane's result depends on another's.
void checkSpecialValues(EvalFn eval, const char* width) {
  struct Case {
    int fn;
    float x, want;  // want NaN: any NaN
  };
  const float tiny = std::numeric_limits<float>::denorm_min();
  const Case cases[] = {
      {kExp, kInf, kInf},
      {kExp, -kInf, 0.0f},
      {kExp, 88.7228470f, kInf},
      {kExp, 1000.0f, kInf},
      {kExp, -1000.0f, 0.0f},
      {kExp, kNaN, kNaN},
      {kExp, 0.0f, 1.0f},
      {kExp, -0.0f, 1.0f},
      {kLog, 0.0f, -kInf},
      {kLog, -0.0f, -kInf},
      {kLog, -1.0f, kNaN},
      {kLog, -kInf, kNaN},
      {kLog, kInf, kInf},
      {kLog, kNaN, kNaN},
      {kLog, 1.0f, 0.0f},
      {kLog, -tiny, kNaN},
      {kTanh, kInf, 1.0f},
      {kTanh, -kInf, -1.0f},
      {kTanh, -0.0f, -0.0f},
      {kTanh, 0.0f, 0.0f},
      {kTanh, kNaN, kNaN},
      {kTanh, 20.0f, 1.0f},
      {kTanh, -tiny, -tiny},
      {kSigmoid, -kInf, 0.0f},
      {kSigmoid, kInf, 1.0f},
      {kSigmoid, kNaN, kNaN},
      {kSigmoid, 0.0f, 0.5f},
      {kSigmoid, -0.0f, 0.5f},
      {kSigmoid, -200.0f, 0.0f},
      {kErf, kInf, 1.0f},
      {kErf, -kInf, -1.0f},
      {kErf, -0.0f, -0.0f},
      {kErf, 0.0f, 0.0f},
      {kErf, kNaN, kNaN},
      {kErf, 5.0f, 1.0f},
      {kErf, -5.0f, -1.0f},
      // The shortcuts that keep huge, tiny and denormal inputs off the slow paths.
      {kExp, -1e9f, 0.0f},
      {kExp, 1e-30f, 1.0f},
      {kExp, -tiny, 1.0f},
      {kTanh, 1e-30f, 1e-30f},
      {kTanh, -1e-40f, -1e-40f},
      {kSigmoid, 100.0f, 1.0f},
      {kSigmoid, -1e9f, 0.0f},
      {kSigmoid, -tiny, 0.5f},
      {kErf, 1e-30f, static_cast<float>(std::erf(1e-30))},
  };
  for (const Case& c : cases) {
    // Lane 5 holds the special input; the others ordinary values.
    float in[16], out[16];
    for (int i = 0; i < 16; ++i) in[i] = 0.25f * static_cast<float>(i + 1);
    in[5] = c.x;
    eval(c.fn, in, out, 16);
    const char* name = kFunctions[c.fn].name;
    if (std::isnan(c.want))
      EXPECT_TRUE(std::isnan(out[5])) << width << " " << name << "(" << c.x << ") = " << out[5];
    else
      EXPECT_EQ(toBits(out[5]), toBits(c.want))
          << width << " " << name << "(" << c.x << ") = " << out[5] << ", want " << c.want;
    for (int i = 0; i < 16; ++i) {
      if (i == 5) continue;
      double want = kFunctions[c.fn].reference(in[i]);
      EXPECT_NEAR(out[i], want, 1e-6 * std::fabs(want)) << width << " " << name << " lane " << i;
    }
  }
}

TEST(VectorMathTest, SpecialValuesAvx512) {
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512F on this CPU";
  checkSpecialValues(testKernel().evalV16, "v16");
}

TEST(VectorMathTest, SpecialValuesAvx2) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "no AVX2+FMA on this CPU";
  checkSpecialValues(testKernel().evalV8, "v8");
}

// The header is self-contained, warning-free ISO C11: it compiles on its own, without the
// prelude, for this machine and for a baseline x86-64 (no AVX: both groups compiled out).
TEST(VectorMathTest, CompilesAloneAsStrictC11) {
  const char* const arches[] = {"-march=native", "-march=x86-64"};
  for (const char* arch : arches) {
    runtime::CCompilerOptions options = runtime::CCompilerOptions::defaults();
    options.flags = {"-std=c11", "-O2",     arch,         "-fPIC",  "-shared",
                     "-Wall",    "-Wextra", "-Wpedantic", "-Werror"};
    std::string source = vectorMathText();
    if (std::string(arch) == "-march=x86-64")
      source += "\n#if defined(__AVX2__) || defined(__AVX512F__)\n#error not a baseline x86-64\n#endif\n";
    source += "\nint tessel_vm_test_nothing(void) { return 0; }\n";
    try {
      runtime::compileSharedObject(source, options);
    } catch (const std::exception& e) {
      ADD_FAILURE() << arch << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace tessel::abi
