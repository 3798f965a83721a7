// A compiled kernel loaded into the process: calls it on Buffers, sets its
// OpenMP thread count.
#pragma once

#include <string>
#include <vector>

#include "runtime/Buffer.h"

namespace tessel::runtime {

class KernelLibrary {
 public:
  // Loads `path` and resolves `packedEntry` (int (*)(void**)).
  KernelLibrary(const std::string& path, const std::string& packedEntry);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  // Arguments in ABI order (inputs, then outputs). Returns the kernel's status.
  int call(const std::vector<Buffer*>& args) const;
  // Sets the OpenMP thread count of the OpenMP runtime the kernel uses.
  void setThreads(int n) const;

 private:
  void* handle_ = nullptr;
  int (*entry_)(void**) = nullptr;
  void (*setThreads_)(int) = nullptr;
};

}  // namespace tessel::runtime
