#include <filesystem>
#include <fstream>
#include <iostream>

#include "Commands.h"
#include "ProgramOptions.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "runtime/CCompiler.h"
#include "tune/SchemeSearch.h"

namespace tessel::cli {

namespace {

struct CompileArgs {
  ProgramArgs program;
  std::string emit;
  std::string dumpAfter;
  std::string outDir;
};

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f || !(f << text)) userError("cannot write '" + path + "'");
}

int compileCommand(const CompileArgs& a) {
  front::LoadedProgram lp = front::loadProgram(a.program.spec);
  driver::CompileOptions co = compileOptionsFrom(a.program);
  co.dumpAfter = a.dumpAfter;
  co.dumpSink = [](const std::string& text) { std::cout << text << std::flush; };
  driver::Machine machine = machineFrom(a.program);
  driver::CompiledProgram cp = tune::compileTuned(lp.program, co, machine);
  printDiagnostics(a.program, cp);
  // The explanation goes to stdout unless a stage is printed there.
  printExplanation(a.program, cp, a.emit.empty() && a.dumpAfter.empty() ? std::cout : std::cerr);
  if (a.emit == "schedule") std::cout << cp.scheduleYaml;
  if (a.emit == "ast") std::cout << cp.astC;
  if (a.emit == "lir") std::cout << lir::toString(cp.kernel);
  if (a.emit == "c") std::cout << cp.cSource;
  if (a.emit == "te") std::cout << te::toString(cp.program);
  if (!a.outDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.outDir, ec);
    if (ec) userError("cannot create output directory '" + a.outDir + "': " + ec.message());
    std::string provenance = "From " + a.program.spec.file + " with";
    for (const auto& [n, v] : lp.sizes) provenance += " " + n + "=" + std::to_string(v);
    std::string options = co.toString();
    provenance +=
        "; " + (options.empty() ? "the default options" : options) + "; for " + machine.hardware.name + ".";
    std::string symbol = backend::kernelSymbol(cp.kernel);
    if (symbol != cp.kernel.name)
      std::cerr << "note: '" << cp.kernel.name
                << "' clashes with a C library name; the kernel is exported as '" << symbol << "'\n";
    std::string base = a.outDir + "/" + symbol;
    writeFile(base + ".h", backend::emitHeader(cp.kernel, provenance));
    writeFile(base + ".c", cp.cSource);
    runtime::compileSharedObjectTo(cp.cSource, a.outDir + "/lib" + symbol + ".so",
                                   runtime::CCompilerOptions::defaults());
    std::cerr << "wrote " << base << ".h and " << a.outDir << "/lib" << symbol << ".so\n";
  }
  return 0;
}

}  // namespace

CommandRunner addCompileCommand(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile a .tc program; print a stage or write a C library");
  addProgramOptions(cmd, args->program);
  cmd->add_option("--emit", args->emit, "print a stage: te, schedule (isl YAML), ast, lir or c")
      ->check(CLI::IsMember({"te", "schedule", "ast", "lir", "c"}));
  std::string passes;
  for (const auto& p : driver::cpuPipeline().names()) passes += (passes.empty() ? "" : ", ") + p;
  cmd->add_option("--dump-after", args->dumpAfter, "print the result of a pass: " + passes);
  cmd->add_option("-o,--output", args->outDir, "write NAME.h, NAME.c and libNAME.so into this directory");
  return [args] { return compileCommand(*args); };
}

}  // namespace tessel::cli
