// The vector prelude's stride-2 and quotient loads, on every lane mask:
// active lanes get their elements (stride 2: p[2i], inactive lanes 0), and no
// element past the last active lane's is read (the buffer ends at an
// unreadable page). Masked AVX2 stores (plain stores for a tail mask) write
// exactly the active lanes, none past the last.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

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
class VectorPreludeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string source = std::string(kKernelPrelude) + vectorMathText() + kVectorPrelude + kLoadSource;
    object_ = runtime::compileSharedObject(source, runtime::CCompilerOptions::defaults());
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

}  // namespace
}  // namespace tessel::abi
