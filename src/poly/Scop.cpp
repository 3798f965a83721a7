#include "poly/Scop.h"

namespace tessel::poly {

const Statement& Scop::statement(const std::string& name) const {
  for (const auto& s : statements)
    if (s.name == name) return s;
  throw InternalError("scop", "unknown statement " + name);
}

isl::union_set Scop::outputElements() const {
  isl::union_set out = isl::union_set::empty(domain.ctx());
  for (const te::TensorDecl* t : program->outputs()) {
    std::string dims;
    for (size_t i = 0; i < t->shape.size(); ++i) dims += (i ? ", i" : "i") + std::to_string(i);
    out = out.unite(isl::union_set(domain.ctx(), "{ " + t->name + "[" + dims + "] }"));
  }
  return out;
}

}  // namespace tessel::poly
