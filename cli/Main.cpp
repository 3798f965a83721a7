// tessel: the command-line driver. Exit codes: 0 success, 1 check mismatch,
// 2 user error (bad program, options or files), 3 internal compiler error.
#include <fstream>
#include <iostream>
#include <string>

#include "Commands.h"
#include "tessel/error.h"

namespace {

// Errors found after the front end (extraction, scheduling) carry a location
// but not the text of the line; show it like the front end does.
tessel::UserError withSource(const tessel::UserError& e) {
  const tessel::SourceLoc& loc = e.loc();
  if (e.hasSourceLine() || loc.file.empty() || !loc.known()) return e;
  std::ifstream f(loc.file);
  std::string line;
  for (int i = 0; i < loc.line && std::getline(f, line); ++i) {
  }
  return f ? e.withSourceLine(line) : e;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tessel: an automatic polyhedral tensor compiler (Tensor Comprehensions -> fast kernels)",
               "tessel"};
  app.set_version_flag("--version", std::string("tessel ") + TESSEL_VERSION);
  app.require_subcommand(1);
  auto run = tessel::cli::addRunCommand(app);
  auto compile = tessel::cli::addCompileCommand(app);
  auto fuzz = tessel::cli::addFuzzCommand(app);
  auto bench = tessel::cli::addBenchCommand(app);
  auto target = tessel::cli::addTargetCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("compile")) return compile();
    if (app.got_subcommand("fuzz")) return fuzz();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("target")) return target();
    return 2;
  } catch (const tessel::UserError& e) {
    std::cerr << withSource(e).render() << "\n";
    return 2;
  } catch (const tessel::InternalError& e) {
    std::cerr << "tessel: " << e.what() << "\n(this is a bug in Tessel; please report it with the input)\n";
    return 3;
  } catch (const std::bad_alloc&) {
    std::cerr << "tessel: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tessel: internal error: " << e.what() << "\n";
    return 3;
  }
}
