#include "runtime/KernelLibrary.h"

#include <dlfcn.h>

#include "tessel/error.h"

namespace tessel::runtime {

namespace {

int callEntry(int (*entry)(void**), const std::vector<Buffer*>& args) {
  std::vector<void*> ptrs;
  ptrs.reserve(args.size());
  for (Buffer* b : args) ptrs.push_back(b->data());
  return entry(ptrs.data());
}

}  // namespace

KernelLibrary::KernelLibrary(const std::string& path, const KernelEntries& entries)
    : KernelLibrary(path, entries.whole) {
  if (entries.prepare.empty()) return;
  prepare_ = reinterpret_cast<int (*)(void**)>(dlsym(handle_, entries.prepare.c_str()));
  prepared_ = reinterpret_cast<int (*)(void**)>(dlsym(handle_, entries.prepared.c_str()));
  if (!prepare_ || !prepared_) {
    dlclose(handle_);
    handle_ = nullptr;
    throw InternalError("kernel-load",
                        "missing entry point " + entries.prepare + " or " + entries.prepared + " in " + path);
  }
}

KernelLibrary::KernelLibrary(const std::string& path, const std::string& packedEntry) {
  // RTLD_NODELETE: the kernel's OpenMP runtime keeps worker threads alive
  // after a call; unmapping it under them would crash the process.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle_) {
    const char* why = dlerror();
    throw InternalError("kernel-load", std::string("dlopen failed: ") + (why ? why : path));
  }
  entry_ = reinterpret_cast<int (*)(void**)>(dlsym(handle_, packedEntry.c_str()));
  if (!entry_) {
    dlclose(handle_);
    throw InternalError("kernel-load", "missing entry point " + packedEntry + " in " + path);
  }
  // Resolved through the kernel's own dependencies (its OpenMP runtime).
  setThreads_ = reinterpret_cast<void (*)(int)>(dlsym(handle_, "omp_set_num_threads"));
}

KernelLibrary::~KernelLibrary() {
  if (handle_) dlclose(handle_);
}

int KernelLibrary::call(const std::vector<Buffer*>& args) const { return callEntry(entry_, args); }

int KernelLibrary::prepare(const std::vector<Buffer*>& args) const {
  TESSEL_CHECK(prepare_, "kernel-load", "the kernel has no prepare entry");
  return callEntry(prepare_, args);
}

int KernelLibrary::callPrepared(const std::vector<Buffer*>& args) const {
  TESSEL_CHECK(prepared_, "kernel-load", "the kernel has no prepared entry");
  return callEntry(prepared_, args);
}

void KernelLibrary::setThreads(int n) const {
  if (setThreads_ && n > 0) setThreads_(n);
}

}  // namespace tessel::runtime
