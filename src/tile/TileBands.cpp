#include "tile/TileBands.h"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>

#include "schedule/Marks.h"
#include "schedule/Transforms.h"
#include "schedule/TreeQueries.h"
#include "tessel/error.h"

namespace tessel::tile {

namespace {

std::string levelList(const std::vector<CacheLevel>& levels) {
  std::string s;
  for (const auto& l : levels) s += (s.empty() ? "" : ", ") + l.name;
  return s;
}

// Checks what the policy names against the program and the machine, before
// any band is looked at, so every mistake is reported wherever it is.
void validatePolicy(const TilePolicy& policy, const poly::Scop& scop, const std::vector<CacheLevel>& levels) {
  auto levelIndex = [&](const LevelTile& t) {
    for (size_t i = 0; i < levels.size(); ++i)
      if (levels[i].name == t.level) return static_cast<int>(i);
    throw UserError(t.loc,
                    "unknown buffer '" + t.level + "' (this machine's caches: " + levelList(levels) + ")");
  };
  for (const auto& st : policy.statements) {
    size_t dims = 0;
    if (st.statement != "*") {
      auto it = std::find_if(scop.statements.begin(), scop.statements.end(),
                             [&](const poly::Statement& s) { return s.name == st.statement; });
      if (it == scop.statements.end()) {
        std::string names;
        for (const auto& s : scop.statements) names += (names.empty() ? "" : ", ") + s.name;
        throw UserError(st.loc, "the program has no statement " + st.statement + " (its statements: " +
                                    names + "; 'tessel compile --emit schedule' shows them)");
      }
      dims = it->dims.size();
      if (st.dims.size() > dims)
        throw UserError(st.loc, st.statement + " has " + std::to_string(dims) + " loop dimension" +
                                    (dims == 1 ? "" : "s") + " but the policy gives " +
                                    std::to_string(st.dims.size()));
    }
    for (const auto& d : st.dims)
      for (size_t l = 0; l < d.levels.size(); ++l) {
        int here = levelIndex(d.levels[l]);
        if (l == 0) continue;
        const LevelTile& outer = d.levels[l - 1];
        if (levelIndex(outer) <= here)
          throw UserError(d.levels[l].loc, "tile levels go from the outermost buffer inwards: " +
                                               outer.level + " cannot contain " + d.levels[l].level);
        if (d.levels[l].size > outer.size)
          throw UserError(d.levels[l].loc, "the " + d.levels[l].level + " tile (" +
                                               std::to_string(d.levels[l].size) + ") is larger than the " +
                                               outer.level + " tile (" + std::to_string(outer.size) +
                                               ") that contains it");
      }
  }
}

// Per-level sizes for the band from the policy, or nothing when no statement
// of the band has an entry. Members take their statement dimension's tiles
// from the band's statement with the most dimensions that has an entry.
std::optional<std::vector<LevelSizes>> sizesFromPolicy(const BandModel& band, const poly::Scop& scop,
                                                       const TilePolicy& policy,
                                                       const std::vector<CacheLevel>& levels) {
  if (policy.empty()) return std::nullopt;
  std::vector<std::string> order = band.statements();
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return scop.statement(a).dims.size() > scop.statement(b).dims.size();
  });
  bool covered = false;
  std::vector<const DimTiling*> memberTiles(static_cast<size_t>(band.members()), nullptr);
  for (int m = 0; m < band.members(); ++m)
    for (const auto& name : order) {
      const StatementTiling* entry = policy.find(name);
      if (!entry) continue;
      covered = true;
      int dim = band.statementDim(name, m);
      if (dim < 0) continue;
      if (static_cast<size_t>(dim) < entry->dims.size())
        memberTiles[static_cast<size_t>(m)] = &entry->dims[dim];
      break;
    }
  if (!covered) return std::nullopt;

  std::vector<LevelSizes> out;  // outermost level first
  std::vector<int64_t> current = band.extents();
  for (size_t li = levels.size(); li-- > 0;) {
    bool used = false;
    std::vector<int64_t> sizes = current;
    for (int m = 0; m < band.members(); ++m) {
      const DimTiling* d = memberTiles[static_cast<size_t>(m)];
      if (!d) continue;
      for (const auto& t : d->levels)
        if (t.level == levels[li].name) {
          sizes[static_cast<size_t>(m)] = t.size;
          used = true;
        }
    }
    if (!used) continue;
    out.push_back({levels[li].name, sizes, band.cost(sizes)});
    current = sizes;
  }
  return out;
}

