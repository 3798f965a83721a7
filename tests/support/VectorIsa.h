// Tests of vector code run on AVX-512 and on AVX2: the host's description,
// or the host without AVX-512 so the AVX2 path is taken.
#pragma once

#include <string>

#include "target/DetectHost.h"

namespace tessel::testing {

inline target::Hardware machineWith(const std::string& isa) {
  target::Hardware h = target::detectHost();
  if (isa == "avx2") std::erase_if(h.isa, [](const std::string& f) { return f.rfind("avx512", 0) == 0; });
  return h;
}

inline bool hostHas(const std::string& isa) {
  return isa == "avx512" ? __builtin_cpu_supports("avx512f") : __builtin_cpu_supports("avx2");
}

}  // namespace tessel::testing
