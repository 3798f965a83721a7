// Golden schedule trees after each pass for matmul, the way LLVM tests print
// IR after a pass: any change to extraction, scheduling or marking shows here.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "driver/Compile.h"

namespace tessel {
namespace {

std::string treeAfter(const std::string& pass) {
  te::Program p = front::testing::lowerText(
      "# sizes: M=4 N=5 K=3\ndef matmul(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * "
      "B(k,n)\n}\n");
  driver::CompileOptions o;
  o.dumpAfter = pass;
  return driver::compile(p, o).dump;
}

TEST(ScheduleGolden, MatmulAfterExtract) {
  EXPECT_EQ(
      treeAfter("extract"),
      R"(domain: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4; S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
child:
  sequence:
  - filter: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4; S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
    child:
      schedule: "[{ S0[m, n] -> [(m)]; S1[m, n, k] -> [(m)] }, { S0[m, n] -> [(n)]; S1[m, n, k] -> [(n)] }]"
      child:
        sequence:
        - filter: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4 }"
        - filter: "{ S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
          child:
            schedule: "[{ S1[m, n, k] -> [(k)] }]"
)");
}

TEST(ScheduleGolden, MatmulAfterMarkParallel) {
  EXPECT_EQ(
      treeAfter("mark-parallel"),
      R"(domain: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4; S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
child:
  mark: "parallel"
  child:
    schedule: "[{ S0[m, n] -> [(m)]; S1[m, n, k] -> [(m)] }]"
    permutable: 1
    coincident: [ 1 ]
    child:
      schedule: "[{ S0[m, n] -> [(n)]; S1[m, n, k] -> [(n)] }, { S0[m, n] -> [(0)]; S1[m, n, k] -> [(k)] }]"
      permutable: 1
      coincident: [ 1, 0 ]
      child:
        sequence:
        - filter: "{ S0[m, n] }"
        - filter: "{ S1[m, n, k] }"
)");
}

}  // namespace
}  // namespace tessel
