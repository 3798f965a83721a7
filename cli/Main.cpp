// tessel: the command-line driver. Exit codes: 0 success, 1 check mismatch,
// 2 user error (bad program, options or files), 3 internal compiler error.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "Commands.h"
#include "tessel/error.h"

namespace {

// `tessel bench` runs the executable tessel-bench next to this one, git-style,
// with the arguments that follow "bench": only it links the peer libraries
// (oneDNN, OpenBLAS, XNNPACK, Halide), so the other commands, and the children
// `tessel fuzz` forks, neither pay for loading them nor run OpenBLAS's worker
// thread.
[[noreturn]] void runBenchExecutable(const std::vector<std::string>& benchArgs) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) tessel::userError("tessel bench: cannot locate the tessel executable: " + ec.message());
  std::string bench = (self.parent_path() / "tessel-bench").string();
  if (access(bench.c_str(), X_OK) != 0)
    tessel::userError("tessel bench runs '" + bench + "', which is " +
                      (errno == ENOENT ? "missing" : std::string("not executable: ") + std::strerror(errno)) +
                      "; build it next to tessel (cmake --build BUILD --target tessel-bench)");
  // OpenBLAS's idle workers spin for 2^28 cycles (about 0.1 s) after each
  // call, and so took a core from the contestant timed next (Tessel's 2-thread
  // 1536^3 matmul ran at its 1-thread time beside them). 2^20 cycles (under a
  // millisecond) still spans OpenBLAS's own back-to-back runs. A value the
  // user set stays.
  setenv("OPENBLAS_THREAD_TIMEOUT", "20", /*overwrite=*/0);
  std::vector<char*> argv = {bench.data()};
  for (const std::string& arg : benchArgs) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execv(bench.c_str(), argv.data());
  tessel::userError("tessel bench: cannot run '" + bench + "': " + std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
  // Handed over before parsing: every argument after "bench" is tessel-bench's.
  if (argc >= 2 && std::string_view(argv[1]) == "bench")
    return tessel::cli::runReportingErrors(
        [&]() -> int { runBenchExecutable(std::vector<std::string>(argv + 2, argv + argc)); });

  CLI::App app{"Tessel: an automatic polyhedral tensor compiler (Tensor Comprehensions -> fast kernels)",
               "tessel"};
  app.set_version_flag("--version", std::string("tessel ") + TESSEL_VERSION);
  app.require_subcommand(1);
  auto run = tessel::cli::addRunCommand(app);
  auto compile = tessel::cli::addCompileCommand(app);
  auto fuzz = tessel::cli::addFuzzCommand(app);
  // Listed for --help only; its own options are tessel-bench's (`tessel bench --help`).
  app.add_subcommand("bench",
                     "Time Tessel against peer libraries (oneDNN, OpenBLAS, XNNPACK, Halide) on the cases of "
                     "a suite file (runs tessel-bench)")
      ->prefix_command()
      ->set_help_flag();
  auto target = tessel::cli::addTargetCommand(app);
  auto microbench = tessel::cli::addMicroBenchCommand(app);
  auto passes = tessel::cli::addPassesCommand(app);
  auto opt = tessel::cli::addOptCommand(app);
  auto reference = tessel::cli::addReferenceCommand(app);
  return tessel::cli::parseAndRun(app, argc, argv, [&] {
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("compile")) return compile();
    if (app.got_subcommand("fuzz")) return fuzz();
    if (app.got_subcommand("bench")) runBenchExecutable(app.get_subcommand("bench")->remaining());
    if (app.got_subcommand("target")) return target();
    if (app.got_subcommand("microbench")) return microbench();
    if (app.got_subcommand("passes")) return passes();
    if (app.got_subcommand("opt")) return opt();
    if (app.got_subcommand("cli-reference")) return reference();
    return 2;
  });
}
