// Times several contestants side by side: after a warm-up, their runs are
// interleaved in short turns (round-robin), so noise from the rest of the
// machine falls on all of them alike, until each has at least minRuns runs
// and minSeconds of measured time. A contestant that is done drops out. The
// median is reported: robust to the runs a switch of contestant disturbs.
#pragma once

#include <functional>
#include <vector>

namespace tessel::bench {

struct TimingOptions {
  int warmupRuns = 1;
  int minRuns = 5;
  double minSeconds = 0.5;
  int maxRuns = 100000;  // per contestant, a bound for tiny kernels
};

struct Timing {
  double medianMs = 0;
  double minMs = 0;
  int runs = 0;
};

// One Timing per contestant, in order.
std::vector<Timing> timeRoundRobin(const std::vector<std::function<void()>>& contestants,
                                   const TimingOptions& options);

}  // namespace tessel::bench
