#include "fuse/FusionTree.h"

#include <isl/map.h>

#include <string>
#include <vector>

#include "schedule/Marks.h"
#include "schedule/TreeQueries.h"
#include "target/Promotion.h"

namespace tessel::fuse {

// Statement instances that pass `node` (a filter's own filter included).
isl::union_set instancesAt(const isl::schedule_node& node) {
  isl::union_set domain = schedule::nodeDomain(node);
  if (node.isa<isl::schedule_node_filter>())
    domain = domain.intersect(node.as<isl::schedule_node_filter>().get_filter());
  return domain;
}

// The instances a producer's sequence child runs: its filter, and the
// `reserved` filters below it that earlier fusions left.
isl::union_set producerInstances(const isl::schedule_node& filter) {
  isl::union_set domain = instancesAt(filter);
  for (isl::schedule_node node = filter.child(0); node.isa<isl::schedule_node_filter>(); node = node.child(0))
    domain = domain.intersect(node.as<isl::schedule_node_filter>().get_filter());
  return domain;
}

// isl keeps the instances a tile needs as a union with a disjunct per read,
// which the AST generator turns into loop pieces under conditions (Harris:
// each slice row an `if` over two pieces of its vector loop, whose mark then
// applied to no single loop). Each statement's part becomes its simple hull
// where the hull adds no instance.
isl::union_map mergedPieces(const isl::union_map& instances) {
  isl::union_map merged = isl::union_map::empty(instances.ctx());
  instances.coalesce().foreach_map([&](isl::map piece) {
    isl::map hull = isl::manage(isl_map_from_basic_map(isl_map_simple_hull(piece.copy())));
    merged = merged.unite(hull.is_subset(piece) ? hull : piece);
  });
  return merged;
}

// `node`, or its child when `node` is the mark of tiles made for fusion.
isl::schedule_node belowFusionMark(const isl::schedule_node& node) {
  return schedule::markName(node) == schedule::kFusionTilesMark ? node.child(0) : node;
}

// The tile band right under a sequence child: filter -> mark tile_<level> ->
// band (with the mark of fusion-only tiles above the tile mark, if any).
std::optional<isl::schedule_node_band> tileBandOf(const isl::schedule_node& filter) {
  if (filter.n_children() != 1) return std::nullopt;
  isl::schedule_node mark = belowFusionMark(filter.child(0));
  if (!schedule::isTileMark(schedule::markName(mark)) || !mark.child(0).isa<isl::schedule_node_band>())
    return std::nullopt;
  return mark.child(0).as<isl::schedule_node_band>();
}

// The outer loop of a consumer that has no tile band (the equake case: Alg. 2
// finds no tile domain): the first band under the sequence child, through
// marks other than tiling and vector marks, when its outer member is
// parallel and more loops run below it (a vector loop's iterations are no
// tiles). Its iterations act as tiles of one row, with no tile loops.
std::optional<isl::schedule_node_band> untiledOuterLoop(const isl::schedule_node& filter) {
  if (filter.n_children() != 1) return std::nullopt;
  isl::schedule_node node = filter.child(0);
  while (node.isa<isl::schedule_node_mark>()) {
    std::string mark = schedule::markName(node);
    if (schedule::isTileMark(mark) || mark == schedule::kFusionTilesMark || mark == schedule::kVectorMark ||
        mark == schedule::kVectorReductionMark)
      return std::nullopt;
    node = node.child(0);
  }
  if (!node.isa<isl::schedule_node_band>()) return std::nullopt;
  auto band = node.as<isl::schedule_node_band>();
  if (band.n_member() == 0 || !band.member_get_coincident(0)) return std::nullopt;
  bool inner = band.n_member() > 1;
  for (isl::schedule_node below = band.child(0); !inner && below.n_children() == 1; below = below.child(0))
    inner = below.isa<isl::schedule_node_band>();
  if (!inner) return std::nullopt;
  return band;
}

// The loops whose iterations are a consumer's tiles: its tile band, or the
// outer loop of an untiled consumer once split from its band.
std::optional<isl::schedule_node_band> consumerTiles(const isl::schedule_node& filter) {
  if (auto tiles = tileBandOf(filter)) return tiles;
  auto outer = untiledOuterLoop(filter);
  if (outer && outer->n_member() == 1) return outer;
  return std::nullopt;
}

// The first band under `node`, through marks and filters.
std::optional<isl::schedule_node_band> firstBandBelow(isl::schedule_node node) {
  while (node.n_children() == 1) {
    node = node.child(0);
    if (node.isa<isl::schedule_node_band>()) return node.as<isl::schedule_node_band>();
  }
  return std::nullopt;
}

// Number of points of a set, from its box (exact for the rectangular
// domains of tensor programs).
std::optional<double> boxCount(const isl::set& set) {
  std::optional<std::vector<int64_t>> box = target::boxSizes(isl::union_map::from_range(isl::union_set(set)));
  if (!box) return std::nullopt;
  return static_cast<double>(target::product(*box));
}

// The part of `relation` whose range lies in statement `space`'s instances.
isl::union_map toStatement(const isl::union_map& relation, const isl::set& space) {
  return relation.intersect_range(isl::union_set(isl::set::universe(space.get_space())));
}

}  // namespace tessel::fuse
