// The libFuzzer target (tools/fuzz/ParserFuzzer.cpp) is built only by `make
// fuzz-parser`, with clang; here it is compiled into the ordinary test binary
// and fed its seed corpus, so the target keeps compiling against the current
// API and every seed still gets a clean answer (a finding aborts the test).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpus() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(TESSEL_SOURCE_DIR) / "tests" / "fuzz" / "corpus"))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ParserFuzzerCorpus, EverySeedIsAnsweredCleanly) {
  auto files = corpus();
  ASSERT_GE(files.size(), 50u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
  }
}

}  // namespace
