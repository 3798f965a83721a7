#include "fuzz/Differential.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sstream>

#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "front/Frontend.h"
#include "fuzz/RandomConstraints.h"
#include "fuzz/RandomScheme.h"
#include "runtime/Hash.h"
#include "runtime/Runner.h"
#include "target/DetectHost.h"
#include "tune/MicroKernelStore.h"

namespace tessel::fuzz {

namespace {

// A machine with tiny caches, so Auto Tiling tiles even the fuzzer's small
// programs (on the host most of them fit in L1 and are left alone).
target::Hardware tinyCacheMachine() {
  target::Hardware h = target::withCaches(target::detectHost(), 512, 4096, 2);  // the host's ISA runs here
  h.name = "tiny-caches";
  return h;
}

// Small sizes on two levels leave partial tiles at every awkward extent.
constexpr const char* kSmallTiles = "*: 4@L2/3@L1, 5@L2/2@L1, 3@L1, 2@L1, 3@L1, 2@L1";
// A slow schedule is not a failure (the scheduler falls back and warns), a
// wrong one is: a short limit keeps fuzzing fast and exercises the fallbacks.
constexpr std::chrono::milliseconds kScheduleTimeLimit{2'000};

}  // namespace

std::vector<Combination> optionMatrix() {
  std::vector<Combination> m;
  for (auto fusion :
       {driver::Fusion::Min, driver::Fusion::Smart, driver::Fusion::Max, driver::Fusion::Basteln}) {
    std::string f = std::string("fusion=") + driver::fusionName(fusion);
    driver::CompileOptions base;
    base.fusion = fusion;
    base.scheduleTimeLimit = kScheduleTimeLimit;
    base.fusionCheckTimeLimit = kScheduleTimeLimit;
    Combination untiled;
    untiled.options = base;
    untiled.options.autoTiling = false;
    untiled.options.vectorize = false;
    untiled.threads = 1;
    untiled.label = f + " tiling=off vectorize=off threads=1";
    m.push_back(untiled);

    Combination autoTiled;
    autoTiled.options = base;
    autoTiled.hardware = tinyCacheMachine();
    autoTiled.threads = 2;
    autoTiled.label = f + " tiling=auto(tiny caches) threads=2";
    m.push_back(autoTiled);

    Combination smallTiles;
    smallTiles.options = base;
    smallTiles.options.autoTiling = false;
    smallTiles.options.tiles = tile::parseTilePolicy(kSmallTiles, "fuzz");
    smallTiles.hardware = tinyCacheMachine();
    // Two threads: a parallel mark on the wrong loop is a race that only
    // shows with several threads (small tiles make tile loops disappear).
    smallTiles.threads = 2;
    // min and max fusion copy every legal footprint (partial tiles, boxes
    // past the edges); smart fusion keeps the cost model's choice.
    bool all = fusion == driver::Fusion::Min || fusion == driver::Fusion::Max;
    if (all) smallTiles.options.promotion = driver::CompileOptions::Promotion::All;
    // basteln: every producer it can slice, whatever the overlap of small tiles.
    bool everySlice = fusion == driver::Fusion::Basteln;
    if (everySlice) smallTiles.options.bastelnRedundancy = 1.0;

    // Every output not read back is written with non-temporal stores.
    smallTiles.options.streamingStores = driver::CompileOptions::StreamingStores::Always;
    smallTiles.label = f + (everySlice ? " redundancy=100%" : "") + " tiles=small" +
                       (all ? " promote=all" : "") + " stream-stores=always threads=2";
    m.push_back(smallTiles);
  }
  // Elementwise inlining (Alg. 5) before basteln, with Auto Tiling.
  Combination inlined = m[m.size() - 2];
  inlined.options.inlineElementwise = true;
  inlined.label = "fusion=basteln inline=on tiling=auto(tiny caches) threads=2";
  m.push_back(inlined);
  // No fusion: each statement's nests alone, in source order.
  Combination unfused = m[1];
  unfused.options.fusion = driver::Fusion::None;
  unfused.label = "fusion=none tiling=auto(tiny caches) threads=2";
  m.push_back(unfused);
  // The micro-kernel path (paper 002): the contraction with a random scheme.
  auto labelled = [&m](const std::string& label) {
    return *std::find_if(m.begin(), m.end(), [&](const Combination& c) { return c.label == label; });
  };
  Combination schemed = labelled("fusion=basteln tiling=auto(tiny caches) threads=2");
  schemed.randomScheme = true;
  schemed.label = "fusion=basteln scheme=random tiling=auto(tiny caches) threads=2";
  m.push_back(schemed);
  // Tessel's own scheduler (paper 004), alone and steered by random constraints.
  Combination tesselSmart = labelled("fusion=smart tiling=auto(tiny caches) threads=2");
  tesselSmart.options.scheduler = driver::CompileOptions::Scheduler::Tessel;
  tesselSmart.label = "scheduler=tessel " + tesselSmart.label;
  m.push_back(tesselSmart);
  Combination tesselBasteln =
      labelled("fusion=basteln redundancy=100% tiles=small stream-stores=always threads=2");
  tesselBasteln.options.scheduler = driver::CompileOptions::Scheduler::Tessel;
  tesselBasteln.label = "scheduler=tessel " + tesselBasteln.label;
  m.push_back(tesselBasteln);
  Combination scenarios = tesselSmart;
  scenarios.options.scheduleConstraints = driver::CompileOptions::ConstraintsFile{"auto", "", true};
  scenarios.label = "scheduler=tessel constraints=auto fusion=smart tiling=auto(tiny caches) threads=2";
  m.push_back(scenarios);
  Combination steered = tesselSmart;
  steered.randomConstraints = true;
  steered.label = "scheduler=tessel constraints=random fusion=smart tiling=auto(tiny caches) threads=2";
  m.push_back(steered);
  return m;
}

const char* verdictName(Verdict v) {
  switch (v) {
    case Verdict::Pass:
      return "pass";
    case Verdict::Rejected:
      return "rejected";
    case Verdict::Mismatch:
      return "mismatch";
    case Verdict::KernelError:
      return "kernel error";
    case Verdict::InternalError:
      return "internal error";
    case Verdict::Crash:
      return "crash";
    case Verdict::Hang:
      return "hang";
  }
  return "?";
}

bool isFailure(Verdict v) { return v != Verdict::Pass && v != Verdict::Rejected; }

namespace {

// One line per combination on the pipe: "<verdict index> <label>\t<detail>";
// "START <label>" before each, so a crash is attributed to its combination.
std::string oneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  return s.substr(0, 2000);
}

ComboResult runOne(const std::string& tc, const Combination& c) {
  ComboResult r{c.label, Verdict::Pass, ""};
  try {
    front::Source src{"fuzz.tc", tc};
    auto module = front::parse(src);
    // Only the sizes the def binds: the # sizes: line may list unused ones.
    std::map<std::string, int64_t> sizes, all = front::defaultSizes(src);
    for (const auto& n : front::sizeNames(*module, ""))
      if (all.count(n)) sizes[n] = all[n];
    te::Program p = front::lower(*module, "", sizes);
    driver::CompileOptions options = c.options;
    driver::Machine machine = tune::machineFor(c.hardware ? *c.hardware : target::detectHost());
    // The program's contraction as a random valid scheme, the same for the same program.
    if (c.randomScheme)
      options.scheme.text = randomScheme(p, runtime::fnv1a64(tc), target::vectorIsa(machine.hardware));
    if (c.randomConstraints)
      options.scheduleConstraints = driver::CompileOptions::ConstraintsFile{
          "random-constraints", randomConstraintTree(p, runtime::fnv1a64(tc))};
    driver::CompiledProgram cp = driver::compile(p, options, machine);
    runtime::RunOptions ro;
    ro.check = true;
    ro.threads = c.threads;
    try {
      runtime::RunReport rep =
          runtime::runKernel(cp.program, cp.cSource,
                             backend::kernelEntries(cp.kernel, [](const std::string&) { return true; }), ro);
      for (const auto& o : rep.outputs)
        if (!o.pass) {
          r.verdict = Verdict::Mismatch;
          r.detail += o.tensor + ": " + o.message + " ";
        }
    } catch (const UserError& e) {
      // Compiled, then failed at run time (a bad index, no memory).
      r.verdict = Verdict::KernelError;
      r.detail = e.what();
    }
  } catch (const UserError& e) {
    // Generated programs are meant to be valid, but a rejection is acceptable
    // as long as it names its place.
    r.verdict = e.loc().known() ? Verdict::Rejected : Verdict::InternalError;
    r.detail = e.what();
  } catch (const InternalError& e) {
    r.verdict = Verdict::InternalError;
    r.detail = e.what();
  } catch (const std::exception& e) {
    r.verdict = Verdict::InternalError;
    r.detail = std::string("unexpected exception: ") + e.what();
  }
  return r;
}

[[noreturn]] void childMain(int fd, const std::string& tc, const std::vector<Combination>& combinations) {
  auto say = [&](const std::string& line) {
    std::string l = line + "\n";
    (void)!write(fd, l.data(), l.size());
  };
  for (const auto& c : combinations) {
    say("START " + c.label);
    ComboResult r = runOne(tc, c);
    say(std::to_string(static_cast<int>(r.verdict)) + " " + c.label + "\t" + oneLine(r.detail));
  }
  _exit(0);
}

}  // namespace

ProgramCheck::ProgramCheck(const std::string& tc, const std::vector<Combination>& combinations,
                           int timeoutSeconds)
    : deadline_(std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds)),
      timeoutSeconds_(timeoutSeconds) {
  int fds[2];
  if (pipe(fds) != 0) throw InternalError("fuzz", "pipe failed");
  pid_ = fork();
  if (pid_ < 0) throw InternalError("fuzz", "fork failed");
  if (pid_ == 0) {
    close(fds[0]);
    childMain(fds[1], tc, combinations);
  }
  close(fds[1]);
  fd_ = fds[0];
}

