#include <gtest/gtest.h>

#include <cstdint>

#include "runtime/Buffer.h"

namespace tessel::runtime {
namespace {

uintptr_t addressOf(const Buffer& b) { return reinterpret_cast<uintptr_t>(b.data()); }

// Contestants timed side by side must not differ by where malloc happened to
// put their buffers: every buffer of a page or more starts on a page.
TEST(BufferTest, BuffersOfAPageOrMoreStartOnAPage) {
  for (int64_t elements : {1024, 1025, 4099, 1 << 20, 3 << 20}) {
    for (int k = 0; k < 3; ++k) {
      Buffer b(te::DType::F32, {elements});
      EXPECT_EQ(addressOf(b) % 4096, 0u) << elements << " floats";
    }
  }
}

TEST(BufferTest, SmallBuffersAreCacheLineAligned) {
  for (int64_t elements : {0, 1, 7, 13, 127, 1023}) {
    Buffer b(te::DType::F32, {elements});
    EXPECT_EQ(addressOf(b) % 64, 0u) << elements << " floats";
  }
  Buffer bytes(te::DType::I8, {4095});
  EXPECT_EQ(addressOf(bytes) % 64, 0u);
}

// The storage is zeroed, including the 64 bytes past the last element.
TEST(BufferTest, StorageStartsZeroed) {
  Buffer b(te::DType::F32, {4099});
  for (int64_t i = 0; i < b.size(); ++i) ASSERT_EQ(b.get(i), 0.0);
  const auto* bytes = static_cast<const unsigned char*>(b.data());
  for (int64_t i = b.bytes(); i < b.bytes() + 64; ++i) ASSERT_EQ(bytes[i], 0) << i;
}

}  // namespace
}  // namespace tessel::runtime
