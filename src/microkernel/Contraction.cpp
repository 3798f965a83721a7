#include "microkernel/Contraction.h"

#include <algorithm>
#include <cctype>
#include <limits>
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

int64_t TensorAccess::paddedExtent(size_t k) const {
  return shape[k] + (padded() ? padBefore[k] + padAfter[k] : 0);
}

std::vector<int64_t> TensorAccess::layoutShape() const {
  std::vector<int64_t> extents;
  for (const auto& d : layoutDims()) {
    int64_t extent = paddedExtent(d.subscript);
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
    int64_t index = subscript.constant + (padded() ? padBefore[dims[j].subscript] : 0);
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
  TensorAccess a;
  a.tensor = read->name;
  a.shape = t.shape;
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

bool isZero(const te::Expr& e) {
  if (e->kind == te::ExprKind::Cast) return isZero(e->operands[0]);
  return e->kind == te::ExprKind::Const && e->value == 0;
}

// A factor of the product: a read, or `guard ? read : 0` (padding).
struct Factor {
  te::Expr read;
  te::Expr guard;  // null: unguarded
};
Factor factorOf(const te::Expr& e) {
  if (e->kind == te::ExprKind::Select && isZero(e->operands[2])) return {e->operands[1], e->operands[0]};
  return {e, nullptr};
}

te::AffineExpr difference(const te::AffineExpr& a, const te::AffineExpr& b, int64_t minus) {
  te::AffineExpr d = a;
  for (const auto& [v, c] : b.coeffs) d.coeffs[v] -= c;
  d.constant -= b.constant + minus;
  return d;
}

// The guard as affine conjuncts `e >= 0`, or nothing when it is not a
// conjunction of affine comparisons.
bool conjunctsOf(const te::Expr& guard, std::vector<te::AffineExpr>& out) {
  if (guard->kind != te::ExprKind::Binary) return false;
  te::BinaryOp op = guard->binaryOp;
  if (op == te::BinaryOp::And)
    return conjunctsOf(guard->operands[0], out) && conjunctsOf(guard->operands[1], out);
  auto a = te::toAffine(guard->operands[0]), b = te::toAffine(guard->operands[1]);
  if (!a || !b) return false;
  switch (op) {
    case te::BinaryOp::Ge:
      out.push_back(difference(*a, *b, 0));
      return true;
    case te::BinaryOp::Gt:
      out.push_back(difference(*a, *b, 1));
      return true;
    case te::BinaryOp::Le:
      out.push_back(difference(*b, *a, 0));
      return true;
    case te::BinaryOp::Lt:
      out.push_back(difference(*b, *a, 1));
      return true;
    case te::BinaryOp::Eq:
      out.push_back(difference(*a, *b, 0));
      out.push_back(difference(*b, *a, 0));
      return true;
    default:
      return false;
  }
}

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

// Bounds `e >= 0` on subscript `s` when e is a multiple of it plus a
// constant: the lowest (`lower`) or highest value it allows.
bool boundOn(const te::AffineExpr& e, const te::AffineExpr& s, int64_t& lower, int64_t& upper) {
  if (s.coeffs.empty() || e.coeffs.empty()) return false;
  // s.coeffs[v] * e == e.coeffs[v] * s + constant, for v any variable of s.
  const auto& [v, cs] = *s.coeffs.begin();
  auto it = e.coeffs.find(v);
  if (it == e.coeffs.end()) return false;
  int64_t ce = it->second;
  for (const auto& [w, c] : e.coeffs)
    if (c * cs != (s.coeffs.count(w) ? s.coeffs.at(w) : 0) * ce) return false;
  for (const auto& [w, c] : s.coeffs)
    if ((e.coeffs.count(w) ? e.coeffs.at(w) : 0) * cs != c * ce) return false;
  // e >= 0  <=>  sign(cs) * (ce * s + b) >= 0.
  int64_t sign = cs > 0 ? 1 : -1, a = sign * ce, b = sign * (cs * e.constant - ce * s.constant);
  if (a > 0) lower = std::max(lower, ceilDiv(-b, a));
  if (a < 0) upper = std::min(upper, floorDiv(b, -a));
  return true;
}

// The subscript's lowest and highest values over the rectangular domain.
std::pair<int64_t, int64_t> valueRange(const te::AffineExpr& s, const std::vector<ContractionDim>& dims) {
  int64_t lo = s.constant, hi = s.constant;
  for (const auto& [v, c] : s.coeffs)
    for (const auto& d : dims)
      if (d.name == v) (c > 0 ? hi : lo) += c * (d.extent - 1);
  return {lo, hi};
}

// Pads `a` with zeros where its subscripts leave the tensor, when the guard
// (its conjuncts) allows exactly the points inside; why not otherwise.
bool padToGuard(TensorAccess& a, const std::vector<te::AffineExpr>& conjuncts,
                const std::vector<ContractionDim>& dims, std::string& whyNot) {
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> lower(a.subscripts.size(), -kNone), upper(a.subscripts.size(), kNone);
  for (const auto& e : conjuncts) {
    bool bounds = false;
    for (size_t k = 0; k < a.subscripts.size() && !bounds; ++k)
      bounds = boundOn(e, a.subscripts[k], lower[k], upper[k]);
    if (!bounds) {
      whyNot = "the guard of " + a.tensor + " bounds something other than one of its subscripts";
      return false;
    }
  }
  std::vector<int64_t> before(a.subscripts.size(), 0), after(a.subscripts.size(), 0);
  for (size_t k = 0; k < a.subscripts.size(); ++k) {
    auto [lo, hi] = valueRange(a.subscripts[k], dims);
    // Over [lo, hi], the guard must allow what lies inside the tensor, no more, no less.
    int64_t inLo = std::max<int64_t>(lo, 0), inHi = std::min(hi, a.shape[k] - 1);
    int64_t okLo = std::max(lo, lower[k]), okHi = std::min(hi, upper[k]);
    bool same = (inLo > inHi && okLo > okHi) || (inLo == okLo && inHi == okHi);
    if (!same) {
      whyNot = conjuncts.empty()
                   ? "subscript #" + std::to_string(k) + " of " + a.tensor + " leaves the tensor"
                   : "the guard of " + a.tensor + " is not exactly the bounds of its subscript #" +
                         std::to_string(k) + " (only zero padding is in the class)";
      return false;
    }
    before[k] = std::max<int64_t>(0, -lo);
    after[k] = std::max<int64_t>(0, hi - (a.shape[k] - 1));
  }
  if (std::any_of(before.begin(), before.end(), [](int64_t p) { return p > 0; }) ||
      std::any_of(after.begin(), after.end(), [](int64_t p) { return p > 0; })) {
    a.padBefore = std::move(before);
    a.padAfter = std::move(after);
  }
  return true;
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
  Factor lhsFactor = factorOf(rhs->operands[0]), rhsFactor = factorOf(rhs->operands[1]);
  auto lhs = accessOf(program, lhsFactor.read, r.whyNot);
  if (!lhs) return r;
  auto rhsRead = accessOf(program, rhsFactor.read, r.whyNot);
  if (!rhsRead) return r;
  // Every read stays inside its tensor, or reads zero padding where its guard says.
  for (auto [access, guard] : {std::pair{&*lhs, lhsFactor.guard}, std::pair{&*rhsRead, rhsFactor.guard}}) {
    std::vector<te::AffineExpr> conjuncts;
    if (guard && !conjunctsOf(guard, conjuncts)) {
      r.whyNot = "the guard of " + access->tensor + " is not a conjunction of affine comparisons";
      return r;
    }
    if (!padToGuard(*access, conjuncts, c.dims, r.whyNot)) return r;
  }
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
