// The tiling policy language: AKG's form, several levels per dimension,
// wildcards, and a located error for every malformed policy.
#include <gtest/gtest.h>

#include "tile/TilePolicy.h"

namespace tessel::tile {
namespace {

TEST(TilePolicy, ParsesAkgForm) {
  TilePolicy p = parseTilePolicy("S_2: 64@L2, 32@L2, 8@L1", "--tiles");
  ASSERT_EQ(p.statements.size(), 1u);
  EXPECT_EQ(p.statements[0].statement, "S2");
  ASSERT_EQ(p.statements[0].dims.size(), 3u);
  EXPECT_EQ(p.statements[0].dims[0].levels[0].size, 64);
  EXPECT_EQ(p.statements[0].dims[0].levels[0].level, "L2");
  EXPECT_EQ(p.statements[0].dims[2].levels[0].size, 8);
  EXPECT_EQ(p.statements[0].dims[2].levels[0].level, "L1");
}

TEST(TilePolicy, ParsesLevelsWildcardsAndSeveralStatements) {
  TilePolicy p = parseTilePolicy("# matmul\nS1: 256@L2/32@L1, *, 16@L1\nS0: 8@L1; *: 4@L1", "f.tiles");
  ASSERT_EQ(p.statements.size(), 3u);
  EXPECT_EQ(p.statements[0].dims[0].levels.size(), 2u);
  EXPECT_EQ(p.statements[0].dims[0].levels[1].size, 32);
  EXPECT_TRUE(p.statements[0].dims[1].levels.empty());
  EXPECT_EQ(p.find("S0"), &p.statements[1]);
  EXPECT_EQ(p.find("S7"), &p.statements[2]);  // the wildcard
  EXPECT_EQ(p.toString(), "S_1: 256@L2/32@L1, *, 16@L1\nS_0: 8@L1\n*: 4@L1\n");
  // toString's output reads back to the same policy.
  EXPECT_EQ(parseTilePolicy(p.toString(), "again").toString(), p.toString());
}

void expectError(const std::string& text, const std::string& where, const std::string& what) {
  try {
    parseTilePolicy(text, "--tiles");
    FAIL() << "accepted: " << text;
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("--tiles:" + where + ": error: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(TilePolicy, MalformedPoliciesAreLocated) {
  expectError("", "1:1", "empty tiling policy");
  expectError("T_1: 4@L1", "1:1", "expected a statement name");
  expectError("S_: 4@L1", "1:3", "statement's number");
  expectError("S_1 4@L1", "1:5", "expected ':'");
  expectError("S_1: 4", "1:7", "expected '@'");
  expectError("S_1: 4@", "1:8", "expected a buffer name");
  expectError("S_1: 0@L1", "1:6", "must be positive");
  expectError("S_1: x@L1", "1:6", "expected a tile size");
  expectError("S_1: 4@L1,", "1:11", "expected a tile size");
  expectError("S_1: 4@L1 5@L1", "1:11", "expected ';' or a new line");
  expectError("S_1: 99999999999@L1", "1:6", "too large");
  expectError("S_1: 4@L1\nS_1: 8@L1", "2:1", "tiled twice");
}

}  // namespace
}  // namespace tessel::tile
