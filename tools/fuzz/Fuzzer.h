// The fuzzing loop behind `tessel fuzz`: generate, check under every option
// combination, minimize each failure and print it as a ready-to-paste
// regression test.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "fuzz/Differential.h"

namespace tessel::fuzz {

struct FuzzOptions {
  uint64_t seed = 1;
  int first = 0;          // index of the first program (a long run split in parts: same programs)
  int count = 100;        // programs
  double timeBudget = 0;  // seconds; 0 = none (stop after `count`)
  // Per option combination. A whole program's combinations took 285 s under
  // the sanitizers without any hang (the small-tiles ones spend 5-10 s each
  // in isl's AST generator on 8-statement programs), so a per-program limit
  // reported hangs on a loaded machine.
  int timeoutSeconds = 300;
  bool minimize = true;
  int jobs = 1;  // programs checked at once (each in its own process)
};

struct Failure {
  uint64_t programSeed = 0;
  ComboResult result;
  std::string program;    // as generated
  std::string minimized;  // smallest program that still fails the same way
  std::string regressionTest;
};

struct FuzzReport {
  int programs = 0;
  std::vector<uint64_t> programSeeds;  // of the programs checked, in order
  int combinations = 0;
  std::map<Verdict, int> counts;
  std::vector<Failure> failures;
  std::vector<std::string> rejections;  // first few messages, for the report
  double seconds = 0;
};

FuzzReport runFuzz(const FuzzOptions& options, std::ostream& progress);
std::string summarize(const FuzzReport& report, const FuzzOptions& options);

// The seed of program `index` of a run with `seed`.
uint64_t programSeed(uint64_t seed, int index);

// Delta-reduces `program` (statements, then sizes) while `combination` still
// gives `verdict`.
ProgramModel minimize(const ProgramModel& program, const Combination& combination, Verdict verdict,
                      int timeoutSeconds);

}  // namespace tessel::fuzz