// The chosen tiles as policy text for the band's statements, so a user can
// start from them: "S_1: 64@L2/32@L1, ..." (dimensions in statement order).
std::string asPolicy(const BandModel& band, const poly::Scop& scop, const std::vector<LevelSizes>& levels) {
  std::string out;
  for (const auto& name : band.statements()) {
    const poly::Statement& st = scop.statement(name);
    std::vector<std::string> dims(st.dims.size(), "*");
    for (int m = 0; m < band.members(); ++m) {
      int d = band.statementDim(name, m);
      if (d < 0) continue;
      std::string text;
      int64_t outer = band.extent(m);
      for (const auto& l : levels) {
        int64_t size = l.sizes[static_cast<size_t>(m)];
        if (size >= outer) continue;  // no split at this level
        text += (text.empty() ? "" : "/") + std::to_string(size) + "@" + l.level;
        outer = size;
      }
      if (!text.empty()) dims[static_cast<size_t>(d)] = text;
    }
    while (!dims.empty() && dims.back() == "*") dims.pop_back();
    if (dims.empty()) continue;
    out += "S_" + name.substr(1) + ":";
    for (size_t d = 0; d < dims.size(); ++d) out += (d ? ", " : " ") + dims[d];
    out += "; ";
  }
  return out.empty() ? out : out.substr(0, out.size() - 2);
}

// The decision a model's explanation ends in: its last line without the
// indentation and without "not tiled: " ("  not tiled: tiles save less than
// 20% of the data movement\n" -> "tiles save less than 20% of the data
// movement").
std::string decisionOf(const std::string& why) {
  std::string text = why;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  size_t newline = text.rfind('\n');
  std::string line = newline == std::string::npos ? text : text.substr(newline + 1);
  size_t start = line.find_first_not_of(' ');
  line = start == std::string::npos ? "" : line.substr(start);
  const std::string notTiled = "not tiled: ";
  if (line.compare(0, notTiled.size(), notTiled) == 0) line = line.substr(notTiled.size());
  return line;
}

// The share of the fusion level a consumer's own data tiles may fill; the
// rest is left to the producers' slices recomputed in the tiles (about as
// large as the consumer's reads of them) and to the next tile's data.
constexpr double kFusionTileShare = 0.25;

class Tiler {
 public:
  Tiler(const poly::Scop& scop, const TilingOptions& options, Remarks& remarks)
      : scop_(scop), options_(options), remarks_(remarks) {}

  isl::schedule_node visit(isl::schedule_node node) {
    if (node.isa<isl::schedule_node_band>()) {
      auto band = node.as<isl::schedule_node_band>();
      if (band.n_member() > 0 && band.permutable()) {
        std::optional<isl::schedule_node> tiled = tryTile(band);
        if (tiled) return *tiled;  // nothing inside a tiled band is tiled again
      }
    }
    return schedule::rewriteChildren(node, [this](isl::schedule_node child) { return visit(child); });
  }

 private:
  // Sets isl's "isolate" AST option on `tiles` (a tile band over its point
  // band, tile loops scaled, point loops unshifted) to the tiles all of whose
  // points are executed: tile t holds the points t <= p <= t + size - 1.
  static isl::schedule_node isolateFullTiles(const isl::schedule_node_band& tiles,
                                             const isl::multi_val& sizes) {
    isl::union_set domain = schedule::nodeDomain(tiles);
    isl::multi_union_pw_aff outer = tiles.get_prefix_schedule_multi_union_pw_aff();
    isl::multi_union_pw_aff tile = tiles.get_partial_schedule();
    isl::multi_union_pw_aff point = tiles.child(0).as<isl::schedule_node_band>().get_partial_schedule();
    int nOuter = static_cast<int>(outer.size()), n = static_cast<int>(tile.size());
    isl::multi_union_pw_aff all = outer.flat_range_product(tile).flat_range_product(point);
    isl::set executed = isl::union_map::from(all).intersect_domain(domain).range().as_set();
    auto projectOutPoints = [&](const isl::set& set) {
      return isl::manage(isl_set_project_out(set.copy(), isl_dim_set, static_cast<unsigned>(nOuter + n),
                                             static_cast<unsigned>(n)));
    };
    // Every point of every tile that has one, executed or not: t <= p <= t + size - 1.
    isl::set tilesUsed = projectOutPoints(executed);
    std::string names, box;
    for (int i = 0; i < nOuter + 2 * n; ++i) names += (i ? ", d" : "d") + std::to_string(i);
    for (int m = 0; m < n; ++m) {
      std::string t = "d" + std::to_string(nOuter + m), p = "d" + std::to_string(nOuter + n + m);
      box += (m ? " and " : "") + t + " <= " + p + " <= " + t + " + " +
             std::to_string(sizes.at(m).get_num_si() - 1);
    }
    isl::set boxes(tiles.ctx(), "{ [" + names + "] : " + box + " }");
    isl::set points = isl::manage(isl_set_add_dims(tilesUsed.copy(), isl_dim_set, static_cast<unsigned>(n)))
                          .intersect(boxes);
    isl::set full = tilesUsed.subtract(projectOutPoints(points.subtract(executed))).coalesce();
    // { isolate[[outer] -> [tile]] }
    isl_map* split = isl_map_move_dims(isl_map_from_range(full.release()), isl_dim_in, 0, isl_dim_out, 0,
                                       static_cast<unsigned>(nOuter));
    isl::set options = isl::manage(isl_set_set_tuple_name(isl_map_wrap(split), "isolate"));
    return tiles.set_ast_build_options(isl::union_set(options));
  }

