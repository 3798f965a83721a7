#include "lir/RegisterTile.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "lir/Traverse.h"
#include "lir/VectorLoop.h"

namespace tessel::lir {

namespace {

// Register tile heights, most preferred first.
constexpr int kRowChoices[] = {8, 7, 6, 5, 4, 3, 2, 1};

// Independent accumulators that keep two multiply-add units of 4 cycles'
// latency busy.
constexpr int kMinAccumulators = 8;

// `e` with variable `var` replaced by `var + offset`.
Expr shifted(const Expr& e, const std::string& var, int64_t offset) {
  if (!e) return e;
  if (e->kind == ExprKind::Var && e->name == var) return indexBinary(te::BinaryOp::Add, e, indexImm(offset));
  if (e->operands.empty()) return e;
  auto copy = std::make_shared<ExprNode>(*e);
  for (auto& o : copy->operands) o = shifted(o, var, offset);
  return copy;
}

Stmt shifted(const Stmt& s, const std::string& var, int64_t offset) {
  if (!s) return s;
  auto copy = std::make_shared<StmtNode>(*s);
  for (auto& b : copy->body) b = shifted(b, var, offset);
  for (Expr* e : {&copy->init, &copy->cond, &copy->step, &copy->value, &copy->index, &copy->prefetchIndex})
    *e = shifted(*e, var, offset);
  copy->thenCase = shifted(s->thenCase, var, offset);
  copy->elseCase = shifted(s->elseCase, var, offset);
  return copy;
}

std::vector<Stmt> statementsOf(const Stmt& s) {
  return s->kind == StmtKind::Block ? s->body : std::vector<Stmt>{s};
}

// A nest of sequential loops (each the only statement of its parent) around
// vector loops whose stores accumulate into elements the nest does not move.
struct AccumulationNest {
  std::vector<const StmtNode*> loops;  // outermost first
  std::vector<Stmt> vectorLoops;
  int accumulatorsPerRow = 0;  // vectors of accumulators for one iteration of the unrolled loop
  // Loads (vectors or broadcasts) per step of the nest: those each row of
  // the tile makes (a matmul's A broadcast), and those the rows share (B's
  // vectors).
  int64_t rowLoads = 0, sharedLoads = 0;
  // Vector loops of a partial tile, whose bound is a minimum: the tile is
  // sized for their most iterations and the backend masks the vectors past
  // their end.
  std::vector<std::string> boundedVectorLoops;
};

// The loads of `e` into `nest`'s counts: a read that moves with `unrolled`
// once per row, one that moves along vector loop `vector` once per vector.
void countLoads(const Expr& e, const std::string& vector, int64_t chunks, const std::string& unrolled,
                AccumulationNest& nest) {
  if (e->kind == ExprKind::Load) {
    int64_t loads = dependsOn(e->operands[0], vector) ? chunks : 1;
    (dependsOn(e->operands[0], unrolled) ? nest.rowLoads : nest.sharedLoads) += loads;
    return;
  }
  for (const auto& o : e->operands) countLoads(o, vector, chunks, unrolled, nest);
}

class RegisterTiler final : public StmtMutator {
 public:
  RegisterTiler(const Kernel& k, int lanes, Remarks& remarks) : lanes_(lanes), remarks_(remarks) {
    for (const auto* list : {&k.inputs, &k.outputs, &k.temporaries, &k.locals})
      for (const auto& b : *list) buffers_[b.name] = b.dtype;
  }

  Stmt mutateFor(const Stmt& s) override {
    if (s->unrollJam && s->vectorLanes == 0 && s->transposeLanes == 0) {
      std::string why;
      if (Stmt tiled = tile(*s, why)) return tiled;
      remarks_.missed(s->name, "loop " + s->name + ": not register-tiled: " + why, {{"reason", why}});
    }
    return forWithMutatedBody(s);
  }

