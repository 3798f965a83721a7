// Differential checking of generated programs: every program is compiled
// under every option combination (the matrix below is the one place later
// options are added) and every output is compared with the reference
// interpreter. Each program runs in a child process, so a crashing or hanging
// kernel is reported instead of taking the fuzzer down.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/Options.h"
#include "fuzz/ProgramModel.h"
#include "target/Hardware.h"

namespace tessel::fuzz {

struct Combination {
  std::string label;  // "fusion=max tiling=off threads=1"
  driver::CompileOptions options;
  std::optional<target::Hardware> hardware;  // the machine compiled for; absent: this one
  int threads = 1;
  // The program's contraction gets a random valid scheme (fuzz/RandomScheme.h).
  bool randomScheme = false;
  // Tessel's scheduler steered by a random constraint tree (fuzz/RandomConstraints.h).
  bool randomConstraints = false;
};

// Every option combination that exists: fusion strategies x {untiled scalar
// code on one thread, Auto Tiling + vectorization on two threads, small forced
// tiles + vectorization}.
std::vector<Combination> optionMatrix();

enum class Verdict { Pass, Rejected, Mismatch, KernelError, InternalError, Crash, Hang };
const char* verdictName(Verdict v);
bool isFailure(Verdict v);  // anything but Pass and a located rejection

struct ComboResult {
  std::string combination;
  Verdict verdict = Verdict::Pass;
  std::string detail;  // the message, mismatch report or signal
};

// Runs `tc` under each combination in a child process, killed when one
// combination runs past `timeoutSeconds` (a hang). Rejections without a source
// location count as internal errors.
std::vector<ComboResult> checkProgram(const std::string& tc, const std::vector<Combination>& combinations,
                                      int timeoutSeconds);

// The same, started without waiting, so several programs can be checked at
// once: poll() until it reports the child done, then results().
class ProgramCheck {
 public:
  ProgramCheck(const std::string& tc, const std::vector<Combination>& combinations, int timeoutSeconds);
  ~ProgramCheck();
  ProgramCheck(const ProgramCheck&) = delete;
  ProgramCheck& operator=(const ProgramCheck&) = delete;

  // Reads what the child wrote, waiting at most `waitMs`; true once it is done
  // (or killed at the deadline, which each line of progress moves on).
  bool poll(int waitMs);
  std::vector<ComboResult> results();  // waits for the child if needed

 private:
  int pid_ = -1;
  int fd_ = -1;
  std::string out_;
  std::chrono::steady_clock::time_point deadline_;
  int timeoutSeconds_;
  bool timedOut_ = false;
};

}  // namespace tessel::fuzz
