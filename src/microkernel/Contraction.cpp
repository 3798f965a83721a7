#include "microkernel/Contraction.h"

#include <cctype>
#include <set>

namespace tessel::microkernel {

std::string loneVariable(const te::AffineExpr& e) {
  bool lone = e.constant == 0 && e.coeffs.size() == 1 && e.coeffs.begin()->second == 1;
  return lone ? e.coeffs.begin()->first : "";
}

std::vector<LayoutDim> TensorAccess::layoutDims() const {
  if (!layout.empty()) return layout;
  std::vector<LayoutDim> dims;
  for (size_t k = 0; k < shape.size(); ++k) dims.push_back({k, LayoutDim::Part::Whole, 0});
  return dims;
}

std::vector<int64_t> TensorAccess::layoutShape() const {
  std::vector<int64_t> extents;
  for (const auto& d : layoutDims()) {
    int64_t extent = shape[d.subscript];
    if (d.part == LayoutDim::Part::Outer) extent = (extent + d.block - 1) / d.block;
    if (d.part == LayoutDim::Part::Inner) extent = d.block;
    extents.push_back(extent);
  }
  return extents;
}

int64_t TensorAccess::elements() const {
  int64_t count = 1;
  for (int64_t extent : layoutShape()) count *= extent;
  return count;
}

std::vector<int64_t> TensorAccess::layoutStrides() const {
  std::vector<int64_t> extents = layoutShape();
  std::vector<int64_t> strides(extents.size(), 1);
  for (size_t j = extents.size(); j-- > 1;) strides[j - 1] = strides[j] * extents[j];
  return strides;
}

int64_t TensorAccess::blockOf(size_t k) const {
  for (const auto& d : layout)
    if (d.subscript == k && d.part != LayoutDim::Part::Whole) return d.block;
  return 0;
}

int64_t TensorAccess::stride(const std::string& dim) const {
  std::vector<LayoutDim> dims = layoutDims();
  std::vector<int64_t> strides = layoutStrides();
  int64_t stride = 0;
  for (size_t j = 0; j < dims.size(); ++j) {
    if (dims[j].part == LayoutDim::Part::Outer) continue;
    auto it = subscripts[dims[j].subscript].coeffs.find(dim);
    if (it != subscripts[dims[j].subscript].coeffs.end()) stride += it->second * strides[j];
  }
  return stride;
}

int64_t TensorAccess::offset(const std::vector<std::pair<std::string, int64_t>>& point) const {
  std::vector<LayoutDim> dims = layoutDims();
  std::vector<int64_t> strides = layoutStrides();
  int64_t offset = 0;
  for (size_t j = 0; j < dims.size(); ++j) {
    const te::AffineExpr& subscript = subscripts[dims[j].subscript];
    int64_t index = subscript.constant;
    for (const auto& [dim, value] : point) {
      auto it = subscript.coeffs.find(dim);
      if (it != subscript.coeffs.end()) index += it->second * value;
    }
    // Indices are never negative inside the tensor; relative offsets inside a block may be.
    int64_t block = dims[j].block;
    if (dims[j].part == LayoutDim::Part::Outer)
      index = index >= 0 ? index / block : -((-index + block - 1) / block);
    if (dims[j].part == LayoutDim::Part::Inner) index = ((index % block) + block) % block;
    offset += index * strides[j];
  }
  return offset;
}

const ContractionDim* Contraction::dim(const std::string& name) const {
  for (const auto& d : dims)
    if (d.name == name) return &d;
  return nullptr;
}

std::string Contraction::dimNames() const {
  std::string s;
  for (const auto& d : dims) s += (s.empty() ? "" : ", ") + d.name;
  return s;
}

std::vector<std::string> Contraction::vectorizableDims(int lanes) const {
  auto contiguousOrInvariant = [](int64_t stride) { return stride == 0 || stride == 1; };
  std::vector<std::string> dimsFound;
  for (const auto& d : dims)
    if (!d.reduction && d.extent % lanes == 0 && output.stride(d.name) == 1 &&
        contiguousOrInvariant(lhs.stride(d.name)) && contiguousOrInvariant(rhs.stride(d.name)))
      dimsFound.push_back(d.name);
  return dimsFound;
}

double Contraction::flops() const {
  double points = 2;
  for (const auto& d : dims) points *= static_cast<double>(d.extent);
  return points;
}

namespace {

// The read as a TensorAccess, or why it cannot be one.
std::optional<TensorAccess> accessOf(const te::Program& program, const te::Expr& read, std::string& whyNot) {
  if (read->kind != te::ExprKind::Access || read->type != te::DType::F32) {
    whyNot = "its right-hand side is not a product of two f32 tensor reads";
    return std::nullopt;
  }
  const te::TensorDecl& t = program.tensor(read->name);
  TensorAccess a{read->name, t.shape, {}, {}};
  std::set<std::string> seen;
  for (const auto& index : read->operands) {
    auto affine = te::toAffine(index);
    if (!affine) {
      whyNot = "a subscript of " + read->name + " is not affine";
      return std::nullopt;
    }
    for (auto it = affine->coeffs.begin(); it != affine->coeffs.end();) {
      if (it->second == 0) {
        it = affine->coeffs.erase(it);
        continue;
      }
      if (!seen.insert(it->first).second) {
        whyNot = read->name + " uses " + it->first + " in two subscripts";
        return std::nullopt;
      }
      ++it;
    }
    a.subscripts.push_back(*affine);
  }
  return a;
}

std::string stageText(const te::Program& program, int stage) {
  const te::Stage& s = program.stages[static_cast<size_t>(stage)];
  std::string where = s.loc.known() ? " (line " + std::to_string(s.loc.line) + ")" : "";
  return s.output + where;
}

}  // namespace

Recognition recognizeContraction(const te::Program& program, int stageIndex) {
  const te::Stage& stage = program.stages.at(static_cast<size_t>(stageIndex));
  Recognition r;
  const te::TensorDecl& out = program.tensor(stage.output);
  if (stage.reduction != te::Reduction::Sum || out.dtype != te::DType::F32) {
    r.whyNot = "it is not an f32 sum reduction";
    return r;
  }
  if (!stage.existsReads.empty()) {
    r.whyNot = "it has a 'where exists' clause";
    return r;
  }
  const te::Expr& rhs = stage.rhs;
  if (rhs->kind != te::ExprKind::Binary || rhs->binaryOp != te::BinaryOp::Mul) {
    r.whyNot = "its right-hand side is not a product of two tensor reads";
    return r;
  }
  Contraction c;
  c.stage = stageIndex;
  c.loc = stage.loc;
  std::vector<std::string> vars = stage.indices;
  vars.insert(vars.end(), stage.reductionVars.begin(), stage.reductionVars.end());
  for (const auto& v : vars) {
    const te::Range& range = stage.ranges.at(v);
    if (range.lo != 0) {
      r.whyNot = "the range of " + v + " does not start at 0";
      return r;
    }
    c.dims.push_back({v, range.extent(), c.dims.size() >= stage.indices.size()});
  }
  auto lhs = accessOf(program, rhs->operands[0], r.whyNot);
  if (!lhs) return r;
  auto rhsRead = accessOf(program, rhs->operands[1], r.whyNot);
  if (!rhsRead) return r;
  if (lhs->tensor == stage.output || rhsRead->tensor == stage.output) {
    r.whyNot = "it reads its own output";
    return r;
  }
  c.lhs = *lhs;
  c.rhs = *rhsRead;
  c.output.tensor = stage.output;
  c.output.shape = out.shape;
  for (const auto& v : stage.indices) {
    te::AffineExpr e;
    e.coeffs[v] = 1;
    c.output.subscripts.push_back(e);
  }
  r.contraction = std::move(c);
  return r;
}

std::optional<Contraction> largestContraction(const te::Program& program) {
  std::optional<Contraction> largest;
  for (int i = 0; i < static_cast<int>(program.stages.size()); ++i) {
    Recognition r = recognizeContraction(program, i);
    if (r.contraction && (!largest || r.contraction->flops() > largest->flops())) largest = r.contraction;
  }
  return largest;
}

std::pair<std::string, size_t> splitSelection(const std::string& text) {
  size_t p = 0;
  while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
  size_t start = p;
  while (p < text.size() && (std::isalnum(static_cast<unsigned char>(text[p])) || text[p] == '_')) ++p;
  size_t end = p;
  while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
  if (end > start && p < text.size() && text[p] == ':') return {text.substr(start, end - start), p + 1};
  return {"", 0};
}

Contraction selectContraction(const te::Program& program, const std::string& tensor,
                              const std::string& origin) {
  std::vector<Contraction> found;
  std::string reasons;
  for (int i = 0; i < static_cast<int>(program.stages.size()); ++i) {
    if (!tensor.empty() && program.stages[static_cast<size_t>(i)].output != tensor) continue;
    Recognition r = recognizeContraction(program, i);
    if (r.contraction)
      found.push_back(*r.contraction);
    else
      reasons += "\n  " + stageText(program, i) + ": " + r.whyNot;
  }
  if (!tensor.empty() && found.empty() && reasons.empty())
    userError(origin + ": no statement of the program defines '" + tensor + "'");
  if (found.empty())
    userError(origin + ": a scheme implements a contraction O(...) +=! A(...) * B(...) in f32 with affine " +
              "subscripts, and the program has none:" + reasons);
  if (found.size() > 1) {
    std::string names;
    for (const auto& c : found) names += (names.empty() ? "" : ", ") + stageText(program, c.stage);
    userError(origin + ": the program has several contractions (" + names +
              "); name one before the scheme, as in \"" +
              program.stages[static_cast<size_t>(found[0].stage)].output + ": R_...\"");
  }
  return found[0];
}

}  // namespace tessel::microkernel
