#include "poly/Scop.h"

namespace tessel::poly {

const Statement& Scop::statement(const std::string& name) const {
  for (const auto& s : statements)
    if (s.name == name) return s;
  throw InternalError("scop", "unknown statement " + name);
}

}  // namespace tessel::poly