 private:
  // The vector loop `v` accumulates, at every statement, into an element
  // that stays the same over `loops`, unit-stride along the vector.
  std::string accumulates(const StmtNode& v, const std::vector<const StmtNode*>& loops,
                          const std::string& unrolled, int& stores) {
    if (v.vectorLanes != lanes_) return "a vector loop has another lane count";
    if (!maxTripCount(v)) return "a vector loop's trip count has no constant bound";
    for (const auto* l : loops)
      if (dependsOn(v.init, l->name) || dependsOn(v.cond, l->name)) return "a vector loop's range moves";
    // The rows share one vector range (emitted once) and own their elements.
    if (dependsOn(v.init, unrolled) || dependsOn(v.cond, unrolled))
      return "a vector loop's range moves with the unrolled loop";
    LetBindings lets;
    std::set<std::string> stored, loaded;
    for (const auto& s : statementsOf(v.body[0])) {
      if (s->kind == StmtKind::Let) {
        lets[s->name] = inlineLets(s->value, lets);
        continue;
      }
      if (s->kind != StmtKind::Store) return "a vector loop holds more than lets and stores";
      std::optional<ReductionStore> r = asReduction(*s, lets);
      if (!r) return "a store is not an accumulation";
      Expr index = inlineLets(s->index, lets);
      for (const auto* l : loops)
        if (dependsOn(index, l->name)) return "an accumulated element moves with loop " + l->name;
      std::optional<int64_t> stride = strideIn(index, v.name);
      if (!stride || *stride != 1) return "an accumulated element is not unit-stride along the vector";
      if (!dependsOn(index, unrolled)) return "an accumulated element does not move with the unrolled loop";
      if (stored.count(s->name)) return "two accumulations into '" + s->name + "'";
      // The scalar code rounds a 16-bit element after every term; a register would round once.
      if (auto t = buffers_.find(s->name); t == buffers_.end() || t->second != te::DType::F32)
        return "'" + s->name + "' is not an f32 tensor";
      stored.insert(s->name);
      collectLoads(inlineLets(r->rest, lets), loaded);
      ++stores;
    }
    for (const auto& b : stored)
      if (loaded.count(b)) return "'" + b + "' is read besides its accumulation";
    return "";
  }

  std::string nestOf(const StmtNode& top, const std::string& unrolled, AccumulationNest& nest) {
    const StmtNode* node = &top;
    if (node->kind == StmtKind::For && node->transposeLanes > 0) return "it transposes through registers";
    while (node->kind == StmtKind::For && node->vectorLanes == 0) {
      if (nest.loops.size() == 4) return "the nest around the vector loops is deeper than 4";
      nest.loops.push_back(node);
      std::vector<Stmt> inner = statementsOf(node->body[0]);
      if (inner.size() == 1 && inner[0]->kind == StmtKind::For && inner[0]->vectorLanes == 0) {
        if (inner[0]->transposeLanes > 0) return "the nest transposes through registers";
        node = inner[0].get();
        continue;
      }
      for (const auto& s : inner) {
        if (s->kind != StmtKind::For || s->vectorLanes == 0) return "the nest holds more than vector loops";
        int stores = 0;
        std::string why = accumulates(*s, nest.loops, unrolled, stores);
        if (!why.empty()) return why;
        int64_t trips = *maxTripCount(*s);
        if (!constantTripCount(*s)) nest.boundedVectorLoops.push_back(s->name);
        int64_t chunks = (trips + lanes_ - 1) / lanes_;
        if (chunks * lanes_ > kMaxRegisterTileVectorElements)
          return "a vector loop is longer than " + std::to_string(kMaxRegisterTileVectorElements) +
                 " elements";
        nest.accumulatorsPerRow += static_cast<int>(chunks) * stores;
        nest.vectorLoops.push_back(s);
        LetBindings lets;
        for (const auto& st : statementsOf(s->body[0])) {
          if (st->kind == StmtKind::Let) {
            lets[st->name] = inlineLets(st->value, lets);
            continue;
          }
          countLoads(inlineLets(asReduction(*st, lets)->rest, lets), s->name, chunks, unrolled, nest);
        }
      }
      return "";
    }
    return "no loop nest around vector loops";
  }

