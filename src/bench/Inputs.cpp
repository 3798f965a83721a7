#include "bench/Inputs.h"

#include <algorithm>
#include <random>

namespace tessel::bench {

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

std::vector<runtime::Buffer> makeInputs(const te::Program& p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, int64_t> indexExtents;
  for (const auto& s : p.stages) collectIndexExtents(s.rhs, p, indexExtents);
  std::vector<runtime::Buffer> inputs;
  for (const auto* t : p.inputs()) {
    runtime::Buffer b(t->dtype, t->shape);
    auto ext = indexExtents.find(t->name);
    if (ext != indexExtents.end() && t->dtype != te::DType::Bool) {
      b.randomizeIndices(rng, ext->second);
    } else {
      b.randomize(rng);
    }
    inputs.push_back(b);
  }
  return inputs;
}

std::map<std::string, runtime::Buffer> byName(const te::Program& p,
                                              const std::vector<runtime::Buffer>& inputs) {
  std::map<std::string, runtime::Buffer> named;
  auto decls = p.inputs();
  for (size_t i = 0; i < decls.size() && i < inputs.size(); ++i) named.emplace(decls[i]->name, inputs[i]);
  return named;
}

}  // namespace tessel::bench
