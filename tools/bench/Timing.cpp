#include "bench/Timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace tessel::bench {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double timeOnce(const std::function<void()>& f) {
  auto t0 = Clock::now();
  f();
  return msSince(t0);
}

}  // namespace

std::vector<Timing> timeRoundRobin(const std::vector<std::function<void()>>& contestants,
                                   const TimingOptions& options) {
  size_t n = contestants.size();
  // A turn lasts about a twentieth of the wanted time (1 to 20 ms): short
  // enough to interleave often, long enough to keep switching cheap.
  double turnMs = std::clamp(options.minSeconds * 1000 / 20, 1.0, 20.0);
  std::vector<int> runsPerTurn(n, 1);
  for (size_t i = 0; i < n; ++i) {
    double warm = 0;
    for (int w = 0; w < std::max(options.warmupRuns, 1); ++w) warm = timeOnce(contestants[i]);
    runsPerTurn[i] = static_cast<int>(std::clamp(std::floor(turnMs / std::max(warm, 1e-6)), 1.0, 1000.0));
  }
  std::vector<std::vector<double>> times(n);
  std::vector<double> totalMs(n, 0);
  auto done = [&](size_t i) {
    int runs = static_cast<int>(times[i].size());
    return runs >= options.maxRuns ||
           (runs >= std::max(options.minRuns, 1) && totalMs[i] >= options.minSeconds * 1000);
  };
  for (bool any = true; any;) {
    any = false;
    for (size_t i = 0; i < n; ++i) {
      if (done(i)) continue;
      any = true;
      // A turn of short runs starts with an untimed one: it absorbs what the
      // previous contestant left behind (caches, its spinning worker threads).
      if (runsPerTurn[i] >= 4) contestants[i]();
      for (int r = 0; r < runsPerTurn[i]; ++r) {
        double t = timeOnce(contestants[i]);
        times[i].push_back(t);
        totalMs[i] += t;
      }
    }
  }
  std::vector<Timing> out(n);
  for (size_t i = 0; i < n; ++i) {
    auto& t = times[i];
    std::sort(t.begin(), t.end());
    out[i].runs = static_cast<int>(t.size());
    out[i].medianMs = t.empty() ? 0 : t[t.size() / 2];
    out[i].minMs = t.empty() ? 0 : t.front();
  }
  return out;
}

}  // namespace tessel::bench
