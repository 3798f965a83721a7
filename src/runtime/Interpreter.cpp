#include "runtime/Interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/InterpreterStage.h"

namespace tessel::runtime {

namespace {

const char* const kPass = "interpreter";

std::string shapeString(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + ")";
}

}  // namespace

std::map<std::string, Buffer> interpret(const te::Program& p, const std::map<std::string, Buffer>& inputs,
                                        std::map<std::string, double>* magnitudes) {
  for (const auto& [name, buf] : inputs) {
    const te::TensorDecl* d = p.findTensor(name);
    if (!d) userError("program '" + p.name + "' has no tensor named '" + name + "'");
    if (d->role == te::TensorRole::Temporary)
      userError("'" + name + "' is a temporary of '" + p.name + "' and cannot be given");
  }
  std::vector<TensorData> tensors;
  for (const auto& decl : p.tensors) {
    TESSEL_CHECK(decl.shapeKnown, kPass, "shape of " + decl.name + " is not inferred");
    TensorData t;
    t.decl = &decl;
    t.strides.assign(decl.shape.size(), 1);
    for (size_t d = decl.shape.size(); d-- > 1;) t.strides[d - 1] = t.strides[d] * decl.shape[d];
    t.values.assign(static_cast<size_t>(decl.numElements()), 0.0);
    auto it = inputs.find(decl.name);
    if (it == inputs.end()) {
      if (decl.role == te::TensorRole::Input)
        userError("missing input '" + decl.name + "' of '" + p.name + "'");
    } else {
      const Buffer& b = it->second;
      if (b.dtype() != decl.dtype || b.shape() != decl.shape)
        userError("buffer for '" + decl.name + "' is " + te::dtypeName(b.dtype()) + shapeString(b.shape()) +
                  " but the program declares " + te::dtypeName(decl.dtype) + shapeString(decl.shape));
      for (int64_t i = 0; i < b.size(); ++i) t.values[i] = b.get(i);
    }
    tensors.push_back(std::move(t));
  }
  for (const auto& s : p.stages) runStage(s, tensors);

  if (magnitudes)
    for (const auto& t : tensors) {
      double m = 0;
      for (double v : t.values)
        if (std::isfinite(v)) m = std::max(m, std::fabs(v));
      (*magnitudes)[t.decl->name] = m;
    }
  std::map<std::string, Buffer> result;
  for (const auto& t : tensors) {
    if (t.decl->role != te::TensorRole::Output) continue;
    Buffer b(t.decl->dtype, t.decl->shape);
    for (int64_t i = 0; i < b.size(); ++i) b.set(i, t.values[i]);
    result.emplace(t.decl->name, std::move(b));
  }
  return result;
}

}  // namespace tessel::runtime
