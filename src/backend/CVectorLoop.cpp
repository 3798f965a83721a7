#include "backend/CVectorLoop.h"

#include <cmath>
#include <sstream>
#include <vector>

#include "lir/IndexRanges.h"
#include "lir/VectorLoop.h"
#include "tessel/error.h"

namespace tessel::backend {

namespace {

// The mask of lanes in the loop: a load under it lies within its buffer.
constexpr const char* kUnguarded = "tessel_tail";

using lir::Expr;
using lir::ExprKind;
using te::BinaryOp;
using te::UnaryOp;

const char* integerPredicate(BinaryOp op) {
  switch (op) {
    case BinaryOp::Lt:
      return "lt";
    case BinaryOp::Le:
      return "le";
    case BinaryOp::Gt:
      return "gt";
    case BinaryOp::Ge:
      return "ge";
    case BinaryOp::Eq:
      return "eq";
    default:
      return "ne";
  }
}

const char* predicate(BinaryOp op) {
  switch (op) {
    case BinaryOp::Lt:
      return "_CMP_LT_OQ";
    case BinaryOp::Le:
      return "_CMP_LE_OQ";
    case BinaryOp::Gt:
      return "_CMP_GT_OQ";
    case BinaryOp::Ge:
      return "_CMP_GE_OQ";
    case BinaryOp::Eq:
      return "_CMP_EQ_OQ";
    default:
      return "_CMP_NEQ_UQ";  // C's != is true when either side is NaN
  }
}

const char* reductionName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Mul:
      return "mul";
    case BinaryOp::Max:
      return "max";
    case BinaryOp::Min:
      return "min";
    default:
      return "add";
  }
}

class VectorLoopEmitter {
 public:
  // `block`: the loop around `loop` run in blocks of its lanes (lir::StmtNode::transposeLanes).
  // `ranges`: the values of the variables of the loops and lets around `loop`.
  VectorLoopEmitter(std::ostream& os, const lir::StmtNode& loop, const ScalarC& scalar,
                    lir::IndexRanges ranges, const lir::StmtNode* block = nullptr)
      : os_(os),
        loop_(loop),
        scalar_(scalar),
        v_("tessel_v" + std::to_string(loop.vectorLanes)),
        block_(block),
        ranges_(std::move(ranges)) {
    // Inside the loop its variable is the first lane's value; the lanes, the
    // ones masked off excepted, stay within the loop's range.
    lir::bindRange(ranges_, loop_.name, block_ ? std::nullopt : lir::loopRange(loop_, ranges_));
    if (block_) lir::bindRange(ranges_, block_->name, std::nullopt);  // (bound per row of a block)
  }

  // The block loop: for each block of `lanes` of its iterations, the vector
  // loop reads each transposed operand's `lanes` x `lanes` block as rows
  // along the block loop (masked to the block's rows), transposes it in
  // registers, and runs its body once per row of the block with row i's
  // vector of every transposed operand.
  void emitTransposeBlock(int depth, const std::string& pragma) {
    const lir::StmtNode& outer = *block_;
    std::string pad(2 * depth, ' ');
    int lanes = loop_.vectorLanes;
    std::string first = "tessel_block_" + outer.name, lastRow = "tessel_last_" + outer.name;
    std::string lastColumn = "tessel_last_" + loop_.name;
    // The rows' bodies twice: for whole vectors of columns (unmasked
    // stores), and for the last, partial one.
    std::ostringstream wholeRows, partialRows;
    for (bool whole : {true, false}) {
      full_ = whole;
      std::ostringstream& rows = whole ? wholeRows : partialRows;
      for (int l = 0; l < lanes; ++l) {
        row_ = l;
        std::string rowPad(2 * (depth + 4), ' ');
        rows << rowPad << "if (" << l << " < tessel_rows) {\n";
        rows << rowPad << "  const long " << outer.name << " = " << first << " + " << l << ";\n";
        lir::LetBindings lets;
        stmt(rows, loop_.body[0], depth + 5, lets);
        rows << rowPad << "}\n";
      }
    }
    full_ = false;
    os_ << pad << "{\n";
    os_ << pad << "  const long " << lastRow << " = " << lastIteration(outer) << ";\n";
    if (!pragma.empty()) os_ << pad << "  " << pragma << "\n";
    os_ << pad << "  for (long " << first << " = " << scalar_.expr(outer.init) << "; " << first
        << " <= " << lastRow << "; " << first << " += " << lanes << ") {\n";
    os_ << pad << "    const long tessel_rows = " << lastRow << " - " << first << " + 1;\n";
    os_ << pad << "    const tessel_m" << lanes << " tessel_row_mask = " << v_ << "_tail(tessel_rows);\n";
    os_ << pad << "    const long " << lastColumn << " = " << lastIteration(loop_) << ";\n";
    os_ << pad << "    for (long " << loop_.name << " = " << scalar_.expr(loop_.init) << "; " << loop_.name
        << " <= " << lastColumn << "; " << loop_.name << " += " << lanes << ") {\n";
    os_ << pad << "      const tessel_m" << lanes << " tessel_tail = " << v_ << "_tail(" << lastColumn
        << " - " << loop_.name << " + 1);\n";
    for (size_t k = 0; k < transposed_.size(); ++k) {
      std::string name = "tessel_tr" + std::to_string(k);
      os_ << pad << "      " << v_ << " " << name << "[" << lanes << "];\n";
      for (int r = 0; r < lanes; ++r) {
        // Row r: the block's rows at column iteration `loop_ + r`.
        lir::LetBindings at{
            {outer.name, lir::indexVar(first)},
            {loop_.name, lir::indexBinary(BinaryOp::Add, lir::indexVar(loop_.name), lir::indexImm(r))}};
        std::string load = v_ + "_load(&" + scalar_.buffer(transposed_[k].buffer) + "[" +
                           scalar_.expr(lir::inlineLets(transposed_[k].index, at)) + "], tessel_row_mask)";
        os_ << pad << "      " << name << "[" << r << "] = ";
        if (r == 0)
          os_ << load << ";\n";
        else
          os_ << "(" << loop_.name << " + " << r << " <= " << lastColumn << ") ? " << load << " : " << v_
              << "_splat(0.0f);\n";
      }
      os_ << pad << "      " << v_ << "_transpose(" << name << ");\n";
    }
    os_ << pad << "      if (" << loop_.name << " + " << lanes - 1 << " <= " << lastColumn << ") {\n";
    os_ << wholeRows.str();
    os_ << pad << "      } else {\n";
    os_ << partialRows.str();
    os_ << pad << "      }\n";
    os_ << pad << "    }\n";
    os_ << pad << "  }\n";
    os_ << pad << "}\n";
  }

