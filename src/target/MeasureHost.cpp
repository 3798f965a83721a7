#include "target/MeasureHost.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/Buffer.h"
#include "runtime/CCompiler.h"
#include "runtime/KernelLibrary.h"

namespace tessel::target {

namespace {

// Operations of the benchmark library; params[0] selects one.
enum class Op { FmaOneCore = 0, FmaAllCores = 1, InitArrays = 2, Triad = 3 };
constexpr int kFmaChains = 12;  // independent accumulators; see the C source
constexpr const char* kEntry = "tessel_measure__packed";

// Twelve independent FMA chains cover the latency (4 cycles) of two FMA
// ports with room to spare; acc*m + c with m just below 1 converges to c/(1-m),
// so values stay normal (no denormal slow paths) however long it runs.
// Intrinsics, not plain C: kernels are compiled with -ffp-contract=off.
constexpr const char* kBenchmarkSource = R"C(
#include <math.h>
#include <omp.h>

#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512 vec;
#define VBITS 512
#define VSET _mm512_set1_ps
#define VFMA _mm512_fmadd_ps
static float vsum(vec v) { return _mm512_reduce_add_ps(v); }
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
typedef __m256 vec;
#define VBITS 256
#define VSET _mm256_set1_ps
#define VFMA _mm256_fmadd_ps
static float vsum(vec v) {
  float t[8];
  _mm256_storeu_ps(t, v);
  return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}
#else
typedef float vec;
#define VBITS 32
#define VSET(x) (x)
#define VFMA fmaf
static float vsum(vec v) { return v; }
#endif

static float fma_chains(long iters) {
  const vec m = VSET(0.99999994f), c = VSET(1e-7f);
  vec a0 = VSET(1.0f), a1 = VSET(1.1f), a2 = VSET(1.2f), a3 = VSET(1.3f), a4 = VSET(1.4f), a5 = VSET(1.5f);
  vec a6 = VSET(1.6f), a7 = VSET(1.7f), a8 = VSET(1.8f), a9 = VSET(1.9f), a10 = VSET(2.0f), a11 = VSET(2.1f);
  for (long i = 0; i < iters; ++i) {
    a0 = VFMA(a0, m, c); a1 = VFMA(a1, m, c); a2 = VFMA(a2, m, c); a3 = VFMA(a3, m, c);
    a4 = VFMA(a4, m, c); a5 = VFMA(a5, m, c); a6 = VFMA(a6, m, c); a7 = VFMA(a7, m, c);
    a8 = VFMA(a8, m, c); a9 = VFMA(a9, m, c); a10 = VFMA(a10, m, c); a11 = VFMA(a11, m, c);
  }
  return vsum(a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11);
}

static void triad(double* restrict a, const double* restrict b, const double* restrict c, long n, long reps,
                  int parallel) {
  const double s = 3.0;
  for (long r = 0; r < reps; ++r) {
    if (parallel) {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    } else {
      for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    }
  }
}

/* args: params (f64: op, count, reps, parallel), results (f64: checksum, vector bits, threads), a, b, c */
int tessel_measure__packed(void** args) {
  const double* p = (const double*)args[0];
  double* out = (double*)args[1];
  int op = (int)p[0];
  long count = (long)p[1];
  out[1] = VBITS;
  out[2] = 1;
  if (op == 0) {
    out[0] = fma_chains(count);
  } else if (op == 1) {
    double sum = 0;
    int threads = 1;
#pragma omp parallel reduction(+ : sum)
    {
      sum += fma_chains(count);
#pragma omp master
      threads = omp_get_num_threads();
    }
    out[0] = sum;
    out[2] = threads;
  } else {
    double* a = (double*)args[2];
    double* b = (double*)args[3];
    double* c = (double*)args[4];
    if (op == 2) {
      /* The same static schedule as the triad: each thread touches its own pages first. */
#pragma omp parallel for schedule(static)
      for (long i = 0; i < count; ++i) {
        a[i] = 0;
        b[i] = 1;
        c[i] = 2;
      }
    } else {
      triad(a, b, c, count, (long)p[2], (int)p[3]);
      out[0] = a[count - 1];
    }
  }
  return 0;
}
)C";

// The compiled benchmark library and its argument buffers.
class Benchmark {
 public:
  Benchmark()
      : library_(runtime::compileSharedObject(kBenchmarkSource, runtime::CCompilerOptions::defaults()).path,
                 kEntry) {}

