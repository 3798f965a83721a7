// The vector prelude's stride-2 and quotient loads, on every lane mask:
// active lanes get their elements (stride 2: p[2i], inactive lanes 0), and no
// element past the last active lane's is read (the buffer ends at an
// unreadable page). Masked AVX2 stores (plain stores for a tail mask) write
// exactly the active lanes, none past the last. The f16 and bf16 forms give
// the scalar conversions' bits, with and without F16C.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "abi/KernelPrelude.h"
#include "abi/KernelPreludeText.h"
#include "abi/VectorMathText.h"
#include "abi/VectorPreludeText.h"
#include "runtime/CCompiler.h"

namespace tessel::abi {
namespace {

const char* const kLoadSource = R"C(
int tessel_vp_test_lanes(void) {
#if defined(__AVX512F__)
  return 16;
#elif defined(__AVX2__) && defined(__FMA__)
  return 8;
#else
  return 0;
#endif
}
/* lanes 16: AVX-512; lanes 8: AVX2 (also on an AVX-512 machine) */
void tessel_vp_test_stride2(int lanes, const float* p, unsigned mask, float* out) {
#if defined(__AVX512F__)
  if (lanes == 16) {
    _mm512_storeu_ps(out, tessel_v16_load_stride2(p, (tessel_m16)mask));
    return;
  }
#endif
#if defined(__AVX2__) && defined(__FMA__)
  int bits[8];
  for (int i = 0; i < 8; ++i) bits[i] = (mask >> i) & 1u ? -1 : 0;
  tessel_m8 m = _mm256_loadu_si256((const __m256i*)bits);
  _mm256_storeu_ps(out, tessel_v8_load_stride2(p, m));
#endif
}
/* AVX2 masked stores (tessel_v8_store, tessel_v8_stream) of lanes 1, 2, ..., 8. */
void tessel_vp_test_store(int stream, float* p, unsigned mask) {
#if defined(__AVX2__) && defined(__FMA__)
  int bits[8];
  for (int i = 0; i < 8; ++i) bits[i] = (mask >> i) & 1u ? -1 : 0;
  tessel_m8 m = _mm256_loadu_si256((const __m256i*)bits);
  tessel_v8 v = _mm256_setr_ps(1, 2, 3, 4, 5, 6, 7, 8);
  if (stream)
    tessel_v8_stream(p, m, v);
  else
    tessel_v8_store(p, m, v);
#endif
}
/* n (a multiple of 16) values converted by the vector forms, whole vectors. kind 0: f16 patterns
 * to f32, 1: bf16 patterns to f32, 2: f32 to f16 patterns, 3: f32 to bf16 patterns, 4: f32
 * rounded to f16 and back, 5: rounded to bf16 and back. */
void tessel_vp_test_convert(int lanes, int kind, const void* in, void* out, long n) {
  const uint16_t* h = (const uint16_t*)in;
  const float* f = (const float*)in;
  uint16_t* ho = (uint16_t*)out;
  float* fo = (float*)out;
#if defined(__AVX512F__)
  if (lanes == 16) {
    for (long i = 0; i < n; i += 16) {
      if (kind == 0) _mm512_storeu_ps(fo + i, tessel_v16_load_f16_full(h + i));
      if (kind == 1) _mm512_storeu_ps(fo + i, tessel_v16_load_bf16_full(h + i));
      if (kind == 2) tessel_v16_store_f16_full(ho + i, _mm512_loadu_ps(f + i));
      if (kind == 3) tessel_v16_store_bf16_full(ho + i, _mm512_loadu_ps(f + i));
      if (kind == 4) _mm512_storeu_ps(fo + i, tessel_v16_round_f16(_mm512_loadu_ps(f + i)));
      if (kind == 5) _mm512_storeu_ps(fo + i, tessel_v16_round_bf16(_mm512_loadu_ps(f + i)));
    }
    return;
  }
#endif
#if defined(__AVX2__) && defined(__FMA__)
  for (long i = 0; i < n; i += 8) {
    if (kind == 0) _mm256_storeu_ps(fo + i, tessel_v8_load_f16_full(h + i));
    if (kind == 1) _mm256_storeu_ps(fo + i, tessel_v8_load_bf16_full(h + i));
    if (kind == 2) tessel_v8_store_f16_full(ho + i, _mm256_loadu_ps(f + i));
    if (kind == 3) tessel_v8_store_bf16_full(ho + i, _mm256_loadu_ps(f + i));
    if (kind == 4) _mm256_storeu_ps(fo + i, tessel_v8_round_f16(_mm256_loadu_ps(f + i)));
    if (kind == 5) _mm256_storeu_ps(fo + i, tessel_v8_round_bf16(_mm256_loadu_ps(f + i)));
  }
#endif
}
/* Masked 16-bit loads (kind 0: f16, 1: bf16) into out, or stores (2: f16, 3: bf16) of the lane
 * values 1, 2, ..., lanes. */
void tessel_vp_test_narrow_masked(int lanes, int kind, uint16_t* p, unsigned mask, float* out) {
#if defined(__AVX512F__)
  if (lanes == 16) {
    const tessel_m16 m = (tessel_m16)mask;
    const tessel_v16 v = _mm512_setr_ps(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    if (kind == 0) _mm512_storeu_ps(out, tessel_v16_load_f16(p, m));
    if (kind == 1) _mm512_storeu_ps(out, tessel_v16_load_bf16(p, m));
    if (kind == 2) tessel_v16_store_f16(p, m, v);
    if (kind == 3) tessel_v16_store_bf16(p, m, v);
    return;
  }
#endif
#if defined(__AVX2__) && defined(__FMA__)
  int bits[8];
  for (int i = 0; i < 8; ++i) bits[i] = (mask >> i) & 1u ? -1 : 0;
  const tessel_m8 m = _mm256_loadu_si256((const __m256i*)bits);
  const tessel_v8 v = _mm256_setr_ps(1, 2, 3, 4, 5, 6, 7, 8);
  if (kind == 0) _mm256_storeu_ps(out, tessel_v8_load_f16(p, m));
  if (kind == 1) _mm256_storeu_ps(out, tessel_v8_load_bf16(p, m));
  if (kind == 2) tessel_v8_store_f16(p, m, v);
  if (kind == 3) tessel_v8_store_bf16(p, m, v);
#endif
}
/* Lane i reads p[(n0 + i) / 2^shift - n0 / 2^shift]. */
void tessel_vp_test_quotient(int lanes, const float* p, int n0, int shift, unsigned mask, float* out) {
#if defined(__AVX512F__)
  if (lanes == 16) {
    _mm512_storeu_ps(out, tessel_v16_load_quotient(p, n0, shift, (tessel_m16)mask));
    return;
  }
#endif
#if defined(__AVX2__) && defined(__FMA__)
  int bits[8];
  for (int i = 0; i < 8; ++i) bits[i] = (mask >> i) & 1u ? -1 : 0;
  tessel_m8 m = _mm256_loadu_si256((const __m256i*)bits);
  _mm256_storeu_ps(out, tessel_v8_load_quotient(p, n0, shift, m));
#endif
}
)C";

using QuotientFn = void (*)(int, const float*, int, int, unsigned, float*);
using LoadFn = void (*)(int, const float*, unsigned, float*);

// Two pages; the second one unreadable. Returns the start of the mapping.
float* guardedPages(size_t page) {
  void* m = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::runtime_error("mmap failed");
  if (mprotect(static_cast<char*>(m) + page, page, PROT_NONE) != 0)
    throw std::runtime_error("mprotect failed");
  return static_cast<float*>(m);
}

void checkEveryMask(LoadFn load, int lanes, float* pages, size_t page) {
  float* end = pages + page / sizeof(float);  // the first unreadable float
  for (unsigned mask = 1; mask < (1u << lanes); ++mask) {
    int last = 31 - __builtin_clz(mask);
    // The last active lane's element is the last readable float.
    float* p = end - (2 * last + 1);
    for (int i = 0; i <= 2 * last; ++i) p[i] = static_cast<float>(i + 1);
    float out[16];
    load(lanes, p, mask, out);
    for (int i = 0; i < lanes; ++i) {
      float want = (mask >> i) & 1u ? static_cast<float>(2 * i + 1) : 0.0f;
      ASSERT_EQ(out[i], want) << lanes << " lanes, mask " << mask << ", lane " << i;
    }
  }
}

// The test functions compiled with the prelude, and two guarded pages.
// `extraFlags`: added to the kernels' compiler flags.
class VectorPreludeTest : public ::testing::Test {
 protected:
  void SetUp() override { setUpWith({}); }
  void setUpWith(const std::vector<std::string>& extraFlags) {
    std::string source = std::string(kKernelPrelude) + vectorMathText() + kVectorPrelude + kLoadSource;
    runtime::CCompilerOptions options = runtime::CCompilerOptions::defaults();
    options.flags.insert(options.flags.end(), extraFlags.begin(), extraFlags.end());
    object_ = runtime::compileSharedObject(source, options);
    handle_ = dlopen(object_.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    widest_ = reinterpret_cast<int (*)()>(dlsym(handle_, "tessel_vp_test_lanes"))();
    if (widest_ == 0) GTEST_SKIP() << "no AVX2+FMA on this CPU";
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    pages_ = guardedPages(page_);
  }
  void TearDown() override {
    if (pages_) munmap(pages_, 2 * page_);
  }
  template <typename Fn>
  Fn function(const char* name) const {
    return reinterpret_cast<Fn>(dlsym(handle_, name));
  }

  runtime::CompiledObject object_;
  void* handle_ = nullptr;
  int widest_ = 0;
  size_t page_ = 0;
  float* pages_ = nullptr;
};

TEST_F(VectorPreludeTest, Stride2LoadsReadOnlyTheActiveLanesElements) {
  auto load = function<LoadFn>("tessel_vp_test_stride2");
  if (widest_ == 16) checkEveryMask(load, 16, pages_, page_);
  checkEveryMask(load, 8, pages_, page_);
}

// Numerators from -40 to 40 (negative ones truncate toward zero, as C
// divides), divisors 2 to 16, every lane mask; inactive lanes may hold
// anything.
void checkQuotients(QuotientFn load, int lanes, float* pages, size_t page) {
  float* end = pages + page / sizeof(float);
  for (int shift = 1; shift <= 4; ++shift)
    for (int n0 = -40; n0 <= 40; n0 += (lanes == 16 ? 3 : 1)) {
      int d = 1 << shift;
      for (unsigned mask = 1; mask < (1u << lanes); mask += (lanes == 16 ? 7 : 1)) {
        int last = 31 - __builtin_clz(mask);
        int span = (n0 + last) / d - n0 / d;  // the last active lane's element
        float* p = end - (span + 1);
        for (int i = 0; i <= span; ++i) p[i] = static_cast<float>(i + 1);
        float out[16];
        load(lanes, p, n0, shift, mask, out);
        for (int i = 0; i < lanes; ++i) {
          if (!((mask >> i) & 1u)) continue;
          ASSERT_EQ(out[i], static_cast<float>((n0 + i) / d - n0 / d + 1))
              << lanes << " lanes, n0 " << n0 << ", d " << d << ", mask " << mask << ", lane " << i;
        }
      }
    }
}

TEST_F(VectorPreludeTest, QuotientLoadsReadOnlyTheActiveLanesElements) {
  auto load = function<QuotientFn>("tessel_vp_test_quotient");
  if (widest_ == 16) checkQuotients(load, 16, pages_, page_);
  checkQuotients(load, 8, pages_, page_);
}

// Every mask, prefixes (tails) and others, plain and streaming: the active
// lanes are written, the others keep their values, and the last active
// lane's element is the last writable float.
TEST_F(VectorPreludeTest, MaskedStoresWriteOnlyTheActiveLanes) {
  auto store = function<void (*)(int, float*, unsigned)>("tessel_vp_test_store");
  float* end = pages_ + page_ / sizeof(float);
  for (int stream : {0, 1})
    for (unsigned mask = 1; mask < 256; ++mask) {
      int last = 31 - __builtin_clz(mask);
      float* p = end - (last + 1);
      for (int i = 0; i <= last; ++i) p[i] = -1.0f;
      store(stream, p, mask);
      for (int i = 0; i <= last; ++i)
        ASSERT_EQ(p[i], (mask >> i) & 1u ? static_cast<float>(i + 1) : -1.0f)
            << "stream " << stream << ", mask " << mask << ", lane " << i;
    }
}

using ConvertFn = void (*)(int, int, const void*, void*, long);

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float floatOf(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// f32 inputs for the narrowing conversions: every pattern of the bits kept
// (sign, exponent, the mantissa's high bits: zeros, subnormals, infinities
// and NaNs included) with the dropped bits just below, at and above half
// of the last kept one's weight (ties both ways), and at their extremes.
std::vector<float> narrowingInputs(int droppedBits) {
  uint32_t half = 1u << (droppedBits - 1), all = (1u << droppedBits) - 1;
  std::vector<float> in;
  for (uint32_t high = 0; high < (1u << (32 - droppedBits)); ++high)
    for (uint32_t low : {0u, 1u, half - 1, half, half + 1, all})
      in.push_back(floatOf((high << droppedBits) | low));
  return in;
}

// The vector conversions give the scalar ones' bits on every input.
void checkConversions(ConvertFn convert, int lanes) {
  std::vector<uint16_t> patterns(65536);
  for (uint32_t h = 0; h < 65536; ++h) patterns[h] = static_cast<uint16_t>(h);
  std::vector<float> widened(65536);
  for (int kind : {0, 1}) {
    convert(lanes, kind, patterns.data(), widened.data(), 65536);
    for (uint32_t h = 0; h < 65536; ++h) {
      uint16_t p = static_cast<uint16_t>(h);
      float want = kind == 0 ? tessel_f16_to_f32(p) : tessel_bf16_to_f32(p);
      ASSERT_EQ(bitsOf(widened[h]), bitsOf(want)) << lanes << " lanes, kind " << kind << ", pattern " << h;
    }
  }
  // f16 keeps 13 fewer mantissa bits than f32 (its exponent range is
  // covered because every exponent pattern is), bf16 16.
  for (int kind : {2, 3, 4, 5}) {
    bool f16 = kind == 2 || kind == 4;
    std::vector<float> in = narrowingInputs(f16 ? 13 : 16);
    in.resize(in.size() / 16 * 16);
    std::vector<uint16_t> narrow(in.size());
    std::vector<float> rounded(in.size());
    convert(lanes, kind, in.data(), kind <= 3 ? static_cast<void*>(narrow.data()) : rounded.data(),
            static_cast<long>(in.size()));
    for (size_t i = 0; i < in.size(); ++i) {
      uint16_t want = f16 ? tessel_f32_to_f16(in[i]) : tessel_f32_to_bf16(in[i]);
      if (kind <= 3)
        ASSERT_EQ(narrow[i], want) << lanes << " lanes, kind " << kind << ", input bits " << bitsOf(in[i]);
      else
        ASSERT_EQ(bitsOf(rounded[i]), bitsOf(f16 ? tessel_f16_to_f32(want) : tessel_bf16_to_f32(want)))
            << lanes << " lanes, kind " << kind << ", input bits " << bitsOf(in[i]);
    }
  }
}

TEST_F(VectorPreludeTest, SixteenBitFloatConversionsMatchTheScalarOnesBitForBit) {
  auto convert = function<ConvertFn>("tessel_vp_test_convert");
  if (widest_ == 16) checkConversions(convert, 16);
  checkConversions(convert, 8);
}

// Masked 16-bit loads read, and masked stores write, only the active lanes'
// elements; the last active lane's element is the page's last.
void checkNarrowMasks(void (*fn)(int, int, uint16_t*, unsigned, float*), int lanes, float* pages,
                      size_t page) {
  uint16_t* end = reinterpret_cast<uint16_t*>(pages) + page / sizeof(uint16_t);
  for (int kind = 0; kind < 4; ++kind)
    for (unsigned mask = 1; mask < (1u << lanes); mask += (lanes == 16 ? 5 : 1)) {
      int last = 31 - __builtin_clz(mask);
      uint16_t* p = end - (last + 1);
      bool f16 = kind % 2 == 0;
      for (int i = 0; i <= last; ++i) {
        float v = static_cast<float>(i + 1);
        p[i] = kind < 2 ? (f16 ? tessel_f32_to_f16(v) : tessel_f32_to_bf16(v)) : uint16_t{0xABCD};
      }
      float out[16];
      fn(lanes, kind, p, mask, out);
      for (int i = 0; i < (kind < 2 ? lanes : last + 1); ++i) {
        bool active = (mask >> i) & 1u;
        float v = static_cast<float>(i + 1);
        if (kind < 2)
          ASSERT_EQ(out[i], active ? v : 0.0f) << lanes << " lanes, kind " << kind << ", mask " << mask;
        else
          ASSERT_EQ(p[i], active ? (f16 ? tessel_f32_to_f16(v) : tessel_f32_to_bf16(v)) : uint16_t{0xABCD})
              << lanes << " lanes, kind " << kind << ", mask " << mask << ", lane " << i;
      }
    }
}

TEST_F(VectorPreludeTest, MaskedSixteenBitLoadsAndStoresTouchOnlyTheActiveLanes) {
  auto fn = function<void (*)(int, int, uint16_t*, unsigned, float*)>("tessel_vp_test_narrow_masked");
  if (widest_ == 16) checkNarrowMasks(fn, 16, pages_, page_);
  checkNarrowMasks(fn, 8, pages_, page_);
}

// Without F16C (and AVX-512 BW/VL) the AVX2 forms convert lane by lane and
// the AVX-512 ones copy masked lanes: the same bits.
class VectorPreludeWithoutF16cTest : public VectorPreludeTest {
 protected:
  void SetUp() override { setUpWith({"-mno-f16c", "-mno-avx512bw", "-mno-avx512vl"}); }
};

TEST_F(VectorPreludeWithoutF16cTest, SixteenBitFormsMatchTheScalarOnes) {
  auto convert = function<ConvertFn>("tessel_vp_test_convert");
  if (widest_ == 16) checkConversions(convert, 16);
  checkConversions(convert, 8);
  auto fn = function<void (*)(int, int, uint16_t*, unsigned, float*)>("tessel_vp_test_narrow_masked");
  if (widest_ == 16) checkNarrowMasks(fn, 16, pages_, page_);
  checkNarrowMasks(fn, 8, pages_, page_);
}

}  // namespace
}  // namespace tessel::abi