  void emit(int depth, const std::string& pragma) {
    if (loop_.accumulatesInRegisters) return emitRegisterTile(depth);
    std::string pad(2 * depth, ' ');
    const Expr& cond = loop_.cond;
    std::string last = scalar_.expr(cond->operands[1]);
    if (cond->binaryOp == BinaryOp::Lt) last = "(" + last + " - 1)";
    std::string end = "tessel_last_" + loop_.name;
    std::string wholeEnd = "tessel_whole_end_" + loop_.name;
    std::string first = scalar_.expr(loop_.init);
    // The whole vectors run unmasked, the last partial one (if any) masked:
    // the body twice. Accumulators are found while emitting the body,
    // declared before it; both copies name them alike.
    std::ostringstream whole, partial;
    {
      lir::LetBindings lets;
      full_ = true;
      stmt(whole, loop_.body[0], depth + 2, lets);
      full_ = false;
    }
    std::vector<Reduction> reductions = std::move(reductions_);
    reductions_.clear();
    {
      lir::LetBindings lets;
      stmt(partial, loop_.body[0], depth + 2, lets);
    }
    TESSEL_CHECK(reductions_.size() == reductions.size(), "emit-c", "vector loop copies differ");

    os_ << pad << "{\n";
    os_ << pad << "  const long " << end << " = " << last << ";\n";
    os_ << pad << "  const long " << wholeEnd << " = " << first << " + ((" << end << " - " << first
        << " + 1) / " << loop_.vectorLanes << ") * " << loop_.vectorLanes << ";\n";
    for (size_t k = 0; k < reductions_.size(); ++k) {
      double identity = lir::reductionIdentity(reductions_[k].op);
      std::string init = std::isinf(identity) ? (identity > 0 ? "INFINITY" : "(-INFINITY)")
                                              : (identity == 1 ? "1.0f" : "0.0f");
      os_ << pad << "  " << v_ << " tessel_acc" << k << " = " << v_ << "_splat(" << init << ");\n";
    }
    std::string wholeMask =
        "const tessel_m" + std::to_string(loop_.vectorLanes) + " tessel_tail = " + v_ + "_full();\n";
    if (whole.str().find("tessel_tail") == std::string::npos) wholeMask.clear();  // (guarded loads read it)
    std::string partialMask = "const tessel_m" + std::to_string(loop_.vectorLanes) + " tessel_tail = " + v_ +
                              "_tail(" + end + " - " + loop_.name + " + 1);\n";
    if (!pragma.empty()) {
      // A loop the threads share (perhaps `omp for` inside a parallel
      // region, which every thread runs): the partial vector is its last
      // iteration, not code after it.
      os_ << pad << "  " << pragma << "\n";
      os_ << pad << "  for (long " << loop_.name << " = " << first << "; " << loop_.name << " <= " << end
          << "; " << loop_.name << " += " << loop_.vectorLanes << ") {\n";
      os_ << pad << "    if (" << loop_.name << " < " << wholeEnd << ") {\n";
      if (!wholeMask.empty()) os_ << pad << "      " << wholeMask;
      os_ << whole.str();
      os_ << pad << "    } else {\n";
      os_ << pad << "      " << partialMask << partial.str();
      os_ << pad << "    }\n";
      os_ << pad << "  }\n";
    } else {
      os_ << pad << "  for (long " << loop_.name << " = " << first << "; " << loop_.name << " < " << wholeEnd
          << "; " << loop_.name << " += " << loop_.vectorLanes << ") {\n";
      if (!wholeMask.empty()) os_ << pad << "    " << wholeMask;
      os_ << whole.str();
      os_ << pad << "  }\n";
      os_ << pad << "  if (" << wholeEnd << " <= " << end << ") {\n";
      os_ << pad << "    const long " << loop_.name << " = " << wholeEnd << ";\n";
      os_ << pad << "    " << partialMask << partial.str();
      os_ << pad << "  }\n";
    }
    for (size_t k = 0; k < reductions_.size(); ++k) {
      const Reduction& r = reductions_[k];
      std::string partial = "tessel_red" + std::to_string(k);
      os_ << pad << "  {\n";
      os_ << pad << "    const float " << partial << " = " << v_ << "_reduce_" << reductionName(r.op)
          << "(tessel_acc" << k << ");\n";
      // The store as the scalar code has it, with the lanes' combined partial result.
      auto value =
          lir::binary(r.op, te::DType::F32, lir::load(r.buffer, te::DType::F32, r.index), varNamed(partial));
      os_ << pad << "    " << scalar_.store(lir::store(r.buffer, r.index, value)) << "\n";
      os_ << pad << "  }\n";
    }
    os_ << pad << "}\n";
  }

