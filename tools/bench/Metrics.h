// What a benchmark case costs, independent of how it is computed: the
// arithmetic it does, the bytes it must move at least, and whether the
// machine's compute or its memory bounds it.
#pragma once

#include <cstdint>
#include <string>

#include "tessel/te.h"

namespace tessel::bench {

// Arithmetic operations: for each stage, the operations of one instance of
// its right-hand side times the size of its domain (every index variable's
// range, reduction variables included). A reduction's update is one operation,
// so a multiply-add counts 2. A select counts its condition and its costlier
// branch. Index arithmetic, reads, casts, logic and constant sub-expressions
// count nothing.
int64_t countFlops(const te::Program& p);
// Compulsory traffic: every input read once and every output written once.
int64_t compulsoryBytes(const te::Program& p);
// Statement instances the interpreter evaluates (sum of the stages' domain
// sizes): a cheap estimate of how long checking a case takes.
int64_t domainPoints(const te::Program& p);

enum class Bound { Compute, Memory };
const char* boundName(Bound b);  // "compute" | "memory"

// Compute-bound when the arithmetic intensity (FLOP per compulsory byte)
// reaches the machine balance (peak FLOP/s per byte/s of DRAM bandwidth).
struct Roofline {
  Bound bound = Bound::Memory;
  double intensity = 0;         // FLOP / byte
  double balance = 0;           // FLOP / byte of the machine
  bool balanceAssumed = false;  // the bandwidth is unknown: kAssumedBalance was used
};
// A balance typical of current x86 servers per core, used when the DRAM
// bandwidth is not known; it only decides which peak a case is compared with.
constexpr double kAssumedBalance = 10.0;
Roofline classify(int64_t flops, int64_t bytes, double peakFlops, double bandwidthBytesPerS);

// What `threads` threads can reach of a figure known per core and for the
// whole machine (FLOP/s, DRAM bytes/s): per core x threads, at most the whole
// machine's (and no more threads than `cores` count). Unknown per-core (0):
// the whole machine's, an overestimate for fewer threads than cores.
// 0 when both are unknown.
double reachableWith(int threads, int cores, double perCore, double wholeMachine);

}  // namespace tessel::bench