  struct Result {
    double seconds = 0;
    int vectorBits = 0;
    int threads = 1;
  };

  Result run(Op op, int64_t count, int64_t reps = 1, bool parallel = false,
             std::vector<runtime::Buffer*> arrays = {}) {
    params_.set(0, static_cast<int>(op));
    params_.set(1, static_cast<double>(count));
    params_.set(2, static_cast<double>(reps));
    params_.set(3, parallel ? 1 : 0);
    std::vector<runtime::Buffer*> args = {&params_, &results_};
    args.insert(args.end(), arrays.begin(), arrays.end());
    auto start = std::chrono::steady_clock::now();
    library_.call(args);
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    return {elapsed.count(), static_cast<int>(results_.get(1)), static_cast<int>(results_.get(2))};
  }

  // The median time of several runs after one warm-up run.
  Result median(Op op, int64_t count, int64_t reps = 1, bool parallel = false,
                std::vector<runtime::Buffer*> arrays = {}) {
    constexpr int kRuns = 5;
    run(op, count, reps, parallel, arrays);
    std::vector<Result> results;
    for (int i = 0; i < kRuns; ++i) results.push_back(run(op, count, reps, parallel, arrays));
    std::sort(results.begin(), results.end(),
              [](const Result& a, const Result& b) { return a.seconds < b.seconds; });
    return results[kRuns / 2];
  }

  void setThreads(int n) const { library_.setThreads(n); }

 private:
  runtime::KernelLibrary library_;
  runtime::Buffer params_{te::DType::F64, {4}};
  runtime::Buffer results_{te::DType::F64, {3}};
};

// How often to repeat a run of `unitSeconds` so that it lasts about `target`.
int64_t repetitionsFor(double unitSeconds, double target) {
  return std::max<int64_t>(1, static_cast<int64_t>(target / std::max(unitSeconds, 1e-9)));
}

// Bytes of memory the system can give without swapping (MemAvailable).
int64_t availableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);)
    if (line.rfind("MemAvailable:", 0) == 0) return std::stoll(line.substr(13)) * 1024;
  return static_cast<int64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
}

std::string rate(double value, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", value / 1e9, unit);
  return buf;
}

constexpr double kTargetSeconds = 0.05;  // per timed run

void measureFmaPeak(Benchmark& bench, Hardware& hw, std::ostream* log) {
  // Grow the iteration count until one run is long enough to time.
  int64_t iters = 1 << 14;
  double seconds = bench.run(Op::FmaOneCore, iters).seconds;
  while (seconds < kTargetSeconds / 10) {
    iters *= 4;
    seconds = bench.run(Op::FmaOneCore, iters).seconds;
  }
  iters = iters * repetitionsFor(seconds, kTargetSeconds);
  Benchmark::Result one = bench.median(Op::FmaOneCore, iters);
  bench.setThreads(hw.cores);
  Benchmark::Result all = bench.median(Op::FmaAllCores, iters);
  double flopsPerIteration = 2.0 * kFmaChains * (one.vectorBits / 32);
  hw.peakF32FlopsPerCore = flopsPerIteration * static_cast<double>(iters) / one.seconds;
  hw.peakF32Flops = flopsPerIteration * static_cast<double>(iters) * all.threads / all.seconds;
  hw.peakSource = "measured";
  if (log) {
    *log << "fp32 FMA peak (" << one.vectorBits
         << "-bit vectors): " << rate(hw.peakF32FlopsPerCore, "GFLOP/s") << " on 1 core, "
         << rate(hw.peakF32Flops, "GFLOP/s") << " on " << all.threads << "\n";
    if (one.vectorBits != hw.bestVectorUnit().vectorBits)
      *log << "  note: the C compiler's vectors (" << one.vectorBits << " bits) are not the best unit's ("
           << hw.bestVectorUnit().vectorBits << " bits); check TESSEL_CC / TESSEL_CFLAGS\n";
  }
}

