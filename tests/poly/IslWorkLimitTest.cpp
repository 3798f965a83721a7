// runBounded stops an isl computation at its operation quota or its deadline
// and leaves the context usable.
#include <gtest/gtest.h>

#include "poly/IslContext.h"
#include "poly/IslWorkLimit.h"

namespace tessel::poly {
namespace {

using namespace std::chrono_literals;

isl::set someSet(isl::ctx ctx) {
  return isl::set(ctx, "{ [i, j, k] : 0 <= i < 1000 and 0 <= j < 1000 and 3i + 5j - 7k >= 11 and k >= -5 }");
}

// Never returns on its own: isl work (integer lexmin, tableau pivots) in a loop.
isl::schedule endlessWork(isl::set s) {
  for (;;) s = s.lexmin().unite(s).coalesce();
}

isl::schedule quickWork(isl::ctx ctx) {
  return isl::schedule::from_domain(isl::union_set(ctx, "{ S[i] : 0 <= i < 10 }"));
}

TEST(IslWorkLimit, DeadlineStopsTheComputation) {
  IslContext isl;
  isl::set set = someSet(isl.ctx());
  auto r = runBounded(isl.ctx(), {0, 50ms}, [&] { return endlessWork(set); });
  EXPECT_FALSE(r.value);
  EXPECT_EQ(r.stop, IslStop::Deadline);
  EXPECT_FALSE(isl_ctx_aborted(isl.ctx().get()));
  EXPECT_NO_THROW(quickWork(isl.ctx()));
}

TEST(IslWorkLimit, QuotaStopsTheComputation) {
  IslContext isl;
  isl::set set = someSet(isl.ctx());
  auto r = runBounded(isl.ctx(), {1000, 0ms}, [&] { return endlessWork(set); });
  EXPECT_FALSE(r.value);
  EXPECT_EQ(r.stop, IslStop::Quota);
  EXPECT_EQ(isl_ctx_get_max_operations(isl.ctx().get()), 0u);
  EXPECT_NO_THROW(quickWork(isl.ctx()));
}

TEST(IslWorkLimit, WorkWithinTheLimitsReturnsItsResult) {
  IslContext isl;
  auto r = runBounded(isl.ctx(), {1'000'000, 10'000ms}, [&] { return quickWork(isl.ctx()); });
  ASSERT_TRUE(r.value);
  EXPECT_EQ(r.stop, IslStop::None);
}

TEST(IslWorkLimit, OtherIslErrorsPropagate) {
  IslContext isl;
  EXPECT_THROW(
      runBounded(isl.ctx(), {0, 10'000ms}, [&] { return isl::schedule(isl.ctx(), "not a schedule"); }),
      isl::exception);
}

}  // namespace
}  // namespace tessel::poly
