#include "runtime/KernelLibrary.h"

#include <dlfcn.h>

#include "tessel/error.h"

namespace tessel::runtime {

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

int KernelLibrary::call(const std::vector<Buffer*>& args) const {
  std::vector<void*> ptrs;
  ptrs.reserve(args.size());
  for (Buffer* b : args) ptrs.push_back(b->data());
  return entry_(ptrs.data());
}

void KernelLibrary::setThreads(int n) const {
  if (setThreads_ && n > 0) setThreads_(n);
}

}  // namespace tessel::runtime