  std::optional<isl::schedule_node> tryTile(const isl::schedule_node_band& band) {
    int64_t line = options_.levels.empty() ? 64 : options_.levels.front().lineBytes;
    BandModel model(scop_, band, line);
    model.setBypassingCaches(options_.streamedOutputs);
    std::ostringstream os;
    os << "band over";
    std::string statements;  // the remark's subject: "S0 S1"
    for (const auto& s : model.statements()) {
      os << " " << s;
      statements += (statements.empty() ? "" : " ") + s;
    }
    const std::vector<int64_t>& extents = model.extents();
    os << " (" << model.members() << " member" << (model.members() == 1 ? "" : "s") << ", extents "
       << sizesText(extents) << ")\n";

    std::vector<LevelSizes> levels;
    bool forFusion = false;
    std::string source;  // where the tiles come from: "policy", "auto" or "fusion"
    std::string reason;  // why the band stays untiled, where it does
    std::optional<std::vector<int64_t>> innermost;
    std::optional<std::vector<LevelSizes>> fromPolicy =
        sizesFromPolicy(model, scop_, options_.policy, options_.levels);
    // Producers basteln may recompute in the tiles Auto Tiling gives the band.
    const std::set<std::string> producerArrays =
        !fromPolicy && options_.autoTiling && options_.fusionTiles && band.member_get_coincident(0)
            ? sliceableProducersArrays(band)
            : std::set<std::string>{};
    if (fromPolicy) {
      levels = *fromPolicy;
      source = "policy";
      if (levels.empty()) reason = "the policy gives it no tiles";
      os << "  tiles from the policy\n";
      for (const auto& l : levels)
        os << "  " << l.level << ": " << sizesText(l.sizes) << ", data tiles " << l.cost.footprintBytes / 1024
           << " KiB, " << l.cost.instances << " instances\n";
    } else if (options_.autoTiling && model.members() >= 2 && !options_.levels.empty()) {
      std::string shapeWhy;
      if (options_.innermostTile) innermost = options_.innermostTile(model, shapeWhy);
      // Every tile recomputes what the producers' slices read in common (a
      // pyramid's alpha channel, which all its channels read): the tiles may
      // split another parallel member instead, where the band's own data
      // movement (which counts its share of such reads) prefers it.
      AutoTilingResult r = autoTile(model, options_.levels, options_.cores, innermost ? &*innermost : nullptr,
                                    !producerArrays.empty());
      os << "  Auto Tiling:\n" << shapeWhy << r.why;
      levels = r.levels;
      source = "auto";
      if (levels.empty()) reason = decisionOf(r.why);
    } else {
      reason = model.members() < 2 ? "a single loop has no reuse to gain" : "tiling is off";
      os << "  not tiled (" << reason << ")\n";
    }
    // basteln recomputes producers in the outermost tiles: tiles of a cache
    // larger than the fusion level would leave their slices there (the
    // interpolate pyramid's output under whole-height L3 tiles: 1 MiB slices
    // per tile, none fused), so the outermost tiles are the fusion level's;
    // the fusion, not these levels' reuse, is their gain. Where every level
    // is coarser (a band streaming from memory whose rows of 16 lines fit
    // only L3), the fusion tiles below decide. They stay dropped where
    // basteln then fuses nothing.
    std::string droppedAbove;  // the level whose coarser tiles were dropped
    if (!levels.empty() && !producerArrays.empty()) {
      const int64_t fusionBytes = fusionLevel().capacityBytes;
      auto coarser = [&](const LevelSizes& l) {
        auto cache = std::find_if(options_.levels.begin(), options_.levels.end(),
                                  [&](const CacheLevel& c) { return c.name == l.level; });
        return cache != options_.levels.end() && cache->capacityBytes > fusionBytes;
      };
      auto dropped =
          static_cast<size_t>(std::find_if_not(levels.begin(), levels.end(), coarser) - levels.begin());
      if (dropped > 0 && dropped < levels.size()) {
        droppedAbove = levels[dropped].level;
        os << "  tiles above " << droppedAbove << " dropped: producers recomputed in " << droppedAbove
           << " tiles stay in that cache\n";
        levels.erase(levels.begin(), levels.begin() + static_cast<std::ptrdiff_t>(dropped));
      } else if (dropped == levels.size()) {
        reason = "tiles dropped: all above " + fusionLevel().name +
                 ", where producers recomputed in the tiles would stay";
        os << "  " << reason << "\n";
        levels.clear();
      }
    }
    // A policy that covers the band decides alone, even to leave it untiled;
    // so do bands below that Auto Tiling may tile (nothing inside tiles is
    // tiled again).
    if (levels.empty() && !fromPolicy && options_.autoTiling && !options_.levels.empty() &&
        !hasBandBelow(band.child(0)) && !producerArrays.empty()) {
      const CacheLevel& level = fusionLevel();
      AutoTilingResult r = fusionTile(model, level, options_.cores,
                                      static_cast<double>(level.capacityBytes) * kFusionTileShare,
                                      {producerArrays, options_.fusionRedundancy});
      os << r.why;
      levels = r.levels;
      forFusion = !levels.empty();
      if (forFusion)
        source = "fusion";
      else
        reason = decisionOf(r.why);
    }
    const std::string tiles = levels.empty() ? "" : asPolicy(model, scop_, levels);
    if (!levels.empty()) os << "  tiles: " << tiles << "\n";
    remark(statements, os.str(), model, innermost, levels, {source, tiles, reason, droppedAbove});
    if (levels.empty()) return std::nullopt;

    isl::schedule_node node = band;
    int depth = 0;
    for (size_t level = 0; level < levels.size(); ++level) {
      const auto& l = levels[level];
      auto current = node.as<isl::schedule_node_band>();
      isl::multi_val sizes = isl::multi_val::zero(current.get_partial_schedule().get_space());
      for (int m = 0; m < model.members(); ++m)
        sizes = sizes.set_at(m, std::max<int64_t>(l.sizes[static_cast<size_t>(m)], 1));
      node = current.tile(sizes);
      // Full tiles get loops of constant trip counts (what the register
      // tiler and the vector code want) and partial ones their own code, at
      // every level: an outer level's partial tile then runs after the full
      // ones instead of being dealt among them by the parallel loop's static
      // schedule (its inner loops run in parallel where MarkParallel's
      // fallback finds a loop in the next band; not yet where that band's
      // members all have one value, as an L2 band tiling only the rows).
      node = isolateFullTiles(node.as<isl::schedule_node_band>(), sizes);
      node = schedule::insertMark(node, tileMarkName(l.level));
      node = node.child(0).child(0);  // the point band, under the mark and the tile band
      depth += 2;
    }
    for (int i = 0; i < depth; ++i) node = node.parent();
    if (forFusion) node = schedule::insertMark(node, schedule::kFusionTilesMark);
    return node;
  }