  // A body ending in one vector reduction loop (a dot product per iteration:
  // C[m, n] += A[m, k] * B[n, k] vectorized along k): the rows' reductions
  // are jammed into one vector loop with one accumulator each, so they
  // share the loads that do not move with the unrolled loop and hide the
  // latency of each other's chains.
  Stmt tileReductions(const StmtNode& loop, int64_t trips, const std::vector<Stmt>& body, std::string& why) {
    const Stmt& v = body.back();
    LetBindings lets;
    int stores = 0;
    for (const auto& s : statementsOf(v->body[0])) {
      if (s->kind == StmtKind::Let) {
        lets[s->name] = inlineLets(s->value, lets);
        continue;
      }
      if (s->kind != StmtKind::Store || !asReduction(*s, lets)) {
        why = "the vector reduction loop holds more than lets and reductions";
        return nullptr;
      }
      if (!dependsOn(inlineLets(s->index, lets), loop.name)) {
        why = "the reduced element does not move with the loop";
        return nullptr;
      }
      ++stores;
    }
    if (dependsOn(v->init, loop.name) || dependsOn(v->cond, loop.name)) {
      why = "the vector loop's range moves with it";
      return nullptr;
    }
    int budget = lanes_ == 16 ? 16 : 8;
    int rows = 0;
    for (int r : {8, 6, 4, 3, 2})
      if (trips % r == 0 && r * stores <= budget) {
        rows = r;
        break;
      }
    if (rows == 0) {
      why = "no unroll factor divides its trip count";
      return nullptr;
    }
    std::vector<Stmt> out;
    for (size_t i = 0; i + 1 < body.size(); ++i)
      for (int r = 0; r < rows; ++r) out.push_back(block({shifted(body[i], loop.name, r)}));
    std::vector<Stmt> jammed;
    for (int r = 0; r < rows; ++r) jammed.push_back(block({shifted(v->body[0], loop.name, r)}));
    auto vector = std::make_shared<StmtNode>(*v);
    vector->body = {block(std::move(jammed))};
    out.push_back(vector);
    auto tiled = std::make_shared<StmtNode>(loop);
    tiled->step = indexImm(rows);
    tiled->body = {block(std::move(out))};
    remarks_.applied(loop.name,
                     "loop " + loop.name + ": " + std::to_string(rows) +
                         " iterations jammed into vector reduction loop " + v->name + " (" +
                         std::to_string(rows * stores) + " accumulators)",
                     {{"rows", rows}, {"reduction_loop", v->name}, {"accumulators", rows * stores}});
    return tiled;
  }

  struct Piece {
    int rows = 0;
    int vectors = 0;  // vectors per piece of the vector loop; 0: the whole loop at once
    int stores = 0;   // accumulations per iteration of the vector loop
  };

