// The exit codes every tessel executable shares: 0 success, 1 check mismatch,
// 2 user error (bad program, options or files), 3 internal compiler error.
#include <fstream>
#include <iostream>
#include <string>

#include "Commands.h"
#include "tessel/error.h"

namespace tessel::cli {

namespace {

// Errors found after the front end (extraction, scheduling) carry a location
// but not the text of the line; show it like the front end does.
UserError withSource(const UserError& e) {
  const SourceLoc& loc = e.loc();
  if (e.hasSourceLine() || loc.file.empty() || !loc.known()) return e;
  std::ifstream f(loc.file);
  std::string line;
  for (int i = 0; i < loc.line && std::getline(f, line); ++i) {
  }
  return f ? e.withSourceLine(line) : e;
}

}  // namespace

int runReportingErrors(const CommandRunner& command) {
  try {
    return command();
  } catch (const UserError& e) {
    std::cerr << withSource(e).render() << "\n";
    return 2;
  } catch (const InternalError& e) {
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

int parseAndRun(CLI::App& app, int argc, char** argv, const CommandRunner& dispatch) {
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
  return runReportingErrors(dispatch);
}

}  // namespace tessel::cli