 private:
  struct Reduction {
    std::string buffer;
    Expr index;  // lets inlined: only names bound outside the loop
    BinaryOp op;
  };

  // A read loaded through a register transpose (lir::isTransposedRead).
  struct TransposedRead {
    std::string buffer;
    Expr index;  // lets inlined
  };

  std::string lastIteration(const lir::StmtNode& loop) const {
    std::string last = scalar_.expr(loop.cond->operands[1]);
    return loop.cond->binaryOp == BinaryOp::Lt ? "(" + last + " - 1)" : last;
  }

  // The register holding the current row's vector of a transposed read.
  std::string transposedRow(const std::string& buffer, const Expr& index) {
    size_t k = 0;
    while (k < transposed_.size() &&
           !(transposed_[k].buffer == buffer && lir::sameExpr(transposed_[k].index, index)))
      ++k;
    if (k == transposed_.size()) transposed_.push_back({buffer, index});
    return "tessel_tr" + std::to_string(k) + "[" + std::to_string(row_) + "]";
  }

  // A vector loop around a nest of sequential loops whose stores accumulate
  // into elements the nest does not move (lir::registerTile): its vectors
  // are unrolled, each accumulated element lives in a register over the
  // whole nest, loaded before it and stored after it. Lanes past the end
  // accumulate on masked-out (zero) loads and are never stored. A loop of a
  // partial tile, whose bound is a minimum known at run time, has a version
  // per count of vectors it may need, up to its most iterations: the
  // vectors before the last run unmasked in each.
  void emitRegisterTile(int depth) {
    std::string pad(2 * depth, ' ');
    const Expr& cond = loop_.cond;
    std::string last = scalar_.expr(cond->operands[1]);
    if (cond->binaryOp == BinaryOp::Lt) last = "(" + last + " - 1)";
    std::string end = "tessel_last_" + loop_.name;
    int lanes = loop_.vectorLanes;
    std::optional<int64_t> trips = lir::constantTripCount(loop_);
    os_ << pad << "{\n";
    os_ << pad << "  const long " << end << " = " << last << ";\n";
    if (trips) {
      emitRegisterTileVersion(depth + 1, static_cast<int>((*trips + lanes - 1) / lanes),
                              static_cast<int>(*trips / lanes));
    } else {
      std::optional<int64_t> most = lir::maxTripCount(loop_);
      TESSEL_CHECK(most.has_value(), "emit-c", "register tile without a bounded trip count");
      std::string count = "tessel_count_" + loop_.name;
      os_ << pad << "  const long " << count << " = " << end << " - " << scalar_.expr(loop_.init)
          << " + 1;\n";
      int chunks = static_cast<int>((*most + lanes - 1) / lanes);
      std::string keyword = "if";
      if (*most % lanes == 0) {
        os_ << pad << "  " << keyword << " (" << count << " == " << *most << ") {\n";
        emitRegisterTileVersion(depth + 2, chunks, chunks);
        os_ << pad << "  }";
        keyword = " else if";
      }
      for (int n = chunks; n >= 1; --n) {
        os_ << (keyword == "if" ? pad + "  " : "") << keyword << " (" << count << " > " << (n - 1) * lanes
            << ") {\n";
        emitRegisterTileVersion(depth + 2, n, n - 1);
        os_ << pad << "  }";
        keyword = " else if";
      }
      os_ << "\n";
    }
    os_ << pad << "}\n";
  }