  Stmt tile(const StmtNode& loop, std::string& why) {
    std::optional<int64_t> trips = constantTripCount(loop);
    std::vector<Stmt> body = statementsOf(loop.body[0]);
    const Stmt& last = body.back();
    if (last->kind == StmtKind::For && last->vectorLanes == lanes_ && last->vector == VectorHint::Reduction) {
      if (!trips) {
        why = "its trip count is not constant (a partial tile)";
        return nullptr;
      }
      return tileReductions(loop, *trips, body, why);
    }
    std::optional<int64_t> most = maxTripCount(loop);
    if (!most) {
      why = "its trip count has no constant bound";
      return nullptr;
    }
    int nestAt = -1;
    for (size_t i = 0; i < body.size(); ++i)
      if (body[i]->kind == StmtKind::For && body[i]->vectorLanes == 0) {
        if (body[i]->transposeLanes > 0) {
          why = "its body transposes through registers";
          return nullptr;
        }
        if (nestAt >= 0) {
          why = "its body holds two loop nests";
          return nullptr;
        }
        nestAt = static_cast<int>(i);
      }
    if (nestAt < 0) {
      why = "its body holds no sequential loop";
      return nullptr;
    }
    AccumulationNest nest;
    why = nestOf(*body[static_cast<size_t>(nestAt)], loop.name, nest);
    if (!why.empty()) {
      std::string scalarWhy;
      if (Stmt jammed = jamScalarNest(loop, trips, *most, body, nestAt, scalarWhy)) return jammed;
      return nullptr;
    }
    for (const auto* l : nest.loops)
      if (dependsOn(l->init, loop.name) || dependsOn(l->cond, loop.name)) {
        why = "loop " + l->name + "'s range moves with it";
        return nullptr;
      }
    if (!trips) return tileUpToBound(loop, body, nestAt, nest, *most, why);
    int rows = rowsFor(*trips, nest.accumulatorsPerRow);
    if (rows == 0) {
      why = std::to_string(nest.accumulatorsPerRow) + " accumulator vectors per row do not fit in registers";
      return nullptr;
    }
    Piece piece = pieceFor(*trips, nest, rows);
    // A trip count that only small row counts divide (17, 35 = 5 x 7 on a
    // 6-row machine) leaves too few accumulators: the most rows that fit
    // then, and the last rows as a smaller tile of their own.
    // Also where the most rows that fit, and the last rows as a smaller tile,
    // load a tenth fewer vectors or better: the rows share a matmul's B
    // vectors (256 rows by 4 vectors: 42 tiles of 6 rows and one of 4 load
    // 428 vectors and broadcasts per step of the reduction, 64 tiles of 4
    // load 512; 1024^3 ran in 20.1 ms against 24.6), not a depthwise
    // convolution's inputs, which each row loads for itself.
    int fit = std::min<int64_t>(maxRegisterTileRows(lanes_, nest.accumulatorsPerRow), *trips);
    auto loads = [&](int64_t r) {
      int64_t rest = *trips % r;
      return *trips / r * (r * nest.rowLoads + nest.sharedLoads) +
             (rest > 0 ? rest * nest.rowLoads + nest.sharedLoads : 0);
    };
    if (piece.vectors == 0 && fit > rows &&
        (rows * nest.accumulatorsPerRow < kMinAccumulators ||
         (loads(rows) > 0 && 10 * loads(fit) <= 9 * loads(rows))))
      piece.rows = fit;
    int64_t remainder = *trips % piece.rows;
    if (Stmt composed = composedRows(loop, *trips, body, nestAt, nest, piece, remainder)) return composed;
    std::vector<Stmt> parts;
    if (remainder == 0) {
      parts.push_back(tiledLoop(loop, body, nestAt, nest, piece, loop.init, loop.cond));
    } else {
      int64_t whole = *trips - remainder;
      parts.push_back(
          tiledLoop(loop, body, nestAt, nest, piece, loop.init,
                    indexBinary(te::BinaryOp::Le, indexVar(loop.name), plus(loop.init, whole - 1))));
      Piece last = piece;
      last.rows = static_cast<int>(remainder);
      parts.push_back(tiledLoop(loop, body, nestAt, nest, last, plus(loop.init, whole), loop.cond));
    }
    report(loop, nest, piece,
           remainder > 0 ? " (the last " + std::to_string(remainder) + " rows a tile of their own)" : "",
           {{"remainder_rows", remainder}});
    return parts.size() == 1 ? parts[0] : block(std::move(parts));
  }

  // Rows left over that are too few to hide the multiply-add latency (73
  // rows of 4 vectors by 6: 12 tiles and one of 1 row, 4 accumulators)
  // rather covered by tiles of two heights (TTILE's composition of
  // micro-kernels: 8 of 6 rows and 5 of 5), as many tiles and each with
  // enough accumulators; the second height as tall as possible. Null when
  // no such composition exists or none is needed.
  Stmt composedRows(const StmtNode& loop, int64_t trips, const std::vector<Stmt>& body, int nestAt,
                    const AccumulationNest& nest, const Piece& piece, int64_t remainder) {
    if (remainder == 0 || piece.vectors > 0 || remainder * nest.accumulatorsPerRow >= kMinAccumulators)
      return nullptr;
    for (int second = piece.rows - 1; second >= 2; --second) {
      if (second * nest.accumulatorsPerRow < kMinAccumulators) break;
      for (int64_t tiles = 1; tiles * second <= trips; ++tiles) {
        int64_t first = trips - tiles * second;  // rows in tiles of piece.rows
        if (first % piece.rows != 0) continue;
        std::vector<Stmt> parts;
        if (first > 0)
          parts.push_back(
              tiledLoop(loop, body, nestAt, nest, piece, loop.init,
                        indexBinary(te::BinaryOp::Le, indexVar(loop.name), plus(loop.init, first - 1))));
        Piece shorter = piece;
        shorter.rows = second;
        parts.push_back(tiledLoop(loop, body, nestAt, nest, shorter, plus(loop.init, first), loop.cond));
        report(
            loop, nest, first > 0 ? piece : shorter,
            " (the last " + std::to_string(tiles * second) + " rows tiles of " + std::to_string(second) + ")",
            {{"remainder_rows", 0}, {"second_rows", second}, {"second_tiles", tiles}});
        return parts.size() == 1 ? parts[0] : block(std::move(parts));
      }
    }
    return nullptr;
  }

