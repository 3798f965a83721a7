// The C compiler and flags kernels are built with must compile known
// miscompiles of the system compiler correctly (each was found by tessel fuzz
// as a wrong kernel; see the comments in tests/runtime/programs/*.c).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "../support/RunTool.h"
#include "runtime/CCompiler.h"

namespace tessel::runtime {
namespace {

int wrongElements(const std::string& program) {
  auto obj = compileSharedObject(testing::readText(testing::sourcePath("tests/runtime/programs/" + program)),
                                 CCompilerOptions::defaults());
  void* handle = dlopen(obj.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) ADD_FAILURE() << dlerror();
  if (!handle) return -1;
  auto check = reinterpret_cast<int (*)()>(dlsym(handle, "miscompiled_elements"));
  int wrong = check ? check() : -1;
  dlclose(handle);
  return wrong;
}

TEST(KernelCompiler, Gcc12UnrolledInnerLoopVectorization) {
  EXPECT_EQ(wrongElements("gcc12_unrolled_inner_loop_vectorization.c"), 0);
}

TEST(KernelCompiler, Gcc12LoopDistribution) { EXPECT_EQ(wrongElements("gcc12_loop_distribution.c"), 0); }

}  // namespace
}  // namespace tessel::runtime