  // A register tile of `chunks` vectors, the first `wholeChunks` of them
  // unmasked, in the scope where `tessel_last_<loop>` is the loop's last iteration.
  void emitRegisterTileVersion(int depth, int chunks, int wholeChunks) {
    std::string pad(2 * depth, ' ');
    std::string end = "tessel_last_" + loop_.name;
    int lanes = loop_.vectorLanes;
    // The accumulated elements, in body order (indices with lets inlined).
    std::vector<Reduction> elements;
    collectAccumulations(loop_.body[0], {}, elements);
    wholeChunks_ = wholeChunks;
    auto chunkScope = [&](std::ostream& os, const std::string& p, int c) {
      os << p << "const long " << loop_.name << " = " << scalar_.expr(loop_.init) << " + " << c * lanes
         << ";\n";
      os << p << "const tessel_m" << lanes << " tessel_tail = " << v_ << "_tail(" << end << " - "
         << loop_.name << " + 1);\n";
    };
    for (int c = 0; c < chunks; ++c) {
      os_ << pad << v_ << " ";
      for (size_t e = 0; e < elements.size(); ++e) os_ << (e ? ", " : "") << "tessel_racc" << e << "_" << c;
      os_ << ";\n";
      os_ << pad << "{\n";
      chunkScope(os_, pad + "  ", c);
      for (size_t e = 0; e < elements.size(); ++e)
        os_ << pad << "  tessel_racc" << e << "_" << c << " = " << v_
            << (whole(c) ? "_load_full(&" : "_load(&") << scalar_.buffer(elements[e].buffer) << "["
            << scalar_.expr(elements[e].index) << "]" << (whole(c) ? "" : ", tessel_tail") << ");\n";
      os_ << pad << "}\n";
    }
    std::ostringstream nest;
    registerNest(nest, loop_.body[0], depth, chunks);
    os_ << nest.str();
    for (int c = 0; c < chunks; ++c) {
      os_ << pad << "{\n";
      chunkScope(os_, pad + "  ", c);
      for (size_t e = 0; e < elements.size(); ++e)
        os_ << pad << "  " << v_ << (whole(c) ? "_store_full(&" : "_store(&")
            << scalar_.buffer(elements[e].buffer) << "[" << scalar_.expr(elements[e].index) << "], "
            << (whole(c) ? "" : "tessel_tail, ") << "tessel_racc" << e << "_" << c << ");\n";
      os_ << pad << "}\n";
    }
  }

  // Whether a register tile's vector `chunk` has all its lanes in the loop.
  bool whole(int chunk) const { return chunk < wholeChunks_; }

  // The stores under the nest, in the order registerNest meets them.
  void collectAccumulations(const lir::Stmt& s, lir::LetBindings lets, std::vector<Reduction>& out) {
    switch (s->kind) {
      case lir::StmtKind::Block:
        for (const auto& c : s->body) {
          if (c->kind == lir::StmtKind::Let)
            lets[c->name] = lir::inlineLets(c->value, lets);
          else
            collectAccumulations(c, lets, out);
        }
        return;
      case lir::StmtKind::For:
        collectAccumulations(s->body[0], lets, out);
        return;
      case lir::StmtKind::Store: {
        std::optional<lir::ReductionStore> r = lir::asReduction(*s, lets);
        TESSEL_CHECK(r.has_value(), "emit-c", "register tile store is not an accumulation");
        out.push_back({s->name, lir::inlineLets(s->index, lets), r->op});
        return;
      }
      default:
        throw InternalError("emit-c", "unexpected statement in a register tile");
    }
  }

  // The sequential loops of the nest as scalar loops; at the bottom, each
  // vector of the tile in turn updates its accumulators.
  void registerNest(std::ostream& os, const lir::Stmt& s, int depth, int chunks) {
    std::string pad(2 * depth, ' ');
    if (s->kind == lir::StmtKind::For) {
      os << pad << "for (long " << s->name << " = " << scalar_.expr(s->init) << "; " << scalar_.expr(s->cond)
         << "; " << s->name << " += " << scalar_.expr(s->step) << ") {\n";
      lir::IndexRanges outer = ranges_;
      lir::bindRange(ranges_, s->name, lir::loopRange(*s, ranges_));
      registerNest(os, s->body[0], depth + 1, chunks);
      ranges_ = std::move(outer);
      os << pad << "}\n";
      return;
    }
    // Row by row, each row's vectors together: a row's broadcast operand is
    // live over its own vectors only and the other operand's vectors are
    // loaded once for all rows. (Vector by vector, GCC keeps every row's
    // broadcast live across the tile and spills accumulators: a 6-row x
    // 2-vector tile ran at 60% of the row-major order's speed.)
    std::vector<lir::Stmt> rows = s->kind == lir::StmtKind::Block ? s->body : std::vector<lir::Stmt>{s};
    std::vector<lir::Stmt> rowLets;  // lets among the rows, in scope for the rows after them
    int element = 0;
    for (const auto& row : rows) {
      if (row->kind == lir::StmtKind::Let) {
        rowLets.push_back(row);
        continue;
      }
      int rowElement = element;
      for (int c = 0; c < chunks; ++c) {
        element = rowElement;
        emitChunkOf(os, row, rowLets, depth, c, element);
      }
    }
  }

