#include "fuse/Basteln.h"

#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fuse/FusionTree.h"
#include "poly/IslWorkLimit.h"
#include "schedule/CheckDataflow.h"
#include "schedule/CheckSchedule.h"
#include "schedule/Marks.h"
#include "schedule/TreeQueries.h"
#include "target/MicroKernelPlan.h"
#include "target/Promotion.h"
#include "target/cpu/MarkUnrollJam.h"
#include "tile/TileBands.h"

namespace tessel::fuse {

namespace {

// isl operations the dataflow check of one fusion may take: Harris's five
// producers need several million (about 3 s); past it the fusion is not made.
constexpr unsigned long kCheckOperations = 10'000'000;

// One producer chosen for a consumer's tiles.
struct Slice {
  int child = 0;              // position in the sequence
  isl::union_set domain;      // all its instances
  isl::union_map executions;  // tile (outer prefix and tile members) -> instances it runs there
  double redundancy = 0;      // share of its executions that are recomputations
  std::string tileBox;        // "34x34": the slice of one tile
  // Alg. 4's identical case: a later output nest that runs in the tiles
  // (each instance once) instead of a producer recomputed there.
  bool coConsumer = false;
};

Remarks::Values joined(Remarks::Values first, const Remarks::Values& then) {
  first.insert(first.end(), then.begin(), then.end());
  return first;
}

// Where producers run for a consumer, as its remarks name it.
struct Place {
  std::string text;      // "the tiles of S3 S2 S1"
  std::string consumer;  // "S3 S2 S1"
  std::string kind;      // "tiles", "outer-tile-loops" (a row of tiles) or "untiled-outer-loop"
  int tileLoops = 0;     // the outer tile loops, for "outer-tile-loops"

  Remarks::Values values() const {
    Remarks::Values out{{"consumer", consumer}, {"place", kind}};
    if (tileLoops > 0) out.emplace_back("tile_loops", tileLoops);
    return out;
  }
};

class TileFusion {
 public:
  TileFusion(const poly::Scop& scop, const BastelnOptions& options, Remarks& remarks)
      : scop_(scop), options_(options), remarks_(remarks) {}

  isl::schedule run(const isl::schedule& schedule) {
    // Sequences by path, deepest first: fusion inserts nodes below the
    // sequence it works on, which moves the sequences nested there but not
    // the sequence's ancestors or its siblings' subtrees.
    std::vector<std::vector<int>> sequences;
    collectSequences(schedule.root(), {}, sequences);
    std::stable_sort(sequences.begin(), sequences.end(),
                     [](const auto& a, const auto& b) { return a.size() > b.size(); });
    isl::schedule result = schedule;
    for (const auto& path : sequences) result = fuseAt(result, path);
    return settleFusionTiles(result.root()).schedule();
  }

 private:
  // Tiles made for fusion stay where something was recomputed in them (an
  // extension under the tile band); elsewhere they would only cost, so the
  // tile band goes and its point band runs the nest untiled. Tiles whose
  // footprints promotion already copies stay.
  isl::schedule_node settleFusionTiles(isl::schedule_node node) {
    if (schedule::markName(node) == schedule::kFusionTilesMark) {
      isl::schedule_node tileMark = node.child(0);
      node = isl::manage(isl_schedule_node_delete(node.release()));  // now the tile mark
      bool shaped = schedule::isTileMark(schedule::markName(tileMark)) &&
                    tileMark.child(0).isa<isl::schedule_node_band>() &&
                    tileMark.child(0).child(0).isa<isl::schedule_node_band>();
      if (shaped) {
        isl::schedule_node tiles = tileMark.child(0);
        // An extension right under the tile band: something was recomputed.
        bool fused = isl_schedule_node_is_subtree_anchored(tiles.child(0).get()) != isl_bool_false;
        if (!fused && !holdsPromotion(tiles)) {
          // (A producer recomputed everywhere else keeps an empty nest: nothing to say.)
          std::string names = schedule::statementNames(schedule::nodeDomain(tiles));
          if (!names.empty())
            remarks_.applied(
                names,
                "basteln: tiles of " + names + " made for fusion removed (nothing was recomputed in them)",
                {{"action", "tiles-removed"}, {"reason", "nothing was recomputed in them"}});
          node = isl::manage(isl_schedule_node_delete(node.release()));  // now the tile band
          // Its isolate option anchors it; the point band needs none.
          node = node.as<isl::schedule_node_band>().set_ast_build_options(isl::union_set::empty(node.ctx()));
          node = isl::manage(isl_schedule_node_delete(node.release()));  // now the point band
          // Its coincidence was judged inside the tiles.
          node = schedule::recomputeCoincidence(scop_, node.as<isl::schedule_node_band>());
        }
      }
    }
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i)
      node = settleFusionTiles(node.child(i)).parent();
    return node;
  }

