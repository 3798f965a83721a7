// The boxes that size promoted and contracted buffers: isl's fixed box where
// it finds one, else the widest span of each dimension over one image (the
// slices that floor divisions of several readers make, as a pyramid's
// levels), which the code generator places at each image's least elements.
#include <gtest/gtest.h>

#include "poly/IslContext.h"
#include "target/Promotion.h"

namespace tessel::target {
namespace {

std::optional<std::vector<int64_t>> spans(isl::ctx ctx, const char* relation) {
  return spanSizes(isl::union_map(ctx, relation));
}

TEST(PromotionBox, SpanSizesTakeIslsFixedBoxWhereItHasOne) {
  poly::IslContext isl;
  isl::ctx ctx = isl.ctx();
  const char* tile = "{ [t] -> A[x, y] : t mod 8 = 0 and 0 <= t < 64 and t <= x < t + 8 and 0 <= y < 3 }";
  EXPECT_EQ(boxSizes(isl::union_map(ctx, tile)), (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(spans(ctx, tile), (std::vector<int64_t>{8, 3}));
}

TEST(PromotionBox, SpanSizesBoundSlicesWithoutAFixedBox) {
  poly::IslContext isl;
  isl::ctx ctx = isl.ctx();
  // The first level of the interpolate pyramid (D0x) that one 2x128x64 tile
  // of its output needs (isl's own text, from basteln): its two channels and
  // the alpha channel (3) that every channel reads, through the floor
  // divisions of the upsampling. isl finds no fixed box.
  const char* slice =
      "{ [i0, i1, i2] -> S0[c, h, w] : (i0) mod 2 = 0 and (i1) mod 128 = 0 and (i2) mod 64 = 0 and i1 >= 0 "
      "and "
      "i2 >= 0 and c >= i0 and 0 <= c <= 3 and c <= 1 + i0 and ((c <= 2 and h <= 1018 and w <= 508 and i2 <= "
      "2w "
      "<= 64 + i2 and 2*floor((h)/2) >= i1 and 2*floor((h)/2) >= -130 - i1 + 2h and 4*floor((h)/2) <= 1016 - "
      "i1 "
      "+ 2h) or (exists (e0, e1: e0 <= 254 and -2 + w <= 2e0 <= w and i2 <= 4e0 <= 64 + i2 and e1 <= 254 and "
      "4e1 "
      ">= i1 and -6 + h <= 4e1 < h and 4e1 <= 128 + i1)) or (exists (e1, e2: (h) mod 2 = 0 and e1 <= 254 and "
      "-2 "
      "+ w <= 2e1 <= w and i2 <= 4e1 <= 64 + i2 and e2 <= 254 and 4e2 >= i1 and -4 + h <= 4e2 <= h and 4e2 "
      "<= 128 "
      "+ i1))); [i0, i1, i2] -> S0[c = 3, h, w] : (i0) mod 2 = 0 and (i1) mod 128 = 0 and (i2) mod 64 = 0 "
      "and 0 "
      "<= i0 <= 2 and i1 >= 0 and i2 >= 0 and h <= 1018 and w <= 508 and i2 <= 2w <= 64 + i2 and "
      "2*floor((h)/2) "
      ">= i1 and 2*floor((h)/2) >= -130 - i1 + 2h and 4*floor((h)/2) <= 1016 - i1 + 2h }";
  EXPECT_FALSE(boxSizes(isl::union_map(ctx, slice)).has_value());
  std::optional<std::vector<int64_t>> sizes = spans(ctx, slice);
  ASSERT_TRUE(sizes.has_value());
  // Channels 0 to 3 for the tiles of channels 0 and 1, 135 rows for 128
  // output rows, 35 columns for 64 (the two halved levels' halos).
  EXPECT_EQ(*sizes, (std::vector<int64_t>{4, 135, 35}));
  // Unbounded: no box.
  EXPECT_FALSE(spans(ctx, "{ [t] -> A[x] : 0 <= t < 4 and x >= t }").has_value());
}

}  // namespace
}  // namespace tessel::target