// Triad bytes as STREAM counts them: two reads and one write of 8 bytes.
constexpr double kTriadBytesPerElement = 24;

void measureDram(Benchmark& bench, Hardware& hw, std::ostream* log) {
  MemoryLevel* dram = hw.memory.empty() ? nullptr : &hw.memory.back();
  if (!dram || dram->capacityBytes != 0) return;
  int64_t largestCache = 0;
  for (const MemoryLevel& m : hw.memory) largestCache = std::max(largestCache, m.capacityBytes);
  // Each array far larger than every cache; all three within a quarter of
  // the free memory.
  int64_t arrayBytes = std::max<int64_t>(int64_t{256} << 20, 4 * largestCache);
  arrayBytes = std::min(arrayBytes, availableMemoryBytes() / 12);
  int64_t n = arrayBytes / 8;
  if (n < (1 << 20)) {
    if (log) *log << "DRAM bandwidth: skipped (not enough free memory)\n";
    return;
  }
  runtime::Buffer a(te::DType::F64, {n}), b(te::DType::F64, {n}), c(te::DType::F64, {n});
  std::vector<runtime::Buffer*> arrays = {&a, &b, &c};
  bench.setThreads(hw.cores);
  bench.run(Op::InitArrays, n, 1, true, arrays);
  double bytes = kTriadBytesPerElement * static_cast<double>(n);
  double oneCore = bytes / bench.median(Op::Triad, n, 1, false, arrays).seconds;
  double allCores = bytes / bench.median(Op::Triad, n, 1, true, arrays).seconds;
  // The level's bandwidth is for all its sharers: every core. A 1-thread run
  // is judged by the 1-core figure; noise on a busy machine can put it above
  // the all-core one, which still bounds it.
  dram->bandwidthBytesPerS = allCores;
  dram->bandwidthPerCoreBytesPerS = std::min(oneCore, allCores);
  dram->bandwidthSource = "measured";
  if (log)
    *log << "DRAM triad (3 x " << (arrayBytes >> 20) << " MiB): " << rate(oneCore, "GB/s") << " on 1 core, "
         << rate(allCores, "GB/s") << " on " << hw.cores << "\n";
}

void measureL2(Benchmark& bench, Hardware& hw, std::ostream* log) {
  auto l2 =
      std::find_if(hw.memory.begin(), hw.memory.end(), [](const MemoryLevel& m) { return m.name == "L2"; });
  if (l2 == hw.memory.end() || l2->capacityBytes <= 0) return;
  // Three arrays filling half the L2, as the peers' measurement does
  // (3 x 0.5 MiB on a 2 MiB L2). One core, even where the L2 is shared.
  int64_t n = l2->capacityBytes / 2 / static_cast<int64_t>(kTriadBytesPerElement);
  if (n < 1024) return;
  runtime::Buffer a(te::DType::F64, {n}), b(te::DType::F64, {n}), c(te::DType::F64, {n});
  std::vector<runtime::Buffer*> arrays = {&a, &b, &c};
  bench.run(Op::InitArrays, n, 1, true, arrays);
  int64_t reps = repetitionsFor(bench.run(Op::Triad, n, 16, false, arrays).seconds / 16, kTargetSeconds);
  double bytes = kTriadBytesPerElement * static_cast<double>(n) * static_cast<double>(reps);
  l2->bandwidthBytesPerS = bytes / bench.median(Op::Triad, n, reps, false, arrays).seconds;
  l2->bandwidthPerCoreBytesPerS = l2->bandwidthBytesPerS;  // measured on one core
  l2->bandwidthSource = "measured";
  if (log)
    *log << "L2 triad (3 x " << n * 8 / 1024 << " KiB): " << rate(l2->bandwidthBytesPerS, "GB/s")
         << " on 1 core\n";
}

}  // namespace

void measureHost(Hardware& hw, std::ostream* log) {
  Benchmark bench;
  measureFmaPeak(bench, hw, log);
  measureL2(bench, hw, log);
  measureDram(bench, hw, log);
}

}  // namespace tessel::target