  // One row of a register tile for vector `chunk`, in its own scope: the
  // vector loop's variable and tail mask for that chunk, the lets before the
  // row, then the row's accumulations (`element` numbers their accumulators).
  void emitChunkOf(std::ostream& os, const lir::Stmt& row, const std::vector<lir::Stmt>& rowLets, int depth,
                   int chunk, int& element) {
    std::string pad(2 * depth, ' ');
    lir::IndexRanges outer = ranges_;
    std::optional<lir::IndexRange> all = lir::loopRange(loop_, ranges_),
                                   init = lir::rangeOf(loop_.init, ranges_);
    // This vector's lanes (those past the loop's end are masked off).
    std::optional<lir::IndexRange> lanes;
    if (all && init) {
      int64_t offset = int64_t{chunk} * loop_.vectorLanes;
      lanes =
          lir::IndexRange{init->lo + offset, std::min(all->hi, init->hi + offset + loop_.vectorLanes - 1)};
    }
    lir::bindRange(ranges_, loop_.name, lanes);
    os << pad << "{\n";
    os << pad << "  const long " << loop_.name << " = " << scalar_.expr(loop_.init) << " + "
       << chunk * loop_.vectorLanes << ";\n";
    os << pad << "  const tessel_m" << loop_.vectorLanes << " tessel_tail = " << v_ << "_tail(tessel_last_"
       << loop_.name << " - " << loop_.name << " + 1);\n";
    lir::LetBindings lets;
    full_ = whole(chunk);
    for (const auto& let : rowLets) accumulate(os, let, depth + 1, lets, chunk, element);
    accumulate(os, row, depth + 1, lets, chunk, element);
    full_ = false;
    os << pad << "}\n";
    ranges_ = std::move(outer);
  }

  void accumulate(std::ostream& os, const lir::Stmt& s, int depth, lir::LetBindings& lets, int chunk,
                  int& element) {
    std::string pad(2 * depth, ' ');
    switch (s->kind) {
      case lir::StmtKind::Block: {
        lir::LetBindings inner = lets;
        os << pad << "{\n";
        for (const auto& c : s->body) accumulate(os, c, depth + 1, inner, chunk, element);
        os << pad << "}\n";
        return;
      }
      case lir::StmtKind::Let:
        lets[s->name] = lir::inlineLets(s->value, lets);
        os << pad << "const long " << s->name << " = " << scalar_.expr(s->value) << ";\n";
        return;
      case lir::StmtKind::Store: {
        currentLets_ = lets;
        std::optional<lir::ReductionStore> r = lir::asReduction(*s, lets);
        TESSEL_CHECK(r.has_value(), "emit-c", "register tile store is not an accumulation");
        // Lanes past the end may accumulate (they are never stored): a
        // multiply-add needs no mask.
        std::string acc = "tessel_racc" + std::to_string(element++) + "_" + std::to_string(chunk);
        os << pad << accumulation(acc, *r, /*maskProducts=*/false) << "\n";
        return;
      }
      default:
        throw InternalError("emit-c", "unexpected statement in a register tile");
    }
  }

  // `acc` updated by one accumulation: masked to the loop's lanes, except
  // over whole vectors and, unless `maskProducts`, for multiply-adds.
  std::string accumulation(const std::string& acc, const lir::ReductionStore& r, bool maskProducts = true) {
    const Expr& x = r.rest;
    bool product =
        r.op == BinaryOp::Add && x->kind == ExprKind::Binary && x->binaryOp == BinaryOp::Mul && !x->index;
    if ((full_ || !maskProducts) && product)
      return acc + " = " + v_ + "_fma(" + vec(x->operands[0], kUnguarded) + ", " +
             vec(x->operands[1], kUnguarded) + ", " + acc + ");";
    if (full_)
      return acc + " = " + v_ + "_" + reductionName(r.op) + "(" + acc + ", " + vec(x, kUnguarded) + ");";
    if (product)
      return acc + " = " + v_ + "_acc_fma(" + acc + ", tessel_tail, " + vec(x->operands[0], kUnguarded) +
             ", " + vec(x->operands[1], kUnguarded) + ");";
    return acc + " = " + v_ + "_acc_" + reductionName(r.op) + "(" + acc + ", tessel_tail, " +
           vec(x, kUnguarded) + ");";
  }

  static Expr varNamed(const std::string& name) {
    auto n = std::make_shared<lir::ExprNode>();
    n->kind = ExprKind::Var;
    n->type = te::DType::F32;
    n->name = name;
    return n;
  }