  // A nest whose innermost loop holds scalar accumulations (a last column
  // tile of one column, which the AST generator runs without its vector
  // loop): each accumulation is a chain of dependent multiply-adds, so rows
  // of the unrolled loop are jammed into the innermost loop, up to 8, their
  // chains independent (the C compiler keeps each accumulated element in a
  // register over the nest: its address does not move with it).
  Stmt jamScalarNest(const StmtNode& loop, std::optional<int64_t> trips, int64_t most,
                     const std::vector<Stmt>& body, int nestAt, std::string& why) {
    std::vector<const StmtNode*> loops;
    const StmtNode* node = body[static_cast<size_t>(nestAt)].get();
    while (node->kind == StmtKind::For && node->vectorLanes == 0 && node->transposeLanes == 0) {
      if (dependsOn(node->init, loop.name) || dependsOn(node->cond, loop.name)) {
        why = "loop " + node->name + "'s range moves with it";
        return nullptr;
      }
      loops.push_back(node);
      std::vector<Stmt> inner = statementsOf(node->body[0]);
      if (inner.size() == 1 && inner[0]->kind == StmtKind::For) {
        node = inner[0].get();
        continue;
      }
      LetBindings lets;
      for (const auto& s : inner) {
        if (s->kind == StmtKind::Let) {
          lets[s->name] = inlineLets(s->value, lets);
          continue;
        }
        if (s->kind != StmtKind::Store || !asReduction(*s, lets)) {
          why = "the nest's innermost loop holds more than scalar accumulations";
          return nullptr;
        }
        Expr index = inlineLets(s->index, lets);
        for (const auto* l : loops)
          if (dependsOn(index, l->name)) {
            why = "an accumulated element moves with loop " + l->name;
            return nullptr;
          }
        if (!dependsOn(index, loop.name)) {
          why = "an accumulated element does not move with the unrolled loop";
          return nullptr;
        }
      }
      int rows = static_cast<int>(std::min<int64_t>(kRowChoices[0], most));
      std::vector<Stmt> parts;
      int64_t remainder = 0;
      if (trips) {
        remainder = *trips % rows;
        int64_t whole = *trips - remainder;
        parts.push_back(jammedLoop(
            loop, body, nestAt, loops, rows, loop.init,
            remainder == 0 ? loop.cond
                           : indexBinary(te::BinaryOp::Le, indexVar(loop.name), plus(loop.init, whole - 1))));
        if (remainder > 0)
          parts.push_back(jammedLoop(loop, body, nestAt, loops, static_cast<int>(remainder),
                                     plus(loop.init, whole), loop.cond));
      } else {
        // Bounded at run time: tiles of `rows` while they fit, then rows one by one.
        auto [whileFits, rest] = upToBound(loop, rows);
        parts.push_back(jammedLoop(loop, body, nestAt, loops, rows, loop.init, whileFits));
        parts.push_back(jammedLoop(loop, body, nestAt, loops, 1, rest, loop.cond));
      }
      std::string over;
      for (const auto* l : loops) over += (over.empty() ? "" : " ") + l->name;
      remarks_.applied(
          loop.name,
          "loop " + loop.name + ": " + std::to_string(rows) +
              " rows of scalar accumulations jammed into loop " + loops.back()->name +
              (remainder > 0 ? " (the last " + std::to_string(remainder) + " rows together)" : ""),
          {{"rows", rows}, {"remainder_rows", remainder}, {"scalar_loops", over}});
      return parts.size() == 1 ? parts[0] : block(std::move(parts));
    }
    why = "no loop nest around scalar accumulations";
    return nullptr;
  }

