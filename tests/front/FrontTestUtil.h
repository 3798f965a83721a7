// Helpers shared by the front-end tests: lower TC text and capture errors.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "front/Frontend.h"
#include "tessel/error.h"
#include "tessel/te.h"

namespace tessel::front::testing {

// Lowers `text` with the sizes of its `# sizes:` comment (restricted to the
// entry's own size names, so one comment can serve several defs).
inline te::Program lowerText(const std::string& text, const std::string& entry = "") {
  Source src{"", text};
  auto m = parse(src);
  std::map<std::string, int64_t> sizes;
  auto all = defaultSizes(src);
  for (const auto& n : sizeNames(*m, entry))
    if (all.count(n)) sizes[n] = all[n];
  return lower(*m, entry, sizes);
}

struct Failure {
  bool thrown = false;
  std::string reason;
  int line = 0;
  int col = 0;
  std::string rendered;
};

// The UserError that parsing and lowering `text` throws (thrown = false if none).
inline Failure failureOf(const std::string& text, const std::string& entry = "") {
  Failure f;
  try {
    lowerText(text, entry);
  } catch (const UserError& e) {
    f.thrown = true;
    f.reason = e.reason();
    f.line = e.loc().line;
    f.col = e.loc().col;
    f.rendered = e.render();
  }
  return f;
}

}  // namespace tessel::front::testing

// Expects `text` to fail with a reason containing `needle` at line:col.
#define EXPECT_TC_ERROR(text, needle, line_, col_)                       \
  do {                                                                   \
    auto f_ = ::tessel::front::testing::failureOf(text);                 \
    ASSERT_TRUE(f_.thrown) << "no error for:\n" << (text);               \
    EXPECT_NE(f_.reason.find(needle), std::string::npos) << f_.rendered; \
    EXPECT_EQ(f_.line, (line_)) << f_.rendered;                          \
    EXPECT_EQ(f_.col, (col_)) << f_.rendered;                            \
  } while (0)