  void stmt(std::ostream& os, const lir::Stmt& s, int depth, lir::LetBindings& lets) {
    std::string pad(2 * depth, ' ');
    switch (s->kind) {
      case lir::StmtKind::Block: {
        lir::LetBindings inner = lets;
        os << pad << "{\n";
        for (const auto& c : s->body) stmt(os, c, depth + 1, inner);
        os << pad << "}\n";
        return;
      }
      case lir::StmtKind::Let:
        lets[s->name] = lir::inlineLets(s->value, lets);
        os << pad << "const long " << s->name << " = " << scalar_.expr(s->value) << ";\n";
        return;
      case lir::StmtKind::If: {
        os << pad << "if (" << scalar_.expr(s->cond) << ") {\n";
        lir::LetBindings a = lets;
        stmt(os, s->thenCase, depth + 1, a);
        if (s->elseCase) {
          os << pad << "} else {\n";
          lir::LetBindings b = lets;
          stmt(os, s->elseCase, depth + 1, b);
        }
        os << pad << "}\n";
        return;
      }
      case lir::StmtKind::Store: {
        currentLets_ = lets;
        std::optional<int64_t> stride = lir::strideIn(lir::inlineLets(s->index, lets), loop_.name);
        if (stride && *stride == 1) {
          if (!s->prefetchBuffer.empty())
            os << pad << "__builtin_prefetch(&" << scalar_.buffer(s->prefetchBuffer) << "["
               << scalar_.expr(s->prefetchIndex) << "], 0, 3);\n";
          te::DType t = scalar_.type(s->name);
          // Streaming stores are for f32 outputs (lir::markStreamingStores).
          std::string kind = t != te::DType::F32 ? "_store" + narrowSuffix(t)
                             : s->streaming      ? "_stream"
                                                 : "_store";
          os << pad << v_ << kind << (full_ ? "_full(&" : "(&") << scalar_.buffer(s->name) << "["
             << scalar_.expr(s->index) << "], " << (full_ ? "" : "tessel_tail, ")
             << vec(storedValue(*s, t), kUnguarded) << ");\n";
          return;
        }
        std::optional<lir::ReductionStore> r = lir::asReduction(*s, lets);
        TESSEL_CHECK(r.has_value(), "emit-c", "vector loop store is neither unit-stride nor a reduction");
        size_t k = reductions_.size();
        reductions_.push_back({s->name, lir::inlineLets(s->index, lets), r->op});
        os << pad << accumulation("tessel_acc" + std::to_string(k), *r) << "\n";
        return;
      }
      case lir::StmtKind::For:
      case lir::StmtKind::Alloc:
      case lir::StmtKind::Call:
        break;
    }
    throw InternalError("emit-c", "unexpected statement in a vector loop");
  }

  bool varies(const Expr& e) const { return lir::dependsOn(e, loop_.name); }

  // A store's value, without a cast to the stored 16-bit type: rounding twice is rounding once.
  static const Expr& storedValue(const lir::StmtNode& store, te::DType stored) {
    const Expr& v = store.value;
    return v->kind == ExprKind::Cast && v->type == stored && stored != te::DType::F32 ? v->operands[0] : v;
  }

  // The prelude's suffix for loads, stores and roundings of a 16-bit float type.
  static std::string narrowSuffix(te::DType t) {
    TESSEL_CHECK(t == te::DType::F16 || t == te::DType::BF16, "emit-c",
                 "a vector lane type is not a 16-bit float");
    return t == te::DType::F16 ? "_f16" : "_bf16";
  }

