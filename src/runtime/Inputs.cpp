#include "runtime/Inputs.h"

#include <algorithm>
#include <random>

namespace tessel::runtime {

namespace {

// Inputs read directly as an index (LUT(I(b, n), r)): the smallest extent
// they index, through casts.
void collectIndexExtents(const te::Expr& e, const te::Program& p, std::map<std::string, int64_t>& extents) {
  if (e->kind == te::ExprKind::Access) {
    const te::TensorDecl& t = p.tensor(e->name);
    for (size_t d = 0; d < e->operands.size(); ++d) {
      const te::ExprNode* idx = e->operands[d].get();
      while (idx->kind == te::ExprKind::Cast) idx = idx->operands[0].get();
      if (idx->kind != te::ExprKind::Access) continue;
      auto [it, fresh] = extents.try_emplace(idx->name, t.shape[d]);
      if (!fresh) it->second = std::min(it->second, t.shape[d]);
    }
  }
  for (const auto& o : e->operands) collectIndexExtents(o, p, extents);
}

}  // namespace

std::vector<Buffer> makeInputs(const te::Program& program, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, int64_t> indexExtents;
  for (const auto& s : program.stages) collectIndexExtents(s.rhs, program, indexExtents);
  std::vector<Buffer> inputs;
  for (const auto* t : program.inputs()) {
    Buffer b(t->dtype, t->shape);
    auto ext = indexExtents.find(t->name);
    if (ext != indexExtents.end() && t->dtype != te::DType::Bool) {
      b.randomizeIndices(rng, ext->second);
    } else {
      b.randomize(rng);
    }
    inputs.push_back(std::move(b));
  }
  return inputs;
}

std::map<std::string, Buffer> inputsByName(const te::Program& program, const std::vector<Buffer>& inputs) {
  std::map<std::string, Buffer> named;
  auto decls = program.inputs();
  for (size_t i = 0; i < decls.size() && i < inputs.size(); ++i) named.emplace(decls[i]->name, inputs[i]);
  return named;
}

}  // namespace tessel::runtime
