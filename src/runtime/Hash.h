// Stable 64-bit FNV-1a content hash (kernel cache keys must not change between runs).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessel::runtime {

uint64_t fnv1a64(std::string_view data, uint64_t seed = 0xcbf29ce484222325ull);
std::string hexDigest(uint64_t h);

}  // namespace tessel::runtime
