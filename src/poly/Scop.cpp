#include "poly/Scop.h"

#include <isl/set.h>

namespace tessel::poly {

const Statement& Scop::statement(const std::string& name) const {
  for (const auto& s : statements)
    if (s.name == name) return s;
  throw InternalError("scop", "unknown statement " + name);
}

double estimatedWork(const Scop& scop) {
  constexpr double kUpdateShare = 1.0 / 8;
  double work = 0;
  for (const auto& s : scop.statements) {
    isl::val count = isl::manage(isl_set_count_val(s.domain.get()));
    if (count.is_nan() || !count.is_int() || count.is_infty()) continue;
    work += static_cast<double>(count.get_num_si()) * (s.kind == StatementKind::Update ? kUpdateShare : 1.0);
  }
  return work;
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
