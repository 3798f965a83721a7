#include "te/WidenAccumulators.h"

namespace tessel::te {

namespace {

std::string freshName(const Program& p, const std::string& base) {
  std::string name = base;
  for (int i = 2; p.findTensor(name); ++i) name = base + std::to_string(i);
  return name;
}

Expr pointOf(const std::string& tensor, DType t, const std::vector<std::string>& indices) {
  std::vector<Expr> idx;
  for (const auto& v : indices) idx.push_back(var(v));
  return access(tensor, t, idx);
}

// A plain copy stage `to(indices) = cast(from(indices))` over the LHS ranges of `like`.
Stage copyStage(const Stage& like, const std::string& to, DType toType, const std::string& from,
                DType fromType) {
  Stage c;
  c.output = to;
  c.indices = like.indices;
  c.rhs = cast(toType, pointOf(from, fromType, like.indices));
  for (const auto& v : like.indices) c.ranges[v] = like.ranges.at(v);
  c.loc = like.loc;
  return c;
}

}  // namespace

Program widenLowPrecisionAccumulators(const Program& program) {
  Program out = program;
  out.stages.clear();
  for (const Stage& s : program.stages) {
    const TensorDecl& target = program.tensor(s.output);
    bool narrow = target.dtype == DType::F16 || target.dtype == DType::BF16;
    if (s.reduction == Reduction::None || !narrow) {
      out.stages.push_back(s);
      continue;
    }
    TensorDecl acc;
    acc.name = freshName(out, s.output + "_acc");
    acc.dtype = DType::F32;
    acc.shape = target.shape;
    acc.shapeKnown = true;
    acc.role = TensorRole::Temporary;
    acc.loc = target.loc;
    out.tensors.push_back(acc);
    // Without `!` the reduction continues from the tensor's current values.
    if (!s.init) out.stages.push_back(copyStage(s, acc.name, DType::F32, s.output, target.dtype));
    Stage widened = s;
    widened.output = acc.name;
    out.stages.push_back(widened);
    out.stages.push_back(copyStage(s, s.output, target.dtype, acc.name, DType::F32));
  }
  return out;
}

}  // namespace tessel::te