  // `loop` from `init` while `cond` holds, `rows` iterations at a time: the
  // statements around the nest copied per row, the rows' copies of the
  // innermost body jammed at the bottom of the nest `loops`.
  Stmt jammedLoop(const StmtNode& loop, const std::vector<Stmt>& body, int nestAt,
                  const std::vector<const StmtNode*>& loops, int rows, const Expr& init,
                  const Expr& cond) const {
    std::vector<Stmt> out;
    auto copies = [&](const Stmt& s) {
      for (int r = 0; r < rows; ++r) out.push_back(block({shifted(s, loop.name, r)}));
    };
    for (int i = 0; i < nestAt; ++i) copies(body[static_cast<size_t>(i)]);
    std::vector<Stmt> jammed;
    for (int r = 0; r < rows; ++r) jammed.push_back(block({shifted(loops.back()->body[0], loop.name, r)}));
    Stmt inner = block(std::move(jammed));
    for (size_t l = loops.size(); l-- > 0;) {
      auto k = std::make_shared<StmtNode>(*loops[l]);
      k->body = {inner};
      inner = k;
    }
    out.push_back(inner);
    for (size_t i = static_cast<size_t>(nestAt) + 1; i < body.size(); ++i) copies(body[i]);
    auto tiled = std::make_shared<StmtNode>(loop);
    tiled->init = init;
    tiled->cond = cond;
    tiled->step = indexImm(rows);
    tiled->body = {block(std::move(out))};
    return tiled;
  }

  // A loop of a partial tile whose bound is a minimum known at run time (no
  // full tile in its dimension: 5 rows of K under 8-deep tiles leave every
  // row tile partial), at most `most` iterations: tiles of the most rows
  // that fit while they fit, then tiles of one row.
  Stmt tileUpToBound(const StmtNode& loop, const std::vector<Stmt>& body, int nestAt,
                     const AccumulationNest& nest, int64_t most, std::string& why) {
    int fit = static_cast<int>(std::min<int64_t>(maxRegisterTileRows(lanes_, nest.accumulatorsPerRow), most));
    if (fit == 0) {
      why = std::to_string(nest.accumulatorsPerRow) + " accumulator vectors per row do not fit in registers";
      return nullptr;
    }
    Piece piece{fit, 0, 0};
    std::vector<Stmt> parts;
    Expr restStart = loop.init;
    if (fit > 1) {
      auto [whileFits, rest] = upToBound(loop, fit);
      parts.push_back(tiledLoop(loop, body, nestAt, nest, piece, loop.init, whileFits));
      restStart = rest;
    }
    Piece single{1, 0, 0};
    parts.push_back(tiledLoop(loop, body, nestAt, nest, single, restStart, loop.cond));
    report(
        loop, nest, piece,
        " (a partial tile of up to " + std::to_string(most) + " rows: the rows left over tiles of one row)",
        {{"most_rows", most}});
    return parts.size() == 1 ? parts[0] : block(std::move(parts));
  }

  // For a loop bounded at run time, run `rows` iterations at a time: the
  // condition under which a whole tile still fits, and where the iterations
  // left over start (init + floor(max(count, 0) / rows) * rows).
  static std::pair<Expr, Expr> upToBound(const StmtNode& loop, int rows) {
    Expr bound = loop.cond->operands[1];
    Expr lastIteration = loop.cond->binaryOp == te::BinaryOp::Lt ? plus(bound, -1) : bound;
    Expr whileFits = indexBinary(te::BinaryOp::Le, indexVar(loop.name), plus(lastIteration, 1 - rows));
    Expr count = indexBinary(te::BinaryOp::Max,
                             indexBinary(te::BinaryOp::Sub, plus(lastIteration, 1), loop.init), indexImm(0));
    Expr rest =
        indexBinary(te::BinaryOp::Add, loop.init,
                    indexBinary(te::BinaryOp::Mul, indexFloorDiv(count, indexImm(rows)), indexImm(rows)));
    return {whileFits, rest};
  }

