#include "lir/LowerStatement.h"

#include <algorithm>
#include <utility>

#include "target/Promotion.h"

namespace tessel::lir {

std::string indexVarName(const std::string& v) { return "v_" + v; }

namespace {

class InstanceLowering {
 public:
  InstanceLowering(const poly::Scop& scop, const RedirectedTensors& promoted, bool& checksIndices)
      : scop_(scop),
        program_(*scop.program),
        checkedReads_(scop.checkedReads),
        promoted_(promoted),
        checksIndices_(checksIndices) {}

  Expr value(const te::Expr& e) {
    switch (e->kind) {
      case te::ExprKind::Const:
        return imm(e->value, e->type);
      case te::ExprKind::Var:
        return cast(te::DType::I32, indexVar(indexVarName(e->name)));
      case te::ExprKind::Access: {
        const te::TensorDecl& t = program_.tensor(e->name);
        auto p = promoted_.find(e->name);
        if (p != promoted_.end() && target::promotableRead(scop_, *e))
          return load(p->second.buffer, t.dtype, promotedIndex(p->second, t, e->operands));
        return load(e->name, t.dtype, flatIndex(t, e->operands, checkedReads_.count(e.get()) > 0));
      }
      case te::ExprKind::Unary:
        return unary(e->unaryOp, e->type, value(e->operands[0]));
      case te::ExprKind::Binary:
        return binary(e->binaryOp, e->type, value(e->operands[0]), value(e->operands[1]));
      case te::ExprKind::Select:
        return select(e->type, value(e->operands[0]), value(e->operands[1]), value(e->operands[2]));
      case te::ExprKind::Cast:
        return cast(e->type, value(e->operands[0]));
    }
    throw InternalError("lower-statement", "unknown expression kind");
  }

  // Where a statement stores into `t`: its buffer when `t` is contracted here.
  std::pair<std::string, Expr> storeTarget(const te::TensorDecl& t, const std::vector<te::Expr>& indices) {
    auto p = promoted_.find(t.name);
    if (p != promoted_.end() && p->second.writes)
      return {p->second.buffer, promotedIndex(p->second, t, indices)};
    return {t.name, flatIndex(t, indices)};
  }

  Expr flatIndex(const te::TensorDecl& t, const std::vector<te::Expr>& indices, bool checked = false) {
    TESSEL_CHECK(indices.size() == t.shape.size(), "lower-statement", "rank mismatch on " + t.name);
    Expr flat = indexImm(0);
    for (size_t d = 0; d < indices.size(); ++d) {
      Expr i = index(indices[d], t.shape[d], checked);
      flat = d == 0 ? i
                    : indexBinary(te::BinaryOp::Add,
                                  indexBinary(te::BinaryOp::Mul, flat, indexImm(t.shape[d])), i);
    }
    return flat;
  }

 private:
  Expr promotedIndex(const RedirectedTensor& p, const te::TensorDecl& t,
                     const std::vector<te::Expr>& indices) {
    TESSEL_CHECK(indices.size() == p.offsets.size() && indices.size() == p.box.size(), "lower-statement",
                 "rank mismatch on the promoted copy of " + t.name);
    std::vector<Expr> local;
    for (size_t d = 0; d < indices.size(); ++d)
      local.push_back(indexBinary(te::BinaryOp::Sub, index(indices[d], t.shape[d], false), p.offsets[d]));
    Expr flat = indexImm(0);
    bool first = true;
    for (size_t d : bufferDims(p.layout, indices.size())) {
      flat = first ? local[d]
                   : indexBinary(te::BinaryOp::Add, indexBinary(te::BinaryOp::Mul, flat, indexImm(p.box[d])),
                                 local[d]);
      first = false;
    }
    return flat;
  }