  bool readsTransposedCopy(const isl::schedule_node& node) const {
    if (options_.promotions) {
      if (auto site = options_.promotions->siteOfMark(schedule::markName(node))) {
        for (const auto& t : options_.promotions->sites[*site].tensors)
          if (!t.layout.empty()) return true;
      }
    }
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i)
      if (readsTransposedCopy(node.child(i))) return true;
    return false;
  }

  static bool holdsMicroKernel(const isl::schedule_node& node) {
    if (schedule::isMicroKernelMark(schedule::markName(node))) return true;
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i)
      if (holdsMicroKernel(node.child(i))) return true;
    return false;
  }

  static bool holdsPromotion(const isl::schedule_node& node) {
    if (schedule::isPromotionMark(schedule::markName(node))) return true;
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i)
      if (holdsPromotion(node.child(i))) return true;
    return false;
  }

  static isl::schedule_node at(const isl::schedule& schedule, const std::vector<int>& path) {
    isl::schedule_node node = schedule.root();
    for (int i : path) node = node.child(i);
    return node;
  }

  void collectSequences(const isl::schedule_node& node, std::vector<int> path,
                        std::vector<std::vector<int>>& out) const {
    if (node.isa<isl::schedule_node_extension>()) return;
    if (node.isa<isl::schedule_node_sequence>()) out.push_back(path);
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i) {
      std::vector<int> child = path;
      child.push_back(i);
      collectSequences(node.child(i), child, out);
    }
  }

  // Consumers from last to first; each takes the producers before it.
  isl::schedule fuseAt(isl::schedule schedule, const std::vector<int>& path) {
    int n = static_cast<int>(at(schedule, path).n_children());
    std::vector<bool> sliced(static_cast<size_t>(n), false);
    for (int i = n - 1; i > 0; --i) {
      if (sliced[static_cast<size_t>(i)]) continue;
      // An untiled consumer (the equake case) is fused at its outer loop,
      // split from the rest of its band: the tree keeps the split only when
      // something is fused there.
      isl::schedule candidate = schedule;
      bool untiled = !tileBandOf(at(schedule, path).child(i));
      if (untiled) {
        std::optional<isl::schedule_node_band> outer = untiledOuterLoop(at(schedule, path).child(i));
        if (!outer) continue;
        if (outer->n_member() > 1) candidate = outer->split(1).schedule();
      }
      isl::schedule_node sequence = at(candidate, path);
      std::optional<isl::schedule_node_band> tiles = consumerTiles(sequence.child(i));
      if (!tiles || !schedule::queryable(*tiles)) continue;
      std::string consumerNames = schedule::statementNames(instancesAt(sequence.child(i)));
      Place consumer{
          (untiled ? "each iteration of the untiled outer loop of " : "the tiles of ") + consumerNames,
          consumerNames, untiled ? "untiled-outer-loop" : "tiles"};
      std::vector<Slice> coConsumers;
      isl::schedule unsplit = candidate;
      Place unsplitConsumer = consumer;
      Remarks unsplitNotes;  // why no nest runs in the whole tiles
      Remarks coNotes;       // the same for the tiles kept
      int splitAfter = 0;    // tile loops the co-consumers run in, when the tile band was split
      if (!untiled) {
        bool severalTiles = false;
        coConsumers = coConsumersOf(sequence, i, *tiles, sliced, consumer, unsplitNotes, severalTiles);
        coNotes = unsplitNotes;
        // A nest whose instances would run in several tiles may run in one
        // iteration of the outer tile loops alone (the tile rows of a matmul
        // tiled along its columns too): the tile band is split after them.
        for (int d = static_cast<int>(tiles->n_member()) - 1; coConsumers.empty() && severalTiles && d >= 1;
             --d) {
          isl::schedule split = tiles->split(d).schedule();
          isl::schedule_node splitSequence = at(split, path);
          std::optional<isl::schedule_node_band> outer = consumerTiles(splitSequence.child(i));
          if (!outer || !schedule::queryable(*outer)) break;
          Place rowsOfTiles{"the outer " + std::to_string(d) + " tile loop(s) of " + consumerNames,
                            consumerNames, "outer-tile-loops", d};
          Remarks splitNotes;
          std::vector<Slice> found =
              coConsumersOf(splitSequence, i, *outer, sliced, rowsOfTiles, splitNotes, severalTiles);
          if (found.empty()) {
            // (Fewer tile loops help only nests refused for running in several tiles.)
            coNotes = unsplitNotes;
            coNotes.append(splitNotes);
            continue;
          }
          candidate = split;
          sequence = splitSequence;
          tiles = outer;
          consumer = rowsOfTiles;
          coConsumers = std::move(found);
          coNotes = splitNotes;
          splitAfter = d;
        }
      }
      Remarks sliceNotes;
      std::vector<Slice> slices = slicesFor(sequence, i, *tiles, consumer, untiled, coConsumers, sliceNotes);
      bool moved = std::any_of(slices.begin(), slices.end(), [](const Slice& s) { return s.coConsumer; });
      if (splitAfter > 0 && !moved) {
        // The split served co-consumers that stay in their nests: the
        // producers are sliced in the consumer's whole tiles instead.
        candidate = unsplit;
        sequence = at(candidate, path);
        tiles = consumerTiles(sequence.child(i));
        consumer = unsplitConsumer;
        coNotes = unsplitNotes;
        sliceNotes = Remarks();
        slices = slicesFor(sequence, i, *tiles, consumer, untiled, {}, sliceNotes);
        splitAfter = 0;
      }
      say(coNotes);
      say(sliceNotes);
      if (slices.empty()) continue;
      std::string why;
      std::optional<isl::schedule> fused = build(candidate, path, i, slices, why);
      if (!fused) {
        std::string producers;
        for (const auto& s : slices)
          producers += (producers.empty() ? "" : " ; ") + schedule::statementNames(s.domain);
        remarks_.missed(
            consumer.consumer, "basteln: no fusion into " + consumer.text + " (" + why + ")",
            joined({{"action", "no-fusion"}, {"reason", why}, {"producers", producers}}, consumer.values()));
        continue;
      }
      schedule = *fused;
      for (const auto& s : slices) {
        sliced[static_cast<size_t>(s.child)] = true;
        std::string names = schedule::statementNames(s.domain);
        if (s.coConsumer) {
          remarks_.applied(names,
                           "basteln: " + names + " runs in " + consumer.text +
                               " (Alg. 4, identical case: it reads the values their slices hold; each of its "
                               "instances in one " +
                               (splitAfter > 0 ? "row of tiles" : "tile") + ")",
                           joined({{"action", "moved"}}, consumer.values()));
          continue;
        }
        char share[32];
        std::snprintf(share, sizeof share, "%.0f%%", 100 * s.redundancy);
        remarks_.applied(names,
                         "basteln: " + names + " recomputed in " + consumer.text + " (a " + s.tileBox +
                             " slice per " +
                             (untiled          ? "iteration"
                              : splitAfter > 0 ? "row of tiles"
                                               : "tile") +
                             ", about " + share + " recomputation)",
                         joined(joined({{"action", "recomputed"}}, consumer.values()),
                                {{"slice", s.tileBox}, {"redundancy", s.redundancy}}));
      }
    }
    return schedule;
  }

  // Alg. 4, the identical case (eq. 22): a later nest s that reads values of
  // a producer the consumer o also reads. Related through those values
  // (h1 o h2^-1: o's tile -> the producer instances it reads -> the s
  // instances reading them, with the s instances those depend on), every
  // instance of s must fall in exactly one of o's tiles; s then runs there
  // (after the slices, before o's point loops), and the producer's slice
  // serves both. s may not depend on o or on the nests between them, nor
  // they on it, and must hold nothing fused or grafted itself.
  // `severalTiles`: some nest was refused only because its instances would
  // run in several tiles (fewer tile loops may do).
  std::vector<Slice> coConsumersOf(const isl::schedule_node& sequence, int consumer,
                                   const isl::schedule_node_band& tiles, const std::vector<bool>& sliced,
                                   const Place& where, Remarks& notes, bool& severalTiles) {
    severalTiles = false;
    std::vector<Slice> result;
    if (tiles.n_member() == 0 || !tiles.member_get_coincident(0)) return result;
    isl::union_set consumerDomain = instancesAt(sequence.child(consumer));
    isl::union_map inTile =
        tiles.child(0).prefix_schedule_union_map().intersect_domain(consumerDomain).reverse();
    std::optional<bool> enoughTiles;  // (counted once, for the first nest that needs it)
    isl::union_set producers = isl::union_set::empty(consumerDomain.ctx());
    for (int j = 0; j < consumer; ++j) producers = producers.unite(producerInstances(sequence.child(j)));
    isl::union_map flow = scop_.deps.flow.intersect_domain(producers);
    isl::union_map validity = scop_.deps.validity();
    isl::union_set between = consumerDomain;
    int n = static_cast<int>(sequence.n_children());
    for (int k = consumer + 1; k < n; ++k) {
      isl::schedule_node filter = sequence.child(k);
      isl::union_set domain = instancesAt(filter);
      isl::union_set before = between;
      between = between.unite(domain);
      if (sliced[static_cast<size_t>(k)] || domain.is_empty()) continue;
      // The producer values both read.
      isl::union_map read = flow.intersect_range(domain);
      isl::union_set shared = read.domain().intersect(flow.intersect_range(consumerDomain).domain());
      if (shared.is_empty()) continue;
      std::string names = schedule::statementNames(domain);
      auto refuse = [&](const std::string& why, const Remarks::Values& extra = {}) {
        notes.missed(names, "basteln: " + names + " does not run in " + where.text + " (Alg. 4: " + why + ")",
                     joined(joined({{"action", "not-moved"}, {"reason", why}}, where.values()), extra));
      };
      if (!validity.intersect_domain(before).intersect_range(domain).is_empty() ||
          !validity.intersect_domain(domain).intersect_range(before).is_empty()) {
        refuse("it depends on the nests from the consumer to it, or they on it");
        continue;
      }
      if (holdsMicroKernel(filter) || holdsExtension(filter)) {
        refuse("its nest holds a micro-kernel or a fusion of its own");
        continue;
      }
      isl::union_map executions =
          inTile.apply_range(flow.intersect_range(consumerDomain).reverse()).apply_range(read);
      executions = withWhatTheyRead(executions, domain);
      if (!executions.range().is_equal(domain)) {
        refuse("some of its instances read none of the values the tiles read");
        continue;
      }
      if (!executions.reverse().is_single_valued()) {
        refuse("some of its instances would run in several tiles");
        severalTiles = true;
        continue;
      }
      // The moved nest's own loops run on one thread per tile (mark-parallel
      // cannot query nests under an extension node): the tiles must keep the
      // cores busy.
      if (!enoughTiles) enoughTiles = options_.cores <= 1 || atLeastPoints(inTile.domain(), options_.cores);
      if (!*enoughTiles) {
        refuse("the tiles are fewer than the " + std::to_string(options_.cores) +
                   " threads, and its own loops would run on one thread per tile",
               {{"threads", options_.cores}});
        continue;
      }
      result.push_back(Slice{k, domain, executions, 0, "", true});
    }
    return result;
  }

  // `executions` (tile -> instances) restricted to `domain`, with the
  // instances of `domain` those read through its own dependences (a
  // reduction's init and earlier updates), as few pieces.
  isl::union_map withWhatTheyRead(isl::union_map executions, const isl::union_set& domain) const {
    isl::union_map within = scop_.deps.flow.intersect_domain(domain).intersect_range(domain);
    if (!within.is_empty()) {
      isl_bool exact;
      isl::union_map earlier =
          isl::manage(isl_union_map_transitive_closure(within.reverse().release(), &exact));
      executions = executions.unite(executions.apply_range(earlier));
    }
    return mergedPieces(executions.intersect_range(domain));
  }

  // Whether `points` holds at least `n` points; stops counting there.
  static bool atLeastPoints(const isl::union_set& points, int n) {
    struct Count {
      int seen = 0;
      int wanted = 0;
    } count{0, n};
    bool unknown = false;
    points.foreach_set([&](const isl::set& set) {
      if (count.seen >= count.wanted || unknown) return;
      isl_stat scanned = isl_set_foreach_point(
          set.get(),
          [](isl_point* point, void* user) -> isl_stat {
            isl_point_free(point);
            auto* c = static_cast<Count*>(user);
            return ++c->seen >= c->wanted ? isl_stat_error : isl_stat_ok;  // (error: stop here)
          },
          &count);
      // A scan that failed before the count was reached (an unbounded set) counts nothing.
      unknown = scanned == isl_stat_error && count.seen < count.wanted;
    });
    return unknown || count.seen >= count.wanted;
  }

  static bool holdsExtension(const isl::schedule_node& node) {
    if (node.isa<isl::schedule_node_extension>()) return true;
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i)
      if (holdsExtension(node.child(i))) return true;
    return false;
  }

  // `where`: the tiles of S1, for the remarks. `rows`: the tiles are
  // the iterations of an untiled consumer's outer loop. `coConsumers`: later
  // nests that run in the tiles too (coConsumersOf); they join the slices
  // only when some producer is recomputed for them.
  // Refusals go to `notes`.
  std::vector<Slice> slicesFor(const isl::schedule_node& sequence, int consumer,
                               const isl::schedule_node_band& tiles, const Place& where, bool rows,
                               const std::vector<Slice>& coConsumers, Remarks& notes) {
    std::vector<Slice> slices;
    // d = 1: the tiles must keep an outer parallel loop.
    if (tiles.n_member() == 0 || !tiles.member_get_coincident(0)) return slices;
    isl::union_set consumerDomain = instancesAt(sequence.child(consumer));
    isl::union_map tileOf = tiles.child(0).prefix_schedule_union_map().intersect_domain(consumerDomain);
    isl::union_map inTile = tileOf.reverse();  // tile -> instances it runs, growing with each slice
    isl::union_set fused = consumerDomain;
    for (const auto& c : coConsumers) {
      inTile = inTile.unite(c.executions);
      fused = fused.unite(c.domain);
    }
    isl::union_map flow = scop_.deps.flow;
    int64_t sliceBytesSoFar = 0;
    for (int j = consumer - 1; j >= 0; --j) {
      // A producer already recomputed in a later consumer's tiles keeps, under
      // its `reserved` filter, the instances others read (Alg. 4, the
      // disjoint case): those may go into this consumer's tiles in turn.
      isl::schedule_node filter = sequence.child(j);
      isl::union_set domain = producerInstances(filter);
      isl::union_map out = flow.intersect_domain(domain);
      isl::union_set readers = out.range().subtract(domain);
      if (readers.is_empty()) continue;
      std::string names = schedule::statementNames(domain);
      auto refuse = [&](const std::string& why, const Remarks::Values& extra = {}) {
        notes.missed(names, "basteln: " + names + " not recomputed in " + where.text + " (" + why + ")",
                     joined(joined({{"action", "not-recomputed"}, {"reason", why}}, where.values()), extra));
      };
      if (!scop_.writes.intersect_domain(domain).intersect_range(scop_.outputElements()).is_empty()) {
        refuse("it writes program outputs");
        continue;
      }
      if (holdsMicroKernel(filter)) {
        refuse("it is a grafted micro-kernel, which runs whole");
        continue;
      }
      std::optional<isl::schedule_node_band> band = firstBandBelow(filter);
      if (!band || band->n_member() == 0 || !band->member_get_coincident(0)) {
        refuse("it has no outer parallel loop; each tile would run all of it");
        continue;
      }
      // Producer and consumer inside common loops already share, per
      // iteration, a buffer that stays in the caches (contraction): slices
      // would only redo that work in smaller pieces (transbmm's transpose per
      // batch and head, 32 KiB: 24% slower recomputed per tile). At the top
      // level fusion still saves the full-size array and a parallel region.
      if (options_.sliceBytesLimit > 0 && options_.redundancyLimit < 1 &&
          isl_schedule_node_get_schedule_depth(sequence.get()) > 0) {
        Slice together{j, domain, sequence.prefix_schedule_union_map().intersect_domain(domain).reverse(), 0,
                       ""};
        std::optional<int64_t> bytes = sliceBytes(together);
        if (bytes && *bytes <= options_.sliceBytesLimit) {
          refuse("its values for one iteration of the loops around it and its readers (" + kibText(*bytes) +
                     ") already stay in the caches",
                 {{"bytes", *bytes}});
          continue;
        }
      }
      // A reduction's own tiles reuse its operands; slices of one iteration
      // each read them again (bmmtrans's matmul recomputed per row of its
      // transpose: 2.3x slower).
      if (rows && reduces(domain)) {
        refuse("it is a reduction, whose slices of one iteration would lose its tiles' reuse");
        continue;
      }
      // Copies run the producer's point loops without its promotions.
      if (options_.redundancyLimit < 1 && readsTransposedCopy(filter)) {
        refuse("its vector loops read a transposed copy that its recomputations would not have");
        continue;
      }
      isl::union_map need = inTile.apply_range(out.intersect_range(fused).reverse());
      need = withWhatTheyRead(need, domain);
      isl::union_set recomputed = need.range();
      if (recomputed.is_empty()) continue;
      // Alg. 4: other consumers may read the producer's other values (the
      // disjoint case: they stay in its own nest), not those recomputed here.
      if (!out.intersect_domain(recomputed).range().subtract(domain).is_subset(fused)) {
        refuse("other statements read the values it would recompute");
        continue;
      }
      if (!out.intersect_domain(recomputed).intersect_range(domain.subtract(recomputed)).is_empty()) {
        refuse("instances no tile needs read values the tiles compute");
        continue;
      }
      Slice slice{j, domain, need, 1.0, "?"};
      if (!estimateRedundancy(slice) && options_.redundancyLimit < 1) {
        refuse("its recomputation cannot be estimated (no bounded slice per tile)");
        continue;
      }
      if (slice.redundancy > options_.redundancyLimit) {
        char text[96];
        std::snprintf(text, sizeof text,
                      "about %.0f%% of its executions would be recomputations, limit %.0f%%",
                      100 * slice.redundancy, 100 * options_.redundancyLimit);
        refuse(text, {{"redundancy", slice.redundancy}, {"redundancy_limit", options_.redundancyLimit}});
        continue;
      }
      // A slice the caches cannot hold between its producer and the
      // consumer saves no memory traffic: it only adds work (interpolate's
      // whole-height L3 tiles needed 1 MiB slices, 12% slower than no fusion).
      if (options_.sliceBytesLimit > 0 && options_.redundancyLimit < 1) {
        std::optional<int64_t> bytes = sliceBytes(slice);
        if (!bytes || sliceBytesSoFar + *bytes > options_.sliceBytesLimit) {
          Remarks::Values extra{{"others_bytes", sliceBytesSoFar}, {"bytes_limit", options_.sliceBytesLimit}};
          if (bytes) extra.emplace_back("slice_bytes", *bytes);
          refuse("its slice per tile" + (bytes ? " (" + kibText(*bytes) + ")" : std::string()) +
                     " with the others' would not stay in the caches (limit " +
                     kibText(options_.sliceBytesLimit) + ")",
                 extra);
          continue;
        }
        sliceBytesSoFar += *bytes;
      }
      slices.push_back(slice);
      inTile = inTile.unite(need);
      fused = fused.unite(recomputed);
    }
    if (slices.empty()) return slices;
    // A co-consumer that reads a recomputed producer must run in the tiles
    // (the producer's nest no longer computes those values); one that reads
    // none stays in its nest.
    isl::union_set recomputed = isl::union_set::empty(inTile.ctx());
    for (const auto& s : slices) recomputed = recomputed.unite(s.domain);
    for (const auto& c : coConsumers)
      if (!flow.intersect_domain(recomputed).intersect_range(c.domain).is_empty()) slices.push_back(c);
    std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) { return a.child < b.child; });
    return slices;
  }

  bool reduces(const isl::union_set& domain) const {
    bool any = false;
    domain.foreach_set([&](isl::set statement) {
      const std::string name = isl::manage(isl_set_get_tuple_id(statement.get())).name();
      any = any || scop_.statement(name).kind == poly::StatementKind::Update;
    });
    return any;
  }

  static std::string kibText(int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f KiB", static_cast<double>(bytes) / 1024);
    return text;
  }

  // Bytes one tile's slice writes, each tensor counted once (a reduction's
  // init and update write the same elements), from the boxes of the
  // elements (their widest spans where isl finds no fixed-size box); nullopt
  // when a span is unbounded.
  std::optional<int64_t> sliceBytes(const Slice& slice) const {
    std::map<std::string, int64_t> perTensor;
    bool known = true;
    slice.executions.range().foreach_set([&](isl::set statement) {
      isl::union_map written = toStatement(slice.executions, statement).apply_range(scop_.writes);
      std::optional<std::vector<int64_t>> box = target::spanSizes(written);
      const poly::Statement& writer =
          scop_.statement(isl::manage(isl_set_get_tuple_id(statement.get())).name());
      const std::string& tensor = scop_.program->stages[static_cast<size_t>(writer.stage)].output;
      const te::TensorDecl* decl = scop_.program->findTensor(tensor);
      if (!box || !decl) {
        known = false;
        return;
      }
      int64_t bytes = target::product(*box) * te::dtypeBytes(decl->dtype);
      perTensor[tensor] = std::max(perTensor[tensor], bytes);
    });
    if (!known) return std::nullopt;
    int64_t total = 0;
    for (const auto& [tensor, bytes] : perTensor) total += bytes;
    return total;
  }

  // 1 - instances / executions, from the boxes of one tile's slice and of
  // all the instances (exact for rectangular domains, full tiles and slices
  // with a fixed box; an upper bound where a slice's box comes from its
  // widest spans); false when a span is unbounded.
  bool estimateRedundancy(Slice& slice) const {
    // Tiles are counted one by one: their coordinates step by the tile size,
    // which a box does not see.
    double tiles = static_cast<double>(
        isl::manage(isl_set_count_val(slice.executions.domain().as_set().get())).num_si());
    double executions = 0, instances = 0;
    std::string box;
    bool known = true;
    slice.executions.range().foreach_set([&](isl::set statement) {
      isl::union_map perTile = toStatement(slice.executions, statement);
      std::optional<std::vector<int64_t>> one = target::spanSizes(perTile);
      std::optional<double> all = boxCount(statement);
      if (!one || !all) {
        known = false;
        return;
      }
      executions += tiles * static_cast<double>(target::product(*one));
      instances += *all;
      if (box.empty() || target::product(*one) > 1) box = target::boxText(*one);
    });
    if (!known || executions <= 0) return false;
    slice.redundancy = std::max(0.0, 1.0 - instances / executions);
    slice.tileBox = box;
    return true;
  }

  // The tree with the slices recomputed in the consumer's tiles, or nullopt
  // (and `why`) when the dataflow check rejects it.
  std::optional<isl::schedule> build(const isl::schedule& schedule, const std::vector<int>& path,
                                     int consumer, const std::vector<Slice>& slices, std::string& why) {
    isl::schedule_node sequence = at(schedule, path);
    // A co-consumer's register tiles are marked before it moves (mark-unroll-jam
    // cannot query nests under an extension node).
    Remarks marked;  // (said only when the fusion stands)
    for (const auto& s : slices)
      if (s.coConsumer)
        sequence = target::cpu::markUnrollJamLoopsBelow(scop_, sequence.child(s.child).child(0), marked)
                       .parent()
                       .parent();
    isl::union_map extension = isl::union_map::empty(schedule.ctx());
    for (const auto& s : slices) extension = extension.unite(s.executions);
    // Copies keep the marks that describe their own loops; tiling and
    // promotion marks belong to the original nest.
    auto keep = [](const std::string& mark) {
      return mark == schedule::kVectorMark || mark == schedule::kVectorReductionMark ||
             mark == schedule::kUnrollJamMark;
    };
    // A tile's slice is small: the producer's own tile loops stay out of the copy.
    auto pointLoops = [&](int child) {
      isl::schedule_node source = sequence.child(child).child(0);
      while (source.isa<isl::schedule_node_filter>()) source = source.child(0);  // an earlier `reserved`
      source = belowFusionMark(source);
      while (schedule::isTileMark(schedule::markName(source)) &&
             source.child(0).isa<isl::schedule_node_band>())
        source = source.child(0).child(0);
      return source;
    };
    // A co-consumer moves whole (each instance runs once): its tile loops
    // and its marks (its promotions, which AST generation places in
    // whatever loops surround them) go with it, except those of tiles made
    // only for fusion: settling them needs queries isl refuses under an
    // extension node (such tiles then stay, though nothing is recomputed in
    // them). Its bands' isolate options (full tiles apart from partial ones)
    // name the loops around them, among which the consumer's tile loops now are.
    auto keepMovedMark = [](const std::string& mark) { return mark != schedule::kFusionTilesMark; };
    // The loops the extension adds: from the sequence to the consumer's tile loops, inserted
    // after those around the sequence.
    isl::schedule_node consumerTileBand = *consumerTiles(sequence.child(consumer));
    int outerLoops = isl_schedule_node_get_schedule_depth(sequence.get());
    int tileLoops = isl_schedule_node_get_schedule_depth(consumerTileBand.get()) +
                    static_cast<int>(consumerTileBand.as<isl::schedule_node_band>().n_member()) - outerLoops;
    auto underTiles = [&](const isl::union_set& options) {
      isl::union_set result = isl::union_set::empty(options.ctx());
      options.foreach_set([&](isl::set option) {
        if (isl_set_is_wrapping(option.get()) == isl_bool_true) {
          isl::id name = isl::manage(isl_set_get_tuple_id(option.get()));
          isl_map* loops = isl_set_unwrap(option.release());
          loops = isl_map_insert_dims(loops, isl_dim_in, static_cast<unsigned>(outerLoops),
                                      static_cast<unsigned>(tileLoops));
          option = isl::manage(isl_set_set_tuple_id(isl_map_wrap(loops), name.release()));
        }
        result = result.unite(option);
      });
      return result;
    };
    auto copyOf = [&](const Slice& s, isl::schedule_node leaf) {
      if (s.coConsumer)
        return schedule::copySubtree(leaf, sequence.child(s.child).child(0), keepMovedMark, underTiles);
      return schedule::copySubtree(leaf, pointLoops(s.child), keep);
    };
    isl::schedule_node graft = isl::schedule_node::from_extension(extension).child(0);
    if (slices.size() == 1) {
      graft = copyOf(slices[0], graft);
    } else {
      isl::union_set_list filters(schedule.ctx(), static_cast<int>(slices.size()));
      for (const auto& s : slices) filters = filters.add(s.domain.universe());
      graft = graft.insert_sequence(filters);
      for (size_t k = 0; k < slices.size(); ++k)
        graft = copyOf(slices[k], graft.child(static_cast<int>(k)).child(0)).parent().parent();
    }
    graft = graft.parent();  // the extension node
    // The producers' own nests keep what no tile runs; a co-consumer's is
    // gone (its marks must not stand twice in the tree).
    for (const auto& s : slices) {
      if (s.coConsumer) {
        isl::schedule_node leaf =
            isl::manage(isl_schedule_node_cut(sequence.child(s.child).child(0).release()));
        sequence = leaf.insert_filter(isl::union_set::empty(schedule.ctx())).parent().parent();
        continue;
      }
      isl::union_set reserved = liveOf(s.domain.subtract(s.executions.range()));
      sequence = sequence.child(s.child).child(0).insert_filter(reserved).parent().parent();
    }
    isl::schedule_node tiles = *consumerTiles(sequence.child(consumer));
    // The check follows what moved: the producers (the consumer's own order
    // and its order relative to the other statements stay).
    isl::union_set moved = isl::union_set::empty(schedule.ctx());
    for (const auto& s : slices) moved = moved.unite(s.domain);
    isl::schedule result = tiles.child(0).graft_before(graft).schedule();
    std::string violation;
    poly::IslWorkLimit limit;
    limit.maxOperations = kCheckOperations;
    limit.deadline = options_.checkTimeLimit;
    auto checked = poly::runBounded(schedule.ctx(), limit, [&] {
      violation = schedule::dataflowViolation(scop_, result, moved);
      return result;
    });
    if (!checked.value) {
      why = checked.stop == poly::IslStop::Deadline
                ? "the dataflow check of the fused tree ran past its time limit (--fusion-check-time-limit)"
                : "the dataflow check of the fused tree took too long";
      return std::nullopt;
    }
    if (!violation.empty()) {
      why = "the fused tree " + violation;
      return std::nullopt;
    }
    say(marked);
    return result;
  }

  // The instances of `reserved` whose values matter: those that write an
  // output or whose values reach, through other reserved instances, one
  // that runs elsewhere. The others (a corner no tile reads) need not run.
  isl::union_set liveOf(const isl::union_set& reserved) const {
    if (reserved.is_empty()) return reserved;
    isl::union_map flow = scop_.deps.flow.intersect_domain(reserved);
    isl::union_set outputs = scop_.outputElements();
    isl::union_set live = flow.subtract_range(reserved).domain().unite(
        scop_.writes.intersect_domain(reserved).intersect_range(outputs).domain());
    isl::union_map within = flow.intersect_range(reserved);
    if (!within.is_empty() && !live.is_empty()) {
      isl_bool exact;
      isl::union_map reaches = isl::manage(isl_union_map_transitive_closure(within.release(), &exact));
      live = live.unite(reaches.intersect_range(live).domain());
    }
    return live;
  }

  // Remarks made aside (kept or dropped as the fusion goes), in the pass's log.
  void say(const Remarks& notes) {
    for (const Remark& remark : notes.all()) remarks_.add(remark);
  }

  const poly::Scop& scop_;
  const BastelnOptions& options_;
  Remarks& remarks_;
};

}  // namespace

isl::schedule fuseIntoTiles(const poly::Scop& scop, const isl::schedule& schedule,
                            const BastelnOptions& options, Remarks& remarks) {
  return TileFusion(scop, options, remarks).run(schedule);
}

}  // namespace tessel::fuse