  // The vector of `e` over the lanes; `mask`: the lanes whose loads may run.
  // Index sub-expressions are printed as scalars: they are the first lane's
  // value, and unit-stride (stride-2) loads read the following (every other) elements.
  std::string vec(const Expr& e, const std::string& mask) {
    if (!variesThroughLets(e)) return v_ + "_splat((float)" + scalar_.expr(e) + ")";
    auto a = [&](int i) { return vec(e->operands[static_cast<size_t>(i)], mask); };
    switch (e->kind) {
      case ExprKind::Load: {
        Expr index = lir::inlineLets(e->operands[0], currentLets_);
        // Under a guard the first lane may lie outside the buffer (VectorPrelude.h).
        std::string first =
            mask == kUnguarded
                ? "&" + scalar_.buffer(e->name) + "[" + scalar_.expr(e->operands[0]) + "]"
                : "TESSEL_ADDRESS(" + scalar_.buffer(e->name) + ", " + scalar_.expr(e->operands[0]) + ")";
        if (te::DType t = scalar_.type(e->name); t != te::DType::F32)  // unit stride (the vectorizer's rule)
          return full_ && mask == kUnguarded
                     ? v_ + "_load" + narrowSuffix(t) + "_full(" + first + ")"
                     : v_ + "_load" + narrowSuffix(t) + "(" + first + ", " + mask + ")";
        std::optional<int64_t> stride = lir::strideIn(index, loop_.name);
        if (stride && (*stride == 1 || *stride == 2) && full_ && mask == kUnguarded)
          return v_ + (*stride == 2 ? "_load_stride2_full(" : "_load_full(") + first + ")";
        if (stride && (*stride == 1 || *stride == 2))
          return v_ + (*stride == 2 ? "_load_stride2(" : "_load(") + first + ", " + mask + ")";
        // The numerator is printed with the lets, as the index is: the first lane's value.
        std::optional<lir::QuotientIndex> q = lir::quotientIndex(index, loop_.name);
        if (!q && block_ && lir::isTransposedRead(index, loop_.name, block_->name))
          return transposedRow(e->name, index);
        TESSEL_CHECK(q.has_value(), "emit-c",
                     "vector loop load is neither unit-stride, stride 2 nor a quotient");
        return v_ + "_load_quotient(" + first + ", (int32_t)(" + scalar_.expr(q->numerator) + "), " +
               std::to_string(q->shift) + ", " + mask + ")";
      }
      case ExprKind::Binary:
        switch (e->binaryOp) {
          case BinaryOp::Add: {
            // a*b + c as one fused multiply-add.
            for (int side : {0, 1}) {
              const Expr& m = e->operands[static_cast<size_t>(side)];
              if (m->kind == ExprKind::Binary && m->binaryOp == BinaryOp::Mul && !m->index)
                return v_ + "_fma(" + vec(m->operands[0], mask) + ", " + vec(m->operands[1], mask) + ", " +
                       a(1 - side) + ")";
            }
            return v_ + "_add(" + a(0) + ", " + a(1) + ")";
          }
          case BinaryOp::Sub:
            return v_ + "_sub(" + a(0) + ", " + a(1) + ")";
          case BinaryOp::Mul:
            return v_ + "_mul(" + a(0) + ", " + a(1) + ")";
          case BinaryOp::Div:
            // A divisor that stays the same over the loop (softmax's row sum) is
            // one reciprocal instead of a vector division per iteration.
            if (!variesThroughLets(e->operands[1]))
              return v_ + "_div_by(" + a(0) + ", (float)" + scalar_.expr(e->operands[1]) + ")";
            return v_ + "_div(" + a(0) + ", " + a(1) + ")";
          case BinaryOp::Min:
            return v_ + "_min(" + a(0) + ", " + a(1) + ")";
          case BinaryOp::Max:
            return v_ + "_max(" + a(0) + ", " + a(1) + ")";
          default:
            break;
        }
        break;
      case ExprKind::Unary:
        switch (e->unaryOp) {
          case UnaryOp::Neg:
            return v_ + "_neg(" + a(0) + ")";
          case UnaryOp::Abs:
            return v_ + "_abs(" + a(0) + ")";
          case UnaryOp::Sqrt:
            return v_ + "_sqrt(" + a(0) + ")";
          case UnaryOp::Rsqrt:
            return v_ + "_div(" + v_ + "_splat(1.0f), " + v_ + "_sqrt(" + a(0) + "))";
          case UnaryOp::Exp:
            return v_ + "_exp(" + a(0) + ")";
          case UnaryOp::Log:
            return v_ + "_log(" + a(0) + ")";
          case UnaryOp::Tanh:
            return v_ + "_tanh(" + a(0) + ")";
          case UnaryOp::Sigmoid:
            return v_ + "_sigmoid(" + a(0) + ")";
          case UnaryOp::Erf:
            return v_ + "_erf(" + a(0) + ")";
          default:
            break;
        }
        break;
      case ExprKind::Select:
        return selectVector(e, mask);
      case ExprKind::Cast:
        // f16 and bf16 values are f32 lanes; a cast to one rounds them as the scalar code does.
        return e->type == te::DType::F32 ? a(0) : v_ + "_round" + narrowSuffix(e->type) + "(" + a(0) + ")";
      default:
        break;
    }
    throw InternalError("emit-c", "no vector form for an expression the vectorizer accepted");
  }

  // A select's condition taken apart: the conjuncts that hold on every lane
  // wherever the vector runs (lane ranges) are dropped, the uniform ones
  // become one scalar branch, and only the rest is a lane mask -- a padded
  // convolution's row test is a branch, its interior columns load unmasked.
  std::string selectVector(const Expr& e, const std::string& mask) {
    std::vector<Expr> uniform, varying;
    for (const Expr& k : conjuncts(e->operands[0])) {
      std::optional<bool> known = lir::comparisonOutcome(lir::inlineLets(k, currentLets_), ranges_);
      if (known == true) continue;
      if (known == false) return vec(e->operands[2], mask);
      (variesThroughLets(k) ? varying : uniform).push_back(k);
    }
    std::string chosen;
    if (varying.empty()) {
      chosen = vec(e->operands[1], mask);
    } else {
      Expr c = conjunction(varying, e->operands[0]);
      std::string m = condition(c, mask);
      std::string inside = vec(e->operands[1], v_ + "_mask_and(" + mask + ", " + m + ")");
      // Masked loads give zero in the lanes they skip.
      chosen = zeroOutside(e->operands[1], e->operands[2])
                   ? inside
                   : v_ + "_select(" + m + ", " + inside + ", " +
                         vec(e->operands[2], v_ + "_mask_andnot(" + m + ", " + mask + ")") + ")";
    }
    if (uniform.empty()) return chosen;
    return "((" + scalar_.expr(conjunction(uniform, e->operands[0])) + ") ? " + chosen + " : " +
           vec(e->operands[2], mask) + ")";
  }

