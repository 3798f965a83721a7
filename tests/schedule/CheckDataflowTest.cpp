// The dataflow check judges trees that run producer instances again inside
// consumer tiles (extension nodes, paper 001 Fig. 10): it accepts the
// correct post-tiling fusion of the Fig. 1 pipeline and names what is wrong
// in broken ones.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "poly/ExtractScop.h"
#include "poly/IslContext.h"
#include "schedule/CheckDataflow.h"
#include "schedule/FlattenSchedule.h"

namespace tessel::schedule {
namespace {

// Fig. 1: quantization S0, convolution S1 (init) and S2 (update), ReLU S3.
// Output 6x6, input 8x8, kernel 3x3.
const char* const kConvPipeline =
    "# sizes: IH=8 IW=8 KH=3 KW=3\n"
    "def pipeline(float(IH,IW) X, float(KH,KW) K) -> (R) {\n"
    "  A(h,w) = X(h,w) * 0.5\n"
    "  C(h,w) +=! A(h+kh,w+kw) * K(kh,kw)\n"
    "  R(h,w) = fmax(C(h,w), 0.0)\n}\n";

struct Fixture {
  poly::IslContext isl;
  te::Program program = front::testing::lowerText(kConvPipeline);
  poly::Scop scop = poly::extractScop(isl.ctx(), program);
  isl::ctx ctx() { return isl.ctx(); }
};

struct Fig10Tree {
  std::string reserved = "{ S0[h, w] : false }";  // the producer's instances no tile recomputes
  std::string extension = "{ [ht, wt] -> S0[h, w] : ht <= h <= ht + 3 and wt <= w <= wt + 3 }";
  bool producerAfterConsumer = false;
};

// Fig. 10: the producer's own nest keeps only `reserved`; the consumer band
// is tiled 2x2 and each tile first recomputes the producer's footprint.
isl::schedule fig10(Fixture& f, const Fig10Tree& t) {
  isl::ctx ctx = f.ctx();
  isl::schedule_node n = isl::schedule::from_domain(f.scop.domain).root().child(0);
  isl::union_set producer(ctx, "{ S0[h, w] }");
  isl::union_set consumers(ctx, "{ S1[h, w]; S2[h, w, kh, kw]; S3[h, w] }");
  n = n.insert_sequence(isl::union_set_list(ctx, 2).add(producer).add(consumers));
  isl::multi_union_pw_aff producerBand(ctx, "[{ S0[h, w] -> [(h)] }, { S0[h, w] -> [(w)] }]");
  n = n.child(0)
          .child(0)
          .insert_filter(isl::union_set(ctx, t.reserved))
          .child(0)
          .insert_partial_schedule(producerBand);
  n = n.parent().parent().parent().child(1).child(0);
  n = n.insert_partial_schedule(
      isl::multi_union_pw_aff(ctx,
                              "[{ S1[h, w] -> [(h)]; S2[h, w, kh, kw] -> [(h)]; S3[h, w] -> [(h)] }, "
                              "{ S1[h, w] -> [(w)]; S2[h, w, kh, kw] -> [(w)]; S3[h, w] -> [(w)] }]"));
  n = n.as<isl::schedule_node_band>().set_permutable(true).tile(isl::multi_val(ctx, "{ [2, 2] }"));
  isl::schedule_node point = n.child(0);
  point = point.child(0).insert_sequence(isl::union_set_list(ctx, 3)
                                             .add(isl::union_set(ctx, "{ S1[h, w] }"))
                                             .add(isl::union_set(ctx, "{ S2[h, w, kh, kw] }"))
                                             .add(isl::union_set(ctx, "{ S3[h, w] }")));
  point = point.child(1).child(0).insert_partial_schedule(
      isl::multi_union_pw_aff(ctx, "[{ S2[h, w, kh, kw] -> [(kh)] }, { S2[h, w, kh, kw] -> [(kw)] }]"));
  point = point.parent().parent().parent();  // back to the point band
  isl::schedule_node graft = isl::schedule_node::from_extension(isl::union_map(ctx, t.extension));
  graft = graft.child(0).insert_partial_schedule(producerBand).parent();
  point = t.producerAfterConsumer ? point.graft_after(graft) : point.graft_before(graft);
  return point.schedule();
}

TEST(CheckDataflow, FlattensATreeWithoutExtensionsLikeIslsScheduleMap) {
  Fixture f;
  isl::union_map flat = flattenSchedule(f.scop.initialSchedule);
  EXPECT_TRUE(flat.is_single_valued());
  EXPECT_TRUE(flat.domain().is_equal(f.scop.domain));
  EXPECT_TRUE(flat.is_injective());
  EXPECT_EQ(dataflowViolation(f.scop, f.scop.initialSchedule), "");
}

TEST(CheckDataflow, AcceptsTheFig10Fusion) {
  Fixture f;
  isl::schedule tree = fig10(f, {});
  isl::union_map flat = flattenSchedule(tree);
  // Every A element at a tile border runs in several tiles: the 8x8 input
  // is recomputed as 9 tiles of 4x4.
  EXPECT_FALSE(flat.is_single_valued());
  EXPECT_TRUE(flat.intersect_domain(isl::union_set(f.ctx(), "{ S0[0, 0] }")).is_single_valued());
  EXPECT_FALSE(flat.intersect_domain(isl::union_set(f.ctx(), "{ S0[2, 2] }")).is_single_valued());
  EXPECT_EQ(dataflowViolation(f.scop, tree), "");
  // Keeping the producer's own nest as well is wasteful, not wrong.
  Fig10Tree both;
  both.reserved = "{ S0[h, w] }";
  EXPECT_EQ(dataflowViolation(f.scop, fig10(f, both)), "");
}

TEST(CheckDataflow, RejectsATileFootprintThatMissesARow) {
  Fixture f;
  Fig10Tree t;
  // Each tile recomputes 3 rows of A instead of 4; the producer's own nest
  // keeps the last row, which no tile recomputes.
  t.extension = "{ [ht, wt] -> S0[h, w] : ht <= h <= ht + 2 and wt <= w <= wt + 3 }";
  t.reserved = "{ S0[7, w] }";
  std::string why = dataflowViolation(f.scop, fig10(f, t));
  EXPECT_NE(why.find("runs reads before the writes they need (reader -> element): { S2["),
            std::string::npos)
      << why;
}

TEST(CheckDataflow, RejectsAnExtensionAfterItsConsumer) {
  Fixture f;
  Fig10Tree t;
  t.producerAfterConsumer = true;
  std::string why = dataflowViolation(f.scop, fig10(f, t));
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(why.find("before the writes") != std::string::npos ||
              why.find("other writes") != std::string::npos)
      << why;
}

TEST(CheckDataflow, RejectsAHoleInTheProducer) {
  Fixture f;
  Fig10Tree t;
  // Row 7 of A is read only by the last tile row, which now misses it.
  t.extension = "{ [ht, wt] -> S0[h, w] : ht <= h <= ht + 3 and h < 7 and wt <= w <= wt + 3 }";
  std::string why = dataflowViolation(f.scop, fig10(f, t));
  EXPECT_NE(why.find("never executes these statement instances: { S0[h = 7, w]"), std::string::npos) << why;
}

TEST(CheckDataflow, RejectsRunningAnOutputStatementTwice) {
  Fixture f;
  // Run the ReLU (which writes the output R) once more, inside the
  // quantization's nest (stage 0: one band over h and w).
  isl::schedule_node band = f.scop.initialSchedule.root().child(0).child(0).child(0);
  ASSERT_TRUE(band.isa<isl::schedule_node_band>()) << f.scop.initialSchedule;
  isl::schedule_node graft =
      isl::schedule_node::from_extension(isl::union_map(f.ctx(), "{ [h, w] -> S3[0, 0] : h = 7 and w = 7 }"));
  std::string why = dataflowViolation(f.scop, band.child(0).graft_before(graft).schedule());
  EXPECT_NE(why.find("more than once although they write outputs: { S3[h = 0, w = 0] }"), std::string::npos)
      << why;
}

}  // namespace
}  // namespace tessel::schedule