ProgramCheck::~ProgramCheck() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) close(fd_);
}

bool ProgramCheck::poll(int waitMs) {
  if (fd_ < 0) return true;
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
  if (left.count() <= 0) {
    timedOut_ = true;
    kill(pid_, SIGKILL);
    close(fd_);
    fd_ = -1;
    return true;
  }
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(waitMs, left.count()))) <= 0) return false;
  char buf[4096];
  ssize_t n = read(fd_, buf, sizeof buf);
  if (n > 0) {
    out_.append(buf, static_cast<size_t>(n));
    // The child writes a line as each combination starts and ends: the limit
    // is per combination, so a program's many slow (sanitized) combinations
    // are not mistaken for one that hangs.
    deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds_);
    return false;
  }
  close(fd_);
  fd_ = -1;
  return true;
}

std::vector<ComboResult> ProgramCheck::results() {
  while (!poll(1000)) {
  }
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;

  std::vector<ComboResult> results;
  std::string running;
  std::istringstream lines(out_);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("START ", 0) == 0) {
      running = line.substr(6);
      continue;
    }
    auto space = line.find(' '), tab = line.find('\t');
    if (space == std::string::npos || tab == std::string::npos) continue;
    ComboResult r;
    r.verdict = static_cast<Verdict>(std::stoi(line.substr(0, space)));
    r.combination = line.substr(space + 1, tab - space - 1);
    r.detail = line.substr(tab + 1);
    results.push_back(r);
    running.clear();
  }
  if (!running.empty() || timedOut_ || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ComboResult r;
    r.combination = running.empty() ? "(between combinations)" : running;
    if (timedOut_) {
      r.verdict = Verdict::Hang;
      r.detail = "no result after " + std::to_string(timeoutSeconds_) + " s";
    } else {
      r.verdict = Verdict::Crash;
      r.detail = WIFSIGNALED(status) ? std::string("signal ") + strsignal(WTERMSIG(status))
                                     : "exit status " + std::to_string(WEXITSTATUS(status));
    }
    results.push_back(r);
  }
  return results;
}

std::vector<ComboResult> checkProgram(const std::string& tc, const std::vector<Combination>& combinations,
                                      int timeoutSeconds) {
  return ProgramCheck(tc, combinations, timeoutSeconds).results();
}

}  // namespace tessel::fuzz