  // The applied remark of a register tile of `piece`; `note` and `extra`
  // say how its last rows run.
  void report(const StmtNode& loop, const AccumulationNest& nest, const Piece& piece, const std::string& note,
              Remarks::Values extra) {
    int perRow = piece.vectors > 0 ? piece.vectors * piece.stores : nest.accumulatorsPerRow;
    std::string over;
    for (const auto* l : nest.loops) over += (over.empty() ? "" : " ") + l->name;
    std::string message =
        "loop " + loop.name + ": register tile of " + std::to_string(piece.rows) + " rows x " +
        std::to_string(perRow) + " accumulator vector(s)" + note +
        (piece.vectors > 0 ? " (vector loop " + nest.vectorLoops[0]->name + " in pieces of " +
                                 std::to_string(piece.vectors) + " vectors)"
                           : "") +
        ", kept in registers over loop" + (nest.loops.size() > 1 ? "s" : "");
    if (!over.empty()) message += " " + over;
    std::string bounded;
    for (const auto& v : nest.boundedVectorLoops) bounded += (bounded.empty() ? "" : " ") + v;
    if (!bounded.empty())
      message += "; vector loop" + std::string(nest.boundedVectorLoops.size() > 1 ? "s " : " ") + bounded +
                 " of a partial tile run to a bound known at run time, the vectors past it masked";
    Remarks::Values values = {{"rows", piece.rows}, {"accumulators_per_row", perRow}};
    values.insert(values.end(), extra.begin(), extra.end());
    values.emplace_back("loops", over);
    if (piece.vectors > 0) {
      values.emplace_back("vector_loop", nest.vectorLoops[0]->name);
      values.emplace_back("piece_vectors", piece.vectors);
    }
    if (!bounded.empty()) values.emplace_back("masked_vector_loops", bounded);
    remarks_.applied(loop.name, std::move(message), std::move(values));
  }

  // `loop` from `init` while `cond` holds, `piece.rows` iterations at a time,
  // unrolled and jammed: the statements before and after the nest copied per
  // row, the nest's vector loop (or its pieces) outside the nest with the
  // rows' accumulations at the bottom.
  Stmt tiledLoop(const StmtNode& loop, const std::vector<Stmt>& body, int nestAt,
                 const AccumulationNest& nest, const Piece& piece, const Expr& init, const Expr& cond) const {
    std::vector<Stmt> out;
    auto copies = [&](const Stmt& s) {
      for (int r = 0; r < piece.rows; ++r) out.push_back(block({shifted(s, loop.name, r)}));
    };
    auto registerTiled = [&](const Stmt& v) {
      std::vector<Stmt> rowsBody;
      for (int r = 0; r < piece.rows; ++r) rowsBody.push_back(block({shifted(v->body[0], loop.name, r)}));
      Stmt inner = block(std::move(rowsBody));
      for (size_t l = nest.loops.size(); l-- > 0;) {
        auto k = std::make_shared<StmtNode>(*nest.loops[l]);
        k->body = {inner};
        inner = k;
      }
      auto outer = std::make_shared<StmtNode>(*v);
      outer->accumulatesInRegisters = true;
      outer->body = {inner};
      return outer;
    };
    for (int i = 0; i < nestAt; ++i) copies(body[static_cast<size_t>(i)]);
    for (const auto& v : nest.vectorLoops) {
      if (piece.vectors == 0) {
        out.push_back(registerTiled(v));
        continue;
      }
      // Pieces of the vector loop, each register-tiled: a loop over the
      // whole pieces, then the rest.
      int64_t width = int64_t{piece.vectors} * lanes_, vectorTrips = *constantTripCount(*v);
      int64_t whole = vectorTrips / width;
      std::string pieceVar = v->name + "_piece";
      auto inPiece = std::make_shared<StmtNode>(*v);
      inPiece->init = indexVar(pieceVar);
      inPiece->cond = indexBinary(te::BinaryOp::Le, indexVar(v->name),
                                  indexBinary(te::BinaryOp::Add, indexVar(pieceVar), indexImm(width - 1)));
      out.push_back(
          forLoop(pieceVar, v->init,
                  indexBinary(te::BinaryOp::Le, indexVar(pieceVar), plus(v->init, (whole - 1) * width)),
                  indexImm(width), registerTiled(inPiece), /*parallel=*/false));
      if (whole * width < vectorTrips) {
        // The rest's bound restated from its start, so its trip count is
        // plainly constant whatever form the loop's own bound has.
        auto rest = std::make_shared<StmtNode>(*v);
        rest->init = plus(v->init, whole * width);
        rest->cond = indexBinary(te::BinaryOp::Le, indexVar(v->name), plus(v->init, vectorTrips - 1));
        out.push_back(registerTiled(rest));
      }
    }
    for (size_t i = static_cast<size_t>(nestAt) + 1; i < body.size(); ++i) copies(body[i]);
    auto tiled = std::make_shared<StmtNode>(loop);
    tiled->init = init;
    tiled->cond = cond;
    tiled->step = indexImm(piece.rows);
    tiled->body = {block(std::move(out))};
    return tiled;
  }