  static std::vector<Expr> conjuncts(const Expr& c) {
    if (c->kind == ExprKind::Binary && c->binaryOp == BinaryOp::And) {
      std::vector<Expr> all = conjuncts(c->operands[0]), right = conjuncts(c->operands[1]);
      all.insert(all.end(), right.begin(), right.end());
      return all;
    }
    return {c};
  }

  // `parts` joined by And nodes like `like` (the condition they came from).
  static Expr conjunction(const std::vector<Expr>& parts, const Expr& like) {
    Expr all = parts[0];
    for (size_t k = 1; k < parts.size(); ++k) {
      auto n = std::make_shared<lir::ExprNode>(*like);
      n->operands = {all, parts[k]};
      all = n;
    }
    return all;
  }

  // Whether `select(m, then, otherwise)` is `then` loaded under m: `then` a
  // plain f32 load of unit stride (a masked load zero-fills) and
  // `otherwise` +0.
  bool zeroOutside(const Expr& then, const Expr& otherwise) const {
    if (then->kind != ExprKind::Load || then->type != te::DType::F32) return false;
    std::optional<int64_t> stride =
        lir::strideIn(lir::inlineLets(then->operands[0], currentLets_), loop_.name);
    if (!stride || *stride != 1) return false;
    const Expr* zero = &otherwise;
    if ((*zero)->kind == ExprKind::Cast) zero = &(*zero)->operands[0];
    if ((*zero)->kind == ExprKind::IntImm) return (*zero)->intValue == 0;
    return (*zero)->kind == ExprKind::FloatImm && (*zero)->floatValue == 0 &&
           !std::signbit((*zero)->floatValue);
  }

  std::string condition(const Expr& c, const std::string& mask) {
    const Expr& first = c->kind == ExprKind::Binary ? c->operands[0] : c;
    if (c->kind == ExprKind::Binary && te::isComparison(c->binaryOp) &&
        (first->index || !lir::isLaneFloat(first->type)))
      return v_ + "_cmp_i32_" + integerPredicate(c->binaryOp) + "(" + lanes(c->operands[0]) + ", " +
             lanes(c->operands[1]) + ")";
    if (c->kind == ExprKind::Binary && te::isComparison(c->binaryOp))
      return v_ + "_cmp(" + vec(c->operands[0], mask) + ", " + vec(c->operands[1], mask) + ", " +
             predicate(c->binaryOp) + ")";
    if (c->kind == ExprKind::Binary && c->binaryOp == BinaryOp::And)
      return v_ + "_mask_and(" + condition(c->operands[0], mask) + ", " + condition(c->operands[1], mask) +
             ")";
    if (c->kind == ExprKind::Binary && c->binaryOp == BinaryOp::Or)
      return v_ + "_mask_or(" + condition(c->operands[0], mask) + ", " + condition(c->operands[1], mask) +
             ")";
    if (c->kind == ExprKind::Unary && c->unaryOp == UnaryOp::Not)
      return v_ + "_mask_not(" + condition(c->operands[0], mask) + ")";
    throw InternalError("emit-c", "no vector form for a condition the vectorizer accepted");
  }

  // An integer lane value (lir::isIntegerLaneValue): a uniform value in every
  // lane, or the first lane's value plus the lane number.
  std::string lanes(const Expr& e) {
    std::string first = "(int32_t)(" + scalar_.expr(e) + ")";
    return v_ + (variesThroughLets(e) ? "_iota_i32(" : "_splat_i32(") + first + ")";
  }

  // Lets are emitted as scalars (the first lane), so whether `e` varies is
  // decided with them inlined.
  bool variesThroughLets(const Expr& e) const { return varies(lir::inlineLets(e, currentLets_)); }

  std::ostream& os_;
  const lir::StmtNode& loop_;
  const ScalarC& scalar_;
  std::string v_;
  const lir::StmtNode* block_;
  int row_ = 0;          // under a block loop: the row of the block being emitted
  bool full_ = false;    // emitting for a whole vector: no lane is masked off
  int wholeChunks_ = 0;  // a register tile's vectors with all their lanes in the loop
  std::vector<TransposedRead> transposed_;
  std::vector<Reduction> reductions_;
  lir::LetBindings currentLets_;
  lir::IndexRanges ranges_;  // of the variables in scope where code is being emitted
};

}  // namespace

void emitVectorLoop(std::ostream& os, const lir::Stmt& loop, int depth, const ScalarC& scalar,
                    const lir::IndexRanges& ranges, const std::string& pragma) {
  VectorLoopEmitter(os, *loop, scalar, ranges).emit(depth, pragma);
}

void emitTransposeBlock(std::ostream& os, const lir::Stmt& block, int depth, const ScalarC& scalar,
                        const lir::IndexRanges& ranges, const std::string& pragma) {
  TESSEL_CHECK(block->transposeLanes > 0 && block->body[0]->kind == lir::StmtKind::For &&
                   block->body[0]->vectorLanes == block->transposeLanes,
               "emit-c", "a transpose block is not one vector loop of its lanes");
  VectorLoopEmitter(os, *block->body[0], scalar, ranges, block.get()).emitTransposeBlock(depth, pragma);
}

}  // namespace tessel::backend
