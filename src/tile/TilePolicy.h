// AKG's tiling policy language (paper 000, Fig. 4), extended with several
// levels per dimension. A policy gives, per statement, one entry per loop
// dimension of that statement (its iteration variables in domain order: the
// output indices, then the reduction variables), each a tile size with the
// buffer its data tile targets:
//
//   S_1: 64@L2, 32@L2, 8@L1          one level per dimension (AKG's form)
//   S_1: 256@L2/32@L1, 128@L2/64@L1   two levels: outer (L2) tile, inner (L1) tile
//   S_1: *, 16@L1                     '*': this dimension is not tiled
//   *: 4@L1, 4@L1                     every statement without its own entry
//
// Statements are separated by ';' or new lines; '#' starts a comment. Sizes
// attach to statement dimensions, not to loops, so they survive rescheduling:
// the tiling pass maps each band member to the dimension it iterates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/error.h"

namespace tessel::tile {

struct LevelTile {
  int64_t size = 0;   // elements of the dimension per tile
  std::string level;  // memory level name of the hardware description ("L1", "L2", ...)
  SourceLoc loc;
};

struct DimTiling {
  std::vector<LevelTile> levels;  // outermost (largest) first; empty = not tiled ('*')
};

struct StatementTiling {
  std::string statement;  // "S1" (written S_1 or S1), or "*" for every other statement
  std::vector<DimTiling> dims;
  SourceLoc loc;
};

struct TilePolicy {
  std::vector<StatementTiling> statements;

  bool empty() const { return statements.empty(); }
  // The entry for `statement`, else the '*' entry, else nullptr.
  const StatementTiling* find(const std::string& statement) const;
  // The policy in the language above, one statement per line.
  std::string toString() const;
};

// `origin` names where the text came from ("--tiles" or a file) for errors,
// which point at line:col in the text.
TilePolicy parseTilePolicy(const std::string& text, const std::string& origin);

}  // namespace tessel::tile
