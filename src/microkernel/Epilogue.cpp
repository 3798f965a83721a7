#include "microkernel/Epilogue.h"

#include <algorithm>

#include "backend/CScalarOps.h"

namespace tessel::microkernel {

namespace {

void collectReads(const te::Expr& e, std::vector<const te::ExprNode*>& out) {
  if (e->kind == te::ExprKind::Access) out.push_back(e.get());
  for (const auto& o : e->operands) collectReads(o, out);
}

// f32 values (constants of any type, which C converts exactly enough: the
// interpreter promotes them to f32 too), comparisons and logic on them.
bool onlyF32(const te::Expr& e) {
  if (e->kind == te::ExprKind::Const) return te::isFloat(e->type) || te::isInteger(e->type);
  bool logical =
      e->kind == te::ExprKind::Binary && (te::isComparison(e->binaryOp) || te::isLogical(e->binaryOp));
  if (e->type != te::DType::F32 && !(e->type == te::DType::Bool && logical)) return false;
  if (e->kind == te::ExprKind::Cast || e->kind == te::ExprKind::Var) return false;
  if (e->kind == te::ExprKind::Access) return true;
  return std::all_of(e->operands.begin(), e->operands.end(), [](const te::Expr& o) { return onlyF32(o); });
}

bool readsTensor(const te::Stage& s, const std::string& tensor) {
  std::vector<const te::ExprNode*> reads;
  collectReads(s.rhs, reads);
  return std::any_of(reads.begin(), reads.end(), [&](const te::ExprNode* r) { return r->name == tensor; });
}

}  // namespace

EpilogueRecognition recognizeEpilogue(const te::Program& program, const Contraction& c) {
  EpilogueRecognition r;
  const std::string& o = c.output.tensor;
  const te::TensorDecl& decl = program.tensor(o);
  if (decl.role != te::TensorRole::Temporary) {
    r.whyNot = o + " is an output of the program";
    return r;
  }
  std::vector<int> readers;
  for (int i = 0; i < static_cast<int>(program.stages.size()); ++i)
    if (i != c.stage && readsTensor(program.stages[static_cast<size_t>(i)], o)) readers.push_back(i);
  if (readers.size() != 1) {
    r.whyNot = readers.empty() ? "nothing reads " + o : "several statements read " + o;
    return r;
  }
  const te::Stage& e = program.stages[static_cast<size_t>(readers[0])];
  if (e.reduction != te::Reduction::None || program.tensor(e.output).dtype != te::DType::F32 ||
      !onlyF32(e.rhs)) {
    r.whyNot = e.output + " is not an elementwise f32 statement";
    return r;
  }
  if (e.indices.size() != c.output.subscripts.size()) {
    r.whyNot = e.output + " does not have " + o + "'s dimensions";
    return r;
  }
  Epilogue ep;
  ep.stage = readers[0];
  ep.rhs = e.rhs;
  ep.contractionTensor = o;
  ep.vars = e.indices;
  // Its variables stand for the contraction's output dimensions, in order.
  std::map<std::string, std::string> dimOf;
  for (size_t i = 0; i < e.indices.size(); ++i) {
    if (e.ranges.at(e.indices[i]).lo != 0 || e.ranges.at(e.indices[i]).extent() != c.dims[i].extent) {
      r.whyNot = e.output + " does not cover " + o + "'s elements once each";
      return r;
    }
    dimOf[e.indices[i]] = c.dims[i].name;
  }
  const te::TensorDecl& out = program.tensor(e.output);
  ep.output = c.output;
  ep.output.tensor = e.output;
  ep.output.shape = out.shape;
  if (out.shape != c.output.shape) {
    r.whyNot = e.output + " does not have " + o + "'s shape";
    return r;
  }
  std::vector<const te::ExprNode*> reads;
  collectReads(e.rhs, reads);
  for (const te::ExprNode* read : reads) {
    if (read->name == o) {
      bool identity = read->operands.size() == e.indices.size();
      for (size_t i = 0; identity && i < e.indices.size(); ++i)
        identity = read->operands[i]->kind == te::ExprKind::Var && read->operands[i]->name == e.indices[i];
      if (!identity) {
        r.whyNot = e.output + " reads " + o + " elsewhere than at its own coordinates";
        return r;
      }
      continue;
    }
    if (program.tensor(read->name).role != te::TensorRole::Input) {
      r.whyNot = e.output + " also reads " + read->name + ", which the program computes";
      return r;
    }
    TensorAccess a;
    a.tensor = read->name;
    a.shape = program.tensor(read->name).shape;
    for (const auto& index : read->operands) {
      auto affine = te::toAffine(index);
      if (!affine) {
        r.whyNot = "a subscript of " + read->name + " is not affine";
        return r;
      }
      te::AffineExpr mapped;
      mapped.constant = affine->constant;
      for (const auto& [var, coeff] : affine->coeffs)
        if (coeff != 0) mapped.coeffs[dimOf.at(var)] = coeff;
      a.subscripts.push_back(mapped);
    }
    ep.reads.push_back({read, a});
  }
  r.epilogue = std::move(ep);
  return r;
}

std::vector<std::string> Epilogue::tensors() const {
  std::vector<std::string> names;
  for (const auto& r : reads)
    if (std::find(names.begin(), names.end(), r.access.tensor) == names.end())
      names.push_back(r.access.tensor);
  return names;
}

std::string epilogueC(const Epilogue& ep, const std::string& value,
                      const std::function<std::string(size_t)>& element) {
  std::function<std::string(const te::Expr&)> print = [&](const te::Expr& e) -> std::string {
    switch (e->kind) {
      case te::ExprKind::Const:
        return backend::floatLiteral(e->value, te::DType::F32);
      case te::ExprKind::Access: {
        if (e->name == ep.contractionTensor) return value;
        for (size_t k = 0; k < ep.reads.size(); ++k)
          if (ep.reads[k].node == e.get()) return element(k);
        break;
      }
      case te::ExprKind::Unary:
        return backend::unaryC(e->unaryOp, e->type, print(e->operands[0]));
      case te::ExprKind::Binary:
        return backend::binaryC(e->binaryOp, e->type, print(e->operands[0]), print(e->operands[1]));
      case te::ExprKind::Select:
        return "(" + print(e->operands[0]) + " ? " + print(e->operands[1]) + " : " + print(e->operands[2]) +
               ")";
      default:
        break;
    }
    throw InternalError("graft-microkernel", "unexpected expression in an epilogue");
  };
  return print(ep.rhs);
}

}  // namespace tessel::microkernel
