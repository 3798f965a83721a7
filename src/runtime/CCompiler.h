// Compiles generated C into a shared object with the system C compiler, with a
// content-hash cache so an unchanged kernel is never compiled twice.
#pragma once

#include <string>
#include <vector>

namespace tessel::runtime {

struct CCompilerOptions {
  std::string compiler;            // default: $TESSEL_CC, else "cc"
  std::vector<std::string> flags;  // default: -std=c11 -O3 -march=native -fPIC -shared -fopenmp ...
  std::string cacheDir;  // default: $TESSEL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else ~/.cache/tessel
  static CCompilerOptions defaults();
};

struct CompiledObject {
  std::string path;  // the shared object
  bool fromCache = false;
};

// Throws UserError (compiler missing, cache not writable) or InternalError
// (the generated C did not compile; the message holds the compiler's output).
CompiledObject compileSharedObject(const std::string& cSource, const CCompilerOptions& options);

// Compiles into `outPath` directly (ahead-of-time libraries), no cache.
void compileSharedObjectTo(const std::string& cSource, const std::string& outPath,
                           const CCompilerOptions& options);

}  // namespace tessel::runtime
