#include "tune/MicroKernelStore.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/CCompiler.h"
#include "runtime/Hash.h"
#include "tessel/error.h"

namespace tessel::tune {

std::string defaultTablePath(const target::Hardware& hardware) {
  std::string isa = target::vectorIsa(hardware);
  return runtime::CCompilerOptions::defaults().cacheDir + "/microkernels-" +
         runtime::hexDigest(runtime::fnv1a64(hardware.name + "|" + isa)) + ".json";
}

std::optional<microkernel::MicroKernelTable> storedTable(const target::Hardware& hardware) {
  std::string path = defaultTablePath(hardware);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  microkernel::MicroKernelTable t = microkernel::tableFromJson(text.str(), path);
  if (t.isa != target::vectorIsa(hardware)) return std::nullopt;
  return t;
}

void storeTable(const microkernel::MicroKernelTable& table, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (auto parent = fs::path(path).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
  std::string temporary = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary);
    if (!out || !(out << microkernel::toJson(table)) || !out.flush())
      userError("cannot write the micro-kernel table to '" + temporary + "'");
  }
  fs::rename(temporary, path, ec);
  if (ec) {
    fs::remove(temporary, ec);
    userError("cannot write the micro-kernel table to '" + path + "'");
  }
}

driver::Machine machineFor(target::Hardware hardware) {
  std::optional<microkernel::MicroKernelTable> stored = storedTable(hardware);
  if (!stored) return driver::modelledMachine(std::move(hardware));
  return {std::move(hardware), std::move(*stored)};
}

}  // namespace tessel::tune
