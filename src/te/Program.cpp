#include <sstream>

#include "tessel/te.h"

namespace tessel::te {

int64_t TensorDecl::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const TensorDecl* Program::findTensor(const std::string& n) const {
  for (const auto& t : tensors)
    if (t.name == n) return &t;
  return nullptr;
}

TensorDecl* Program::findTensor(const std::string& n) {
  for (auto& t : tensors)
    if (t.name == n) return &t;
  return nullptr;
}

const TensorDecl& Program::tensor(const std::string& n) const {
  const TensorDecl* t = findTensor(n);
  TESSEL_CHECK(t != nullptr, "te", "unknown tensor " + n);
  return *t;
}

namespace {
std::vector<const TensorDecl*> withRole(const Program& p, TensorRole r) {
  std::vector<const TensorDecl*> out;
  for (const auto& t : p.tensors)
    if (t.role == r) out.push_back(&t);
  return out;
}
}  // namespace

std::vector<const TensorDecl*> Program::inputs() const { return withRole(*this, TensorRole::Input); }
std::vector<const TensorDecl*> Program::outputs() const { return withRole(*this, TensorRole::Output); }
std::vector<const TensorDecl*> Program::temporaries() const { return withRole(*this, TensorRole::Temporary); }

std::string toString(const Program& p) {
  std::ostringstream os;
  os << "program " << p.name << "\n";
  for (const auto& t : p.tensors) {
    const char* role = t.role == TensorRole::Input    ? "input"
                       : t.role == TensorRole::Output ? "output"
                                                      : "temp";
    os << "  " << role << " " << dtypeName(t.dtype) << " " << t.name << "(";
    for (size_t i = 0; i < t.shape.size(); ++i) os << (i ? "," : "") << t.shape[i];
    os << ")\n";
  }
  for (const auto& s : p.stages) {
    os << "  " << s.output << "(";
    for (size_t i = 0; i < s.indices.size(); ++i) os << (i ? ", " : "") << s.indices[i];
    os << ") " << reductionName(s.reduction) << (s.init ? "!" : "") << " " << toString(s.rhs);
    for (const auto& r : s.existsReads) os << " where exists " << toString(r);
    if (!s.ranges.empty()) {
      os << "   {";
      bool first = true;
      for (const auto& [v, r] : s.ranges) {
        os << (first ? "" : ", ") << v << " in " << r.lo << ":" << r.hi;
        first = false;
      }
      os << "}";
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace tessel::te
