// Structured remarks: the text --explain prints is their messages, and the
// JSON --explain=json prints keeps every field, numbers as numbers.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "support/Remarks.h"

namespace tessel {
namespace {

Remarks sample() {
  Remarks r;
  r.setPass("inline");
  r.applied("T", "inline: T inlined into S1", {{"readers", "S1"}, {"reads", 2}});
  r.missed("U", "inline: U kept (read 3 times)\n", {{"reason", "read 3 times"}});
  r.setPass("tile");
  r.analysis("S0 S1", "band over S0 S1:\n  tiles 32x64",
             {{"tile", "32x64"}, {"bytes", int64_t{1} << 33}, {"share", 0.25}, {"parallel", true}});
  return r;
}

TEST(Remarks, TheTextIsTheMessagesLineByLine) {
  EXPECT_EQ(sample().text(),
            "inline: T inlined into S1\ninline: U kept (read 3 times)\nband over S0 S1:\n  tiles 32x64\n");
}

TEST(Remarks, EachRemarkBelongsToThePassRunningWhenItWasMade) {
  Remarks r = sample();
  EXPECT_EQ(r.find("inline").size(), 2u);
  ASSERT_EQ(r.find("inline", RemarkKind::Missed, "U").size(), 1u);
  EXPECT_EQ(r.find("inline", RemarkKind::Missed, "U")[0].value("reason"), "read 3 times");
  EXPECT_TRUE(r.find("inline", RemarkKind::Applied, "U").empty());
  ASSERT_EQ(r.find("tile", "S0 S1").size(), 1u);
  EXPECT_EQ(r.find("tile", "S0 S1")[0].value("tile"), "32x64");
  EXPECT_EQ(r.find("tile", "S0 S1")[0].value("absent"), "");
  EXPECT_FALSE(r.find("tile", "S0 S1")[0].has("absent"));
}

TEST(Remarks, JsonKeepsEveryFieldAndTypesTheValues) {
  nlohmann::json all = nlohmann::json::parse(sample().json());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]["pass"], "inline");
  EXPECT_EQ(all[0]["kind"], "applied");
  EXPECT_EQ(all[0]["subject"], "T");
  EXPECT_EQ(all[0]["message"], "inline: T inlined into S1");
  EXPECT_EQ(all[0]["values"]["reads"], 2);
  EXPECT_EQ(all[1]["kind"], "missed");
  EXPECT_EQ(all[1]["message"], "inline: U kept (read 3 times)");  // no trailing newline
  EXPECT_EQ(all[2]["kind"], "analysis");
  EXPECT_EQ(all[2]["values"]["bytes"], int64_t{1} << 33);
  EXPECT_DOUBLE_EQ(all[2]["values"]["share"].get<double>(), 0.25);
  EXPECT_EQ(all[2]["values"]["parallel"], true);
  EXPECT_EQ(nlohmann::json::parse(Remarks().json()), nlohmann::json::array());
}

TEST(Remarks, ADecisionMadeBeforeThePipelineComesFirst) {
  Remarks before;
  before.setPass("scheme-auto");
  before.missed("O", "scheme auto: O: no scheme (vectorization is off)",
                {{"reason", "vectorization is off"}});
  Remarks r = sample();
  r.prepend(before);
  EXPECT_EQ(r.all().front().pass, "scheme-auto");
  EXPECT_EQ(r.all().size(), 4u);
}

TEST(Remarks, AValueThatIsNoFiniteNumberIsText) {
  Remarks r;
  r.analysis("", "x", {{"ratio", std::numeric_limits<double>::infinity()}});
  nlohmann::json all = nlohmann::json::parse(r.json());
  EXPECT_TRUE(all[0]["values"]["ratio"].is_string()) << all.dump();
}

}  // namespace
}  // namespace tessel
