// What the tiling decisions need to know about one permutable band: the range
// of every member, the statements it schedules and which iteration variable
// each member runs over, and a data-movement model of one tile (AKG §4.2):
// the data tile each array contributes (a rectangular box, from isl), counted
// in cache lines, against the statement instances the tile computes.
#pragma once

#include <isl/cpp.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "poly/Scop.h"

namespace tessel::tile {

struct TileCost {
  double footprintBytes = 0;  // data tiles of every array, in whole cache lines
  double instances = 0;       // statement instances the tile executes
  int arrays = 0;             // arrays the tile touches
  std::map<std::string, double> elements;  // per array: the elements of its data tile
  // Per array: the rows of its data tile (runs contiguous in memory) and
  // the bytes of each, what the hardware prefetchers follow.
  struct Rows {
    double count = 0;
    int64_t bytes = 0;
  };
  std::map<std::string, Rows> rows;
};

class BandModel {
 public:
  BandModel(const poly::Scop& scop, const isl::schedule_node_band& band, int64_t lineBytes);

  int members() const { return static_cast<int>(lower_.size()); }
  int64_t lower(int member) const { return lower_[static_cast<size_t>(member)]; }
  int64_t extent(int member) const { return extent_[static_cast<size_t>(member)]; }
  const std::vector<int64_t>& extents() const { return extent_; }  // one per member
  bool coincident(int member) const { return coincident_[static_cast<size_t>(member)]; }
  const std::vector<std::string>& statements() const { return statements_; }
  // The dimension (index into Statement::dims) that `member` runs over for
  // `statement`, or -1 when the member is not one of its variables alone.
  int statementDim(const std::string& statement, int member) const;

  // The smallest element size (bytes) among the arrays the band touches.
  int64_t narrowestElementBytes() const;

  // The tile at the band's origin with these sizes (one per member), inside
  // one iteration of the enclosing loops.
  TileCost cost(const std::vector<int64_t>& sizes) const;

  // Arrays written with non-temporal stores, past the caches: their data
  // tiles take no room in the footprints (their rows still count).
  void setBypassingCaches(std::set<std::string> arrays) { bypassing_ = std::move(arrays); }

 private:
  int64_t lineBytes_;
  std::vector<int64_t> lower_, extent_;
  std::vector<bool> coincident_;
  std::vector<std::string> statements_;
  std::map<std::string, std::vector<int>> memberDims_;
  isl::union_map instanceToTime_;    // statement instance -> (enclosing loops, band members)
  isl::union_map accesses_;          // reads and writes of the band's instances
  std::vector<int64_t> outerPoint_;  // the enclosing loops' first iteration
  std::map<std::string, int64_t> elementBytes_;
  std::set<std::string> bypassing_;
};

}  // namespace tessel::tile