  // What the band's remark says beyond its model and levels.
  struct Decision {
    std::string source;        // "policy", "auto" or "fusion"
    std::string tiles;         // as policy text
    std::string reason;        // why untiled
    std::string droppedAbove;  // the level above which tiles were dropped for fusion
  };

  // The band's remark: missed with its reason where `levels` is empty,
  // otherwise applied with the tiles, as policy text and per level
  // ("tile_L1": "16x64x256").
  void remark(const std::string& statements, std::string message, const BandModel& model,
              const std::optional<std::vector<int64_t>>& innermost, const std::vector<LevelSizes>& levels,
              const Decision& decision) {
    const auto& [source, tiles, reason, droppedAbove] = decision;
    if (!message.empty() && message.back() == '\n') message.pop_back();
    Remarks::Values values;
    if (levels.empty()) values.emplace_back("reason", reason);
    values.emplace_back("members", model.members());
    values.emplace_back("extents", sizesText(model.extents()));
    if (innermost) values.emplace_back("innermost_tile", sizesText(*innermost));
    if (levels.empty()) {
      remarks_.missed(statements, std::move(message), std::move(values));
      return;
    }
    values.emplace_back("source", source);
    values.emplace_back("tiles", tiles);
    std::string names;
    for (const auto& l : levels) {
      names += (names.empty() ? "" : " ") + l.level;
      values.emplace_back("tile_" + l.level, sizesText(l.sizes));
    }
    values.emplace_back("levels", names);
    if (!droppedAbove.empty()) values.emplace_back("dropped_above", droppedAbove);
    remarks_.applied(statements, std::move(message), std::move(values));
  }

