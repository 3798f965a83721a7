#include "runtime/CCompiler.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "runtime/Hash.h"
#include "tessel/error.h"

namespace tessel::runtime {

namespace fs = std::filesystem;

namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The output of `compiler --version` (empty if it does not run).
std::string versionText(const std::string& compiler) {
  std::string text;
  if (FILE* p = popen((quote(compiler) + " --version 2>/dev/null").c_str(), "r")) {
    std::array<char, 256> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) text.append(buf.data(), n);
    pclose(p);
  }
  return text;
}

// GCC (whatever its command is called, e.g. Debian's cc) says whose it is.
bool isGcc(const std::string& compiler) {
  return versionText(compiler).find("Free Software Foundation") != std::string::npos;
}

}  // namespace

CCompilerOptions CCompilerOptions::defaults() {
  CCompilerOptions o;
  const char* cc = std::getenv("TESSEL_CC");
  o.compiler = cc && *cc ? cc : "cc";
  // No -ffast-math: kernels must keep IEEE semantics (NaN, inf) to match the
  // interpreter. -fno-math-errno only drops errno updates. -ffp-contract=off:
  // a*b+c rounds twice, as written and as the interpreter does; kernels that
  // want fused multiply-adds will ask for them explicitly.
  o.flags = {"-std=gnu11",        "-O3", "-march=native", "-fPIC", "-shared", "-fopenmp", "-fno-math-errno",
             "-ffp-contract=off", "-w"};
  // GCC 12's loop vectorizer miscompiled a correct kernel
  // (tests/runtime/programs/gcc12_unrolled_inner_loop_vectorization.c), so
  // only Tessel's own vectorizer writes SIMD loops. On bench/suites/ops.suite
  // the geomean did not move; one_hot (int compares), maxpool and conv3x3
  // lost GCC's vectors (2.4x, 1.3x, 1.1x slower), transpose and conv2d_s2
  // got faster (5x, 1.4x). Clang rejects the flag.
  // GCC 12's loop distribution miscompiled another correct kernel (reads of
  // a temporary moved before the loop that writes it: tests/runtime/programs/
  // gcc12_loop_distribution.c). Tessel's kernels are already distributed
  // where that pays (distribute-inner) and vectorized by Tessel, which is
  // what GCC distributes loops for; Harris, interpolate, a 512 matmul and a
  // 3x3 convolution ran as fast without it (medians of 3, 1 thread).
  if (isGcc(o.compiler)) {
    o.flags.push_back("-fno-tree-loop-vectorize");
    o.flags.push_back("-fno-tree-loop-distribution");
  }
  if (const char* extra = std::getenv("TESSEL_CFLAGS")) {
    std::string s = extra, word;
    for (char c : s + " ") {
      if (c == ' ') {
        if (!word.empty()) o.flags.push_back(word);
        word.clear();
      } else {
        word += c;
      }
    }
  }
  if (const char* dir = std::getenv("TESSEL_CACHE_DIR"); dir && *dir) {
    o.cacheDir = dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    o.cacheDir = std::string(xdg) + "/tessel";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    o.cacheDir = std::string(home) + "/.cache/tessel";
  } else {
    o.cacheDir = "/tmp/tessel-cache-" + std::to_string(getuid());
  }
  return o;
}

namespace {

std::string commandLine(const CCompilerOptions& o, const std::string& in, const std::string& out) {
  std::string cmd = quote(o.compiler);
  for (const auto& f : o.flags) cmd += " " + quote(f);
  return cmd + " -o " + quote(out) + " " + quote(in) + " -lm 2>&1";
}

void runCompiler(const std::string& cSource, const std::string& outPath, const CCompilerOptions& o) {
  // Unique per process and per call, so concurrent compilations (processes
  // or threads) never share a temporary.
  std::string base = outPath + ".tmp" + std::to_string(getpid()) + "_" + hexDigest(std::random_device{}());
  std::string cPath = base + ".c";
  {
    std::ofstream f(cPath);
    if (!f) userError("cannot write '" + cPath + "'");
    f << cSource;
  }
  std::string tmpOut = base + ".so";
  std::string cmd = commandLine(o, cPath, tmpOut);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) userError("cannot run the C compiler '" + o.compiler + "'");
  std::string output;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) output.append(buf.data(), n);
  int status = pclose(pipe);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 127) {
    fs::remove(cPath);
    userError("C compiler '" + o.compiler + "' not found (set TESSEL_CC)");
  }
  if (code != 0) {
    // With a compiler or flags of the user's choosing, the failure is theirs
    // to fix; with the defaults, generated C that does not compile is a bug.
    // Either way the source stays next to the failure.
    std::string what =
        "the C compiler failed on the generated kernel (" + cPath + "):\n" + output.substr(0, 4000);
    if (std::getenv("TESSEL_CC") || std::getenv("TESSEL_CFLAGS"))
      userError(what + "\n(check TESSEL_CC / TESSEL_CFLAGS)");
    throw InternalError("c-compile", what);
  }
  fs::remove(cPath);
  // rename() is atomic: concurrent compilations of the same kernel never see a partial file.
  std::error_code ec;
  fs::rename(tmpOut, outPath, ec);
  if (ec) userError("cannot write '" + outPath + "': " + ec.message());
}

// The compiler's version line and the processor model.
std::string toolchainIdentity(const CCompilerOptions& o) {
  std::string id = versionText(o.compiler);
  id = id.substr(0, id.find('\n'));
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string l; std::getline(cpu, l);)
    if (l.rfind("model name", 0) == 0) {
      id += l;
      break;
    }
  return id;
}

}  // namespace

CompiledObject compileSharedObject(const std::string& cSource, const CCompilerOptions& o) {
  std::error_code ec;
  fs::create_directories(o.cacheDir, ec);
  if (ec) userError("cannot create the kernel cache directory '" + o.cacheDir + "': " + ec.message());
  // The same source and flags on another compiler or processor
  // (-march=native) give another object.
  std::string key = cSource + "\n//" + commandLine(o, "in.c", "out.so") + "\n//" + toolchainIdentity(o);
  std::string path = o.cacheDir + "/k" + hexDigest(fnv1a64(key)) + ".so";
  if (fs::exists(path)) return {path, true};
  runCompiler(cSource, path, o);
  return {path, false};
}

void compileSharedObjectTo(const std::string& cSource, const std::string& outPath,
                           const CCompilerOptions& o) {
  runCompiler(cSource, outPath, o);
}

}  // namespace tessel::runtime
