// libFuzzer target for the TC front end (issue 3, item 4).
//
// The input bytes are a .tc file. It is parsed; when parsing succeeds, every
// def is lowered with the sizes of the file's `# sizes:` comment (sizes the
// comment does not give are bound to a small default so that mutated inputs
// without the comment still reach lowering), and every def that lowers is
// compiled to C by driver::compile (no C compiler is run) under one of the
// fusion strategies, picked from a hash of the input.
//
// A tessel::UserError is the expected answer to a bad input. Anything else is
// a finding and is left to escape so that libFuzzer reports it: an
// InternalError or any other exception (uncaught: abort), a crash, a
// sanitizer report, a hang (-timeout) or a leak. A parse error must also be
// located (line and column), and rendering any UserError must not crash.
//
// Build: cmake -DTESSEL_FUZZER=ON with clang++ (see `make fuzz-parser`).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <string>

#include "driver/Compile.h"
#include "front/Frontend.h"
#include "target/DetectHost.h"
#include "tessel/error.h"

namespace {

using namespace tessel;

// A size that the `# sizes:` comment does not give.
constexpr int64_t kDefaultSize = 5;

void expectRenderable(const UserError& e) {
  // Exercises the message formatting (source line, caret) on odd locations.
  volatile size_t n = e.render().size();
  (void)n;
}

[[noreturn]] void finding(const char* what, const UserError& e) {
  std::fprintf(stderr, "tessel-parser-fuzzer: %s:\n%s\n", what, e.render().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  front::Source src{"fuzz.tc", std::string(reinterpret_cast<const char*>(data), size)};

  std::shared_ptr<const front::Module> module;
  try {
    module = front::parse(src);
  } catch (const UserError& e) {
    if (!e.loc().known()) finding("parse error without a line and column", e);
    expectRenderable(e);
    return 0;
  }

  // One fusion strategy per input (compiling under all of them multiplies the
  // executions); the choice is a function of the bytes, so findings replay.
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 1099511628211ull;
  const driver::Fusion kFusions[] = {driver::Fusion::None, driver::Fusion::Min, driver::Fusion::Smart,
                                     driver::Fusion::Max, driver::Fusion::Basteln};
  const driver::Fusion fusion = kFusions[hash % std::size(kFusions)];

  std::map<std::string, int64_t> defaults;
  try {
    defaults = front::defaultSizes(src);
  } catch (const UserError& e) {
    expectRenderable(e);  // a malformed sizes comment; go on without it
  }

  // The host, described once (constant from then on), with the register model's classes.
  static const driver::Machine machine = driver::modelledMachine(target::detectHost());
  for (const std::string& def : front::defNames(*module)) {
    te::Program program;
    try {
      std::map<std::string, int64_t> sizes;
      for (const std::string& n : front::sizeNames(*module, def)) {
        auto it = defaults.find(n);
        sizes[n] = it != defaults.end() ? it->second : kDefaultSize;
      }
      program = front::lower(*module, def, sizes);
    } catch (const UserError& e) {
      expectRenderable(e);
      continue;
    }
    driver::CompileOptions options;
    options.fusion = fusion;
    // A slow scheduling attempt falls back (and warns); the limit keeps one
    // input well inside libFuzzer's -timeout.
    options.scheduleTimeLimit = std::chrono::milliseconds(2'000);
    try {
      driver::compile(program, options, machine);
    } catch (const UserError& e) {
      expectRenderable(e);
    }
  }
  return 0;
}
