// Covering dimensions exactly with register tiles of one class.
#include <gtest/gtest.h>

#include "microkernel/Composition.h"

namespace tessel::microkernel {
namespace {

TEST(Composition, EverySizeFromEightOnIsCoveredByTheClassEightToFifteen) {
  for (int64_t extent = 8; extent <= 200; ++extent) {
    std::vector<Covering> all = coverings(extent, 8, 15);
    ASSERT_FALSE(all.empty()) << extent;
    for (const auto& c : all) {
      EXPECT_EQ(c.extent(), extent);
      for (int64_t size : {c.size1, c.composed() ? c.size2 : c.size1}) {
        EXPECT_GE(size, 8);
        EXPECT_LE(size, 15);
      }
    }
    std::optional<Covering> b = balancedCovering(extent, 8, 15);
    ASSERT_TRUE(b) << extent;
    EXPECT_EQ(b->extent(), extent);
    EXPECT_EQ(b->tiles(), all.front().tiles()) << extent;  // the fewest tiles
    EXPECT_LE(b->composed() ? b->size2 - b->size1 : 0, 1);
  }
}

TEST(Composition, ThePapersExamples) {
  // 34 = 2 x 11 + 12 (Yolo9000-12), 17 = 8 + 9, 136 = 4 x (8 + 2 x 13) (Yolo9000-5).
  auto has = [](int64_t extent, Covering want) {
    for (const auto& c : coverings(extent, 5, 15))
      if (c.outer == want.outer && c.size1 == want.size1 && c.count1 == want.count1 &&
          c.size2 == want.size2 && c.count2 == want.count2)
        return true;
    return false;
  };
  EXPECT_TRUE(has(34, {1, 11, 2, 12, 1}));
  EXPECT_TRUE(has(17, {1, 8, 1, 9, 1}));
  EXPECT_TRUE(has(17, {1, 5, 1, 6, 2}));
  EXPECT_TRUE(has(136, {4, 8, 1, 13, 2}));
  EXPECT_EQ(balancedCovering(34, 8, 15)->count1, 2);  // 11 + 11 + 12
  EXPECT_EQ(balancedCovering(34, 8, 15)->size2, 12);
  EXPECT_EQ(balancedCovering(32, 8, 15)->count2, 2);  // 10.67: 10 + 11 + 11
  EXPECT_EQ(balancedCovering(32, 8, 15)->size1, 10);
  EXPECT_EQ(balancedCovering(30, 8, 15)->outer, 2);  // 15 + 15
}

TEST(Composition, SizesBelowTheClassAndEmptyClasses) {
  EXPECT_TRUE(coverings(7, 8, 15).empty());
  EXPECT_FALSE(balancedCovering(7, 8, 15));
  EXPECT_TRUE(coverings(10, 5, 4).empty());
  EXPECT_EQ(coverings(1, 1, 1).size(), 1u);
  EXPECT_LE(coverings(5000, 1, 15, 100).size(), 100u);
}

TEST(Composition, SchemeText) {
  EXPECT_EQ(coveringScheme({2, 6, 2, 5, 1}, "h", "b"), "T_{2,h}, lambda_h b.[(2,6),(1,5)]");
  EXPECT_EQ(coveringScheme({1, 11, 2, 12, 1}, "h", "b"), "lambda_h b.[(2,11),(1,12)]");
  EXPECT_EQ(coveringScheme({3, 8, 2, 0, 0}, "m", "a"), "T_{6,m}");
}

}  // namespace
}  // namespace tessel::microkernel