  // The most rows (a divisor of `trips`) whose accumulators fit.
  int rowsFor(int64_t trips, int accumulatorsPerRow) const {
    for (int r : kRowChoices)
      if (trips % r == 0 && r <= maxRegisterTileRows(lanes_, accumulatorsPerRow)) return r;
    return 0;
  }

  // Too few accumulators leave the multiply-add units waiting on their
  // latency (a convolution's 56-wide output row is 7 vectors: one row x 7);
  // a long vector loop then runs in pieces of fewer vectors, with more rows
  // per piece, when that keeps more accumulators busy. Among the shapes with
  // the most accumulators, the one with the fewest loads per multiply-add
  // (shared vectors plus broadcasts over their product).
  Piece pieceFor(int64_t trips, const AccumulationNest& nest, int rows) const {
    Piece whole{rows, 0, 0};
    if (nest.vectorLoops.size() != 1 || rows * nest.accumulatorsPerRow >= kMinAccumulators ||
        !nest.boundedVectorLoops.empty())
      return whole;
    int64_t vectorTrips = *constantTripCount(*nest.vectorLoops[0]);
    int chunks = static_cast<int>((vectorTrips + lanes_ - 1) / lanes_);
    int stores = nest.accumulatorsPerRow / chunks;
    // Loads per multiply-add: the shared vectors once and a broadcast per
    // row while the shared vectors fit beside the accumulators; otherwise
    // the compiler reads them from memory at every multiply-add (measured:
    // GCC turns a 3 x 4 tile's 4 shared vectors into 12 memory operands).
    int registers = lanes_ == 16 ? 32 : 16;
    auto loadsPerProduct = [&](int r, int p) {
      int products = r * p * stores;
      int shared = r * p * stores + p + 1 <= registers ? p : products;
      return static_cast<double>(shared + r) / products;
    };
    Piece best = whole;
    int bestAccumulators = rows * nest.accumulatorsPerRow;
    double bestLoads = loadsPerProduct(rows, chunks);
    for (int r : kRowChoices) {
      if (trips % r != 0) continue;
      for (int p = chunks - 1; p >= 1; --p) {
        if (r > maxRegisterTileRows(lanes_, p * stores)) continue;
        int accumulators = r * p * stores;
        double loads = loadsPerProduct(r, p);
        if (accumulators > bestAccumulators || (accumulators == bestAccumulators && loads < bestLoads)) {
          best = {r, p, stores};
          bestAccumulators = accumulators;
          bestLoads = loads;
        }
      }
    }
    return best;
  }

  // `e + offset`, folded where `e` is a constant or ends in one.
  static Expr plus(const Expr& e, int64_t offset) {
    if (e->kind == ExprKind::IntImm) return indexImm(e->intValue + offset);
    if (e->kind == ExprKind::Binary && e->binaryOp == te::BinaryOp::Add && e->index &&
        e->operands[1]->kind == ExprKind::IntImm)
      return indexBinary(te::BinaryOp::Add, e->operands[0], indexImm(e->operands[1]->intValue + offset));
    return indexBinary(te::BinaryOp::Add, e, indexImm(offset));
  }

  int lanes_;
  std::map<std::string, te::DType> buffers_;  // every buffer's element type
  Remarks& remarks_;
};

}  // namespace

int maxRegisterTileRows(int lanes, int vectorsPerRow) {
  // Accumulators, the shared operand's vectors and a broadcast must fit the
  // register file (16 vectors on AVX2, 32 on AVX-512).
  int budget = lanes == 16 ? 26 : 12;
  for (int r : kRowChoices)
    if (r * vectorsPerRow <= budget) return r;
  return 0;
}

Kernel registerTile(const Kernel& kernel, const std::string& isa, Remarks& remarks) {
  int lanes = isa == "avx512" ? 16 : isa == "avx2" ? 8 : 0;
  if (lanes == 0) return kernel;
  Kernel out = kernel;
  out.body = RegisterTiler(kernel, lanes, remarks).mutate(kernel.body);
  return out;
}

}  // namespace tessel::lir