  // Indices are in bounds when extraction proved them so (isl, for affine
  // and quasi-affine indices); the reads it could not prove are `checked`
  // at run time, so a bad index reports an error instead of reading outside
  // the tensor.
  Expr index(const te::Expr& e, int64_t extent, bool checked) {
    auto a = te::toAffine(e);
    if (!a && !checked) return value(e);
    if (a && !checked) {
      Expr r = indexImm(a->constant);
      bool first = a->constant == 0;
      for (const auto& [v, c] : a->coeffs) {
        Expr term = indexVar(indexVarName(v));
        if (c != 1) term = indexBinary(te::BinaryOp::Mul, indexImm(c), term);
        r = first ? term : indexBinary(te::BinaryOp::Add, r, term);
        first = false;
      }
      return r;
    }
    checksIndices_ = true;
    return checkedIndex(value(e), extent);
  }

  const poly::Scop& scop_;
  const te::Program& program_;
  const std::set<const te::ExprNode*>& checkedReads_;
  const RedirectedTensors& promoted_;
  bool& checksIndices_;
};

Expr combine(te::Reduction r, te::DType t, Expr acc, Expr v) {
  te::BinaryOp op = te::BinaryOp::Add;
  switch (r) {
    case te::Reduction::Sum:
      op = te::BinaryOp::Add;
      break;
    case te::Reduction::Prod:
      op = te::BinaryOp::Mul;
      break;
    case te::Reduction::Max:
      op = te::BinaryOp::Max;
      break;
    case te::Reduction::Min:
      op = te::BinaryOp::Min;
      break;
    case te::Reduction::None:
      throw InternalError("lower-statement", "combine without a reduction");
  }
  te::DType rt = te::binaryResultType(op, t, v->type);
  return binary(op, rt, std::move(acc), std::move(v));
}

Expr storable(te::DType bufferType, Expr v) {
  return v->type == bufferType ? v : cast(bufferType, std::move(v));
}

}  // namespace

Stmt lowerStatementInstance(const poly::Scop& scop, const poly::Statement& statement,
                            const std::vector<Expr>& dimValues, const RedirectedTensors& promoted,
                            bool& checksIndices) {
  const te::Program& program = *scop.program;
  TESSEL_CHECK(dimValues.size() == statement.dims.size(), "lower-statement",
               "wrong number of values for " + statement.name);
  const te::Stage& stage = program.stages[statement.stage];
  const te::TensorDecl& out = program.tensor(stage.output);
  std::vector<Stmt> stmts;
  for (size_t d = 0; d < dimValues.size(); ++d)
    stmts.push_back(let(indexVarName(statement.dims[d]), dimValues[d]));

  InstanceLowering lower(scop, promoted, checksIndices);
  std::vector<te::Expr> lhs;
  for (const auto& v : stage.indices) lhs.push_back(te::var(v));
  auto [buffer, target] = lower.storeTarget(out, lhs);
  Expr v;
  switch (statement.kind) {
    case poly::StatementKind::Assign:
      v = lower.value(stage.rhs);
      break;
    case poly::StatementKind::Init:
      v = imm(te::reductionIdentity(stage.reduction, out.dtype), out.dtype);
      break;
    case poly::StatementKind::Update:
      v = combine(stage.reduction, out.dtype, load(buffer, out.dtype, target), lower.value(stage.rhs));
      break;
  }
  stmts.push_back(store(buffer, target, storable(out.dtype, v)));
  return block(std::move(stmts));
}

std::vector<size_t> bufferDims(const std::vector<int>& layout, size_t rank) {
  std::vector<size_t> dims;
  if (layout.empty())
    for (size_t d = 0; d < rank; ++d) dims.push_back(d);
  for (int d : layout) dims.push_back(static_cast<size_t>(d));
  std::vector<size_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = sorted.size() == rank;
  for (size_t d = 0; permutation && d < rank; ++d) permutation = sorted[d] == d;
  TESSEL_CHECK(permutation, "lower-statement",
               "a promoted buffer's layout is not a permutation of its dimensions");
  return dims;
}

}  // namespace tessel::lir