  // The arrays written by the earlier children of `band`'s sequence that
  // compute values for it alone: producers basteln may recompute in its tiles
  // (the cheap part of basteln's rules: it writes no output, only this band
  // reads the values it reads, it has an outer parallel loop). Empty: tiles
  // made for a fusion that cannot happen would only cost.
  std::set<std::string> sliceableProducersArrays(const isl::schedule_node_band& band) const {
    std::set<std::string> arrays;
    if (!band.has_parent() || !band.parent().isa<isl::schedule_node_filter>()) return arrays;
    isl::schedule_node filter = band.parent();
    if (!filter.parent().isa<isl::schedule_node_sequence>()) return arrays;
    isl::schedule_node sequence = filter.parent();
    isl::union_set own = schedule::nodeDomain(band);
    isl::union_set outputs = scop_.outputElements();
    for (int i = 0; i < static_cast<int>(filter.child_position()); ++i) {
      isl::schedule_node producer = sequence.child(i);
      isl::union_set domain = producer.as<isl::schedule_node_filter>().get_filter();
      // Others may read its other values (basteln's disjoint case), not these.
      isl::union_set needed = scop_.deps.flow.intersect_range(own).domain().intersect(domain);
      if (needed.is_empty()) continue;
      isl::union_set readers = scop_.deps.flow.intersect_domain(needed).range().subtract(domain);
      if (!readers.is_subset(own)) continue;
      if (!scop_.writes.intersect_domain(domain).intersect_range(outputs).is_empty()) continue;
      isl::schedule_node first = producer;
      while (first.n_children() == 1 && !first.isa<isl::schedule_node_band>()) first = first.child(0);
      if (first.isa<isl::schedule_node_band>() && first.as<isl::schedule_node_band>().n_member() > 0 &&
          first.as<isl::schedule_node_band>().member_get_coincident(0))
        scop_.writes.intersect_domain(domain).foreach_map(
            [&](const isl::map& m) { arrays.insert(m.range_tuple_id().name()); });
    }
    return arrays;
  }

  // A band Auto Tiling might tile (two members or more) in `node`'s subtree.
  static bool hasBandBelow(const isl::schedule_node& node) {
    if (node.isa<isl::schedule_node_band>() && node.as<isl::schedule_node_band>().n_member() >= 2)
      return true;
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i)
      if (hasBandBelow(node.child(i))) return true;
    return false;
  }

  // The largest cache private to a core (shared by no more CPUs than the
  // first level, which hyperthreads share): a fused tile's producers and
  // consumer share it.
  const CacheLevel& fusionLevel() const {
    const CacheLevel* level = &options_.levels.front();
    for (const auto& l : options_.levels)
      if (l.sharedBy <= options_.levels.front().sharedBy) level = &l;
    return *level;
  }

  const poly::Scop& scop_;
  const TilingOptions& options_;
  Remarks& remarks_;
};

}  // namespace

std::string tileMarkName(const std::string& level) { return schedule::kTileMarkPrefix + level; }

isl::schedule tileBands(const poly::Scop& scop, const isl::schedule& schedule, const TilingOptions& options,
                        Remarks& remarks) {
  validatePolicy(options.policy, scop, options.levels);
  isl_ctx* ctx = schedule.ctx().get();
  // Tile loops step by the tile size and point loops keep the original
  // coordinates, so nested levels line up and indices stay readable.
  isl_options_set_tile_scale_tile_loops(ctx, 1);
  isl_options_set_tile_shift_point_loops(ctx, 0);
  return Tiler(scop, options, remarks).visit(schedule.root()).schedule();
}

}  // namespace tessel::tile
