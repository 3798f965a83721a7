// A compiled kernel loaded into the process: calls it on Buffers, sets its
// OpenMP thread count.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/Buffer.h"

namespace tessel::runtime {

// A kernel's packed entry points (int (*)(void**), backend::kernelEntries).
struct KernelEntries {
  std::string whole;  // inputs, outputs
  // When the kernel reads some inputs in its own layout, "" otherwise:
  // prepare (inputs, laid-out copies) fills the copies, and prepared
  // (inputs, outputs, laid-out copies) computes from them.
  std::string prepare, prepared;
  std::vector<std::pair<std::string, std::vector<int64_t>>> preparedBuffers;  // input, f32 extents
};

class KernelLibrary {
 public:
  // Loads `path` and resolves `packedEntry` (int (*)(void**)).
  KernelLibrary(const std::string& path, const std::string& packedEntry);
  // Loads `path` and resolves every entry of `entries`.
  KernelLibrary(const std::string& path, const KernelEntries& entries);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  // Arguments in ABI order (inputs, then outputs). Returns the kernel's status.
  int call(const std::vector<Buffer*>& args) const;
  // The prepare and prepared entries (only when the entries named them).
  bool hasPreparedEntries() const { return prepare_ != nullptr; }
  int prepare(const std::vector<Buffer*>& args) const;
  int callPrepared(const std::vector<Buffer*>& args) const;
  // Sets the OpenMP thread count of the OpenMP runtime the kernel uses.
  void setThreads(int n) const;

 private:
  void* handle_ = nullptr;
  int (*entry_)(void**) = nullptr;
  int (*prepare_)(void**) = nullptr;
  int (*prepared_)(void**) = nullptr;
  void (*setThreads_)(int) = nullptr;
};

}  // namespace tessel::runtime
