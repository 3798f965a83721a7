// The schedule-tree queries basteln's fusion is built from: instances at a
// node, the tile bands of a sequence's children, the outer loop of an untiled
// consumer, counts and parts of relations.
#pragma once

#include <isl/cpp.h>

#include <optional>

namespace tessel::fuse {

// Statement instances that pass `node` (a filter's own filter included).
isl::union_set instancesAt(const isl::schedule_node& node);

// The instances a producer's sequence child runs: its filter, and the
// `reserved` filters below it that earlier fusions left.
isl::union_set producerInstances(const isl::schedule_node& filter);

// isl keeps the instances a tile needs as a union with a disjunct per read,
// which the AST generator turns into loop pieces under conditions (Harris:
// each slice row an `if` over two pieces of its vector loop, whose mark then
// applied to no single loop). Each statement's part becomes its simple hull
// where the hull adds no instance.
isl::union_map mergedPieces(const isl::union_map& instances);

// `node`, or its child when `node` is the mark of tiles made for fusion.
isl::schedule_node belowFusionMark(const isl::schedule_node& node);

// The tile band right under a sequence child: filter -> mark tile_<level> ->
// band (with the mark of fusion-only tiles above the tile mark, if any).
std::optional<isl::schedule_node_band> tileBandOf(const isl::schedule_node& filter);

// The outer loop of a consumer that has no tile band (the equake case: Alg. 2
// finds no tile domain): the first band under the sequence child, through
// marks other than tiling and vector marks, when its outer member is
// parallel and more loops run below it (a vector loop's iterations are no
// tiles). Its iterations act as tiles of one row, with no tile loops.
std::optional<isl::schedule_node_band> untiledOuterLoop(const isl::schedule_node& filter);

// The loops whose iterations are a consumer's tiles: its tile band, or the
// outer loop of an untiled consumer once split from its band.
std::optional<isl::schedule_node_band> consumerTiles(const isl::schedule_node& filter);

// The first band under `node`, through marks and filters.
std::optional<isl::schedule_node_band> firstBandBelow(isl::schedule_node node);

// Number of points of a set, from its box (exact for the rectangular
// domains of tensor programs).
std::optional<double> boxCount(const isl::set& set);

// The part of `relation` whose range lies in statement `space`'s instances.
isl::union_map toStatement(const isl::union_map& relation, const isl::set& space);

}  // namespace tessel::fuse
