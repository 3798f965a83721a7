#include "microkernel/BoundScheme.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <set>

namespace tessel::microkernel {

namespace {

// A rule of the contraction or the machine that a scheme breaks. Binding
// stops at the first one; tryBindScheme returns it, bindScheme throws it.
// Only this type is caught, so that nothing else (a bug) reads as a rule.
struct BrokenRule {
  UserError error;
};

[[noreturn]] void breaks(const Scheme& scheme, const Specifier& spec, const std::string& reason) {
  throw BrokenRule{schemeErrorAt(scheme, spec, reason)};
}

// Past this many multiply-adds per step the unrolled tile is code bloat, not a register tile.
constexpr size_t kMaxUnrolledProducts = 512;

int64_t factorValue(const Factor& f, const Bindings& bindings) {
  if (f.param.empty()) return f.value;
  auto it = bindings.find(f.param);
  return it == bindings.end() ? 0 : it->second;
}

int64_t elementOffset(const TensorAccess& access, const Extents& a, const Extents& b) {
  std::vector<std::pair<std::string, int64_t>> point(a.begin(), a.end());
  point.insert(point.end(), b.begin(), b.end());
  return access.offset(point) - access.offset({});
}

}  // namespace

VectorIsa vectorIsaNamed(const std::string& name) {
  if (name == "avx512") return {"avx512", 16, 32};
  if (name == "avx2") return {"avx2", 8, 16};
  return {"", 1, 16};
}

std::vector<int64_t> distinctOffsets(const TensorAccess& access, const RegisterTileShape& tile,
                                     const Extents& step) {
  std::vector<int64_t> offsets;
  for (const auto& point : tile.accumulators) {
    int64_t offset = elementOffset(access, point, step);
    if (std::find(offsets.begin(), offsets.end(), offset) == offsets.end()) offsets.push_back(offset);
  }
  return offsets;
}

bool keepsLeftOperand(const Contraction& c, const RegisterTileShape& tile) {
  Extents first = tile.steps.empty() ? Extents{} : tile.steps.front();
  return distinctOffsets(c.lhs, tile, first).size() <= distinctOffsets(c.rhs, tile, first).size();
}

RegisterNeeds registerNeeds(const Contraction& c, const RegisterTileShape& tile, const VectorIsa& isa) {
  Extents first = tile.steps.empty() ? Extents{} : tile.steps.front();
  size_t lhsValues = distinctOffsets(c.lhs, tile, first).size();
  size_t rhsValues = distinctOffsets(c.rhs, tile, first).size();
  RegisterNeeds needs;
  needs.accumulators = static_cast<int>(tile.accumulators.size());
  needs.kept = static_cast<int>(std::min(lhsValues, rhsValues));
  // Streamed values that several unrolled steps read (a window slid along the
  // unrolled rows: rows 2h + r of a stride-2 convolution unrolled over r and
  // h): compilers load each once and keep it from its first step to its last
  // (resnet_7's 3 x 14 x 2 tile spilled to the stack: 1.2 ms against 1.0 ms
  // for 14 x 2 tiles).
  const TensorAccess& streamed = lhsValues <= rhsValues ? c.rhs : c.lhs;  // keepsLeftOperand's rule
  std::map<int64_t, size_t> stepsReading;
  for (const Extents& step : tile.steps)
    for (int64_t offset : distinctOffsets(streamed, tile, step)) ++stepsReading[offset];
  for (const auto& [offset, steps] : stepsReading) needs.sharedStreamed += steps > 1;
  needs.streamed = streamedRegisters(isa, needs.kept);
  return needs;
}

int registersNeeded(const Contraction& c, const RegisterTileShape& tile, const VectorIsa& isa) {
  return registerNeeds(c, tile, isa).total();
}

int streamedRegisters(const VectorIsa& isa, int uses) { return isa.name == "avx512" && uses <= 1 ? 0 : 1; }

Extents BoundScheme::extentsFrom(size_t first, const Bindings& bindings) const {
  if (first >= scheme.specs.size()) {
    Extents ones;
    for (const auto& d : contraction->dims) ones[d.name] = 1;
    return ones;
  }
  const Specifier& s = scheme.specs[first];
  if (s.kind != SpecKind::Seq) {
    Extents e = extentsFrom(first + 1, bindings);
    e[s.dim] *= trips(first, bindings);
    return e;
  }
  Extents total;
  for (const auto& [repetitions, value] : s.branches) {
    Bindings inner = bindings;
    inner[s.param] = value;
    Extents e = extentsFrom(first + 1, inner);
    if (total.empty()) {
      total = e;
      total[s.dim] = 0;
    }
    total[s.dim] += repetitions * e[s.dim];
  }
  return total;
}

int64_t BoundScheme::trips(size_t index, const Bindings& bindings) const {
  const Specifier& s = scheme.specs[index];
  switch (s.kind) {
    case SpecKind::R: {
      int64_t inner = extentsFrom(index + 1, bindings)[s.dim];
      return inner > 0 ? contraction->dim(s.dim)->extent / inner : 0;
    }
    case SpecKind::T:
    case SpecKind::U:
      return factorValue(s.factor, bindings);
    case SpecKind::V:
      return s.factor.value == 0 && s.factor.param.empty() ? isa.lanes : factorValue(s.factor, bindings);
    case SpecKind::Seq:
    case SpecKind::P:  // never among the bound loops
    case SpecKind::L:
      break;
  }
  return 0;
}

RegisterTileShape BoundScheme::registerTile(const Bindings& bindings) const {
  RegisterTileShape tile;
  tile.accumulators = {Extents{}};
  tile.steps = {Extents{}};
  for (size_t i = registerTileStart; i < scheme.specs.size(); ++i) {
    const Specifier& s = scheme.specs[i];
    if (s.kind == SpecKind::V) {
      tile.vectorDim = s.dim;
      tile.lanes = static_cast<int>(trips(i, bindings));
      continue;
    }
    int64_t step = extentsFrom(i + 1, bindings)[s.dim];
    auto& points = contraction->dim(s.dim)->reduction ? tile.steps : tile.accumulators;
    std::vector<Extents> unrolled;
    for (const auto& p : points)
      for (int64_t u = 0; u < trips(i, bindings); ++u) {
        Extents q = p;
        q[s.dim] += u * step;
        unrolled.push_back(q);
      }
    points = std::move(unrolled);
  }
  return tile;
}

bool BoundScheme::outputLaidOut() const {
  return std::find(layouts.begin(), layouts.end(), contraction->output.tensor) != layouts.end();
}

size_t BoundScheme::accumulationStart(size_t first) const {
  size_t start = registerTileStart;
  while (start > first) {
    const Specifier& s = scheme.specs[start - 1];
    if (s.kind == SpecKind::Seq || !contraction->dim(s.dim)->reduction) break;
    --start;
  }
  return start;
}

std::vector<Bindings> BoundScheme::allBindings() const {
  std::vector<Bindings> all = {Bindings{}};
  for (const auto& s : scheme.specs) {
    if (s.kind != SpecKind::Seq) continue;
    std::vector<Bindings> next;
    for (const auto& b : all)
      for (const auto& branch : s.branches) {
        Bindings n = b;
        n[s.param] = branch.second;
        next.push_back(n);
      }
    all = std::move(next);
  }
  return all;
}

namespace {

class SchemeChecker {
 public:
  SchemeChecker(BoundScheme& b) : b_(b), c_(*b.contraction), specs_(b.scheme.specs) {}

  void check() {
    checkSpecifiersAlone();
    checkVectorAccesses();
    checkDivisibility(0, {});
    checkCoverage();
    checkRegisterTile();
  }

 private:
  [[noreturn]] void fail(const Specifier& s, const std::string& reason) { breaks(b_.scheme, s, reason); }

  void checkSpecifiersAlone() {
    std::set<std::string> bound, seen;
    b_.registerTileStart = specs_.size();
    for (size_t i = 0; i < specs_.size(); ++i) {
      const Specifier& s = specs_[i];
      const ContractionDim* d = c_.dim(s.dim);
      if (!d) fail(s, "'" + s.dim + "' is not a dimension of the contraction (" + c_.dimNames() + ")");
      bool inTile = s.kind == SpecKind::U || s.kind == SpecKind::V;
      if (inTile && b_.registerTileStart == specs_.size()) b_.registerTileStart = i;
      if (!inTile && b_.registerTileStart < specs_.size())
        fail(s, toString(s) + " is inside the register tile: U and V specifiers must come last");
      if (s.kind == SpecKind::V) {
        if (i + 1 != specs_.size()) fail(s, "V must be the innermost specifier");
        if (d->reduction)
          fail(s, "V_" + s.dim + " vectorizes a reduction dimension; vectorize one of the output's");
        if (b_.isa.name.empty())
          fail(s, "V needs a vector instruction set (AVX2 or AVX-512); this machine has none");
        if (s.factor.value > b_.isa.lanes)
          fail(s, toString(s) + " asks for " + std::to_string(s.factor.value) + " lanes; a " + b_.isa.name +
                      " vector has " + std::to_string(b_.isa.lanes));
      }
      if (s.kind == SpecKind::R && seen.count(s.dim))
        fail(s, "R_" + s.dim + " must be the outermost specifier along " + s.dim);
      if ((s.kind == SpecKind::T || s.kind == SpecKind::U || s.kind == SpecKind::V) &&
          !s.factor.param.empty() && !bound.count(s.factor.param))
        fail(s, "'" + s.factor.param + "' is not bound by an enclosing lambda");
      if (s.kind == SpecKind::Seq && !bound.insert(s.param).second)
        fail(s, "the lambda parameter '" + s.param + "' is already bound");
      seen.insert(s.dim);
    }
  }

  // R's divisibility and lambdas whose branches agree, under every binding.
  void checkDivisibility(size_t first, const Bindings& bindings) {
    for (size_t i = first; i < specs_.size(); ++i) {
      const Specifier& s = specs_[i];
      if (s.kind == SpecKind::R) {
        int64_t inner = b_.extentsFrom(i + 1, bindings)[s.dim];
        int64_t extent = c_.dim(s.dim)->extent;
        if (extent % inner != 0)
          fail(s, "the specifiers inside R_" + s.dim + " cover " + std::to_string(inner) + " along " + s.dim +
                      ", which does not divide its extent " + std::to_string(extent));
      }
      if (s.kind != SpecKind::Seq) continue;
      Extents first;
      for (const auto& [repetitions, value] : s.branches) {
        Bindings inner = bindings;
        inner[s.param] = value;
        checkDivisibility(i + 1, inner);
        Extents e = b_.extentsFrom(i + 1, inner);
        if (first.empty()) first = e;
        for (const auto& [dim, extent] : e)
          if (dim != s.dim && extent != first[dim])
            fail(s, "the lambda's loops cover different extents along " + dim + " (" +
                        std::to_string(first[dim]) + " and " + std::to_string(extent) + ")");
      }
      return;
    }
  }

  void checkCoverage() {
    Extents covered = b_.extentsFrom(0, {});
    for (const auto& d : c_.dims) {
      if (covered[d.name] == d.extent) continue;
      auto mention =
          std::find_if(specs_.begin(), specs_.end(), [&](const Specifier& s) { return s.dim == d.name; });
      std::string reason = "the scheme covers " + std::to_string(covered[d.name]) + " along " + d.name +
                           ", whose extent is " + std::to_string(d.extent);
      if (mention == specs_.end())
        reason += " (add R_" + d.name + " or T_{" + std::to_string(d.extent) + "," + d.name + "})";
      fail(mention == specs_.end() ? specs_.front() : *mention, reason);
    }
  }

  void checkVectorAccesses() {
    if (specs_.empty() || specs_.back().kind != SpecKind::V) return;
    const Specifier& v = specs_.back();
    if (c_.output.stride(v.dim) != 1)
      fail(v, "V_" + v.dim + " needs the output " + c_.output.tensor + " contiguous along " + v.dim +
                  " (its stride there is " + std::to_string(c_.output.stride(v.dim)) + "; an L_" +
                  c_.output.tensor + " with " + v.dim + " last writes it so)");
    for (const TensorAccess* a : {&c_.lhs, &c_.rhs}) {
      int64_t stride = a->stride(v.dim);
      if (stride != 0 && stride != 1)
        fail(v, "V_" + v.dim + " needs " + a->tensor + " contiguous or invariant along " + v.dim +
                    " (its stride there is " + std::to_string(stride) + ")");
    }
  }

  void checkRegisterTile() {
    for (const auto& bindings : b_.allBindings()) {
      RegisterTileShape tile = b_.registerTile(bindings);
      const Specifier& at = specs_[std::min(b_.registerTileStart, specs_.size() - 1)];
      if (!tile.vectorDim.empty() && tile.lanes > b_.isa.lanes)
        fail(specs_.back(), toString(specs_.back()) + " asks for " + std::to_string(tile.lanes) +
                                " lanes; a " + b_.isa.name + " vector has " + std::to_string(b_.isa.lanes));
      if (!tile.vectorDim.empty() && tile.lanes < b_.isa.lanes && b_.isa.name != "avx512")
        fail(specs_.back(), toString(specs_.back()) + ": a vector of " + std::to_string(tile.lanes) +
                                " lanes out of " + std::to_string(b_.isa.lanes) +
                                " needs AVX-512's masked loads and stores");
      size_t products = tile.accumulators.size() * tile.steps.size();
      if (products > kMaxUnrolledProducts)
        fail(at, "the register tile unrolls " + std::to_string(products) +
                     " multiply-adds per step; at most " + std::to_string(kMaxUnrolledProducts));
      RegisterNeeds needs = registerNeeds(c_, tile, b_.isa);
      if (needs.total() > b_.isa.registers)
        fail(at, "the register tile needs " + std::to_string(needs.total()) + " registers (" +
                     std::to_string(needs.accumulators) + " accumulators, " + std::to_string(needs.kept) +
                     " kept operand values" +
                     (needs.sharedStreamed ? ", " + std::to_string(needs.sharedStreamed) +
                                                 " streamed values shared by unrolled steps"
                                           : "") +
                     (needs.streamed ? ", 1 streamed); " : "); ") +
                     (b_.isa.name.empty() ? std::string("scalar code") : b_.isa.name) + " has " +
                     std::to_string(b_.isa.registers));
    }
  }

  BoundScheme& b_;
  const Contraction& c_;
  const std::vector<Specifier>& specs_;
};

}  // namespace

namespace {

// Packed copies larger than this are not per-thread scratch any more.
constexpr double kMaxPackedBytes = 64.0 * 1024 * 1024;

// A P or L specifier names one operand of the contraction (L also its
// output), and an operand that is not also the other one. `does`/`done`:
// "packs" / "packed", "lays out" / "laid out".
void checkNamesOneOperand(const Scheme& scheme, const Specifier& spec, const Contraction& c,
                          const std::string& does, const std::string& done, bool outputToo = false) {
  std::string name = toString(spec).substr(0, 2) + spec.dim;  // P_X, L_X
  if (spec.dim == c.output.tensor && outputToo) return;
  if (spec.dim == c.output.tensor)
    breaks(scheme, spec,
           name + " " + does + " the output; only the operands (" + c.lhs.tensor + ", " + c.rhs.tensor +
               ") can be " + done);
  if (spec.dim != c.lhs.tensor && spec.dim != c.rhs.tensor)
    breaks(scheme, spec,
           "'" + spec.dim + "' is not an operand of the contraction (" + c.lhs.tensor + ", " + c.rhs.tensor +
               ")");
  if (c.lhs.tensor == c.rhs.tensor) breaks(scheme, spec, name + ": " + spec.dim + " is both operands");
}

// P specifiers out of the loop list, checked once the loops are.
void checkPackings(BoundScheme& b, const std::vector<std::pair<Specifier, size_t>>& found) {
  const Contraction& c = *b.contraction;
  std::set<std::string> packed;
  for (const auto& [p, before] : found) {
    const Scheme& s = b.original;
    checkNamesOneOperand(s, p, c, "packs", "packed");
    if (!packed.insert(p.dim).second) breaks(s, p, p.dim + " is packed twice");
    if (before > b.accumulationStart())
      breaks(s, p, "P_" + p.dim + " must come before the reduction loops right above the register tile");
    const TensorAccess& a = p.dim == c.lhs.tensor ? c.lhs : c.rhs;
    for (const auto& subscript : a.subscripts)
      for (const auto& [dim, coeff] : subscript.coeffs)
        if (coeff < 0) breaks(s, p, "P_" + p.dim + ": " + p.dim + " is read backwards along " + dim);
    for (const auto& bindings : b.allBindings()) {
      double bytes = 4 * footprintElements(a, b.extentsFrom(before, bindings));
      if (bytes > kMaxPackedBytes)
        breaks(s, p,
               "P_" + p.dim + " would copy " + std::to_string(static_cast<int64_t>(bytes)) +
                   " bytes per thread; at most 64 MiB");
    }
    b.packings.push_back({p.dim, before});
  }
}

// The L specifiers' layouts on a copy of the contraction, which the scheme then reads.
void applyLayouts(BoundScheme& b, const std::vector<Specifier>& layouts) {
  bool padding = b.contraction->lhs.padded() || b.contraction->rhs.padded();
  if (layouts.empty() && !padding) return;
  auto laidOut = std::make_shared<Contraction>(*b.contraction);
  const Scheme& scheme = b.original;
  for (const Specifier& l : layouts) {
    const Contraction& c = *b.contraction;
    checkNamesOneOperand(scheme, l, c, "lays out", "laid out", true);
    if (std::find(b.layouts.begin(), b.layouts.end(), l.dim) != b.layouts.end())
      breaks(scheme, l, l.dim + " is laid out twice");
    TensorAccess& a = l.dim == c.output.tensor ? laidOut->output
                      : l.dim == c.lhs.tensor  ? laidOut->lhs
                                               : laidOut->rhs;
    auto itemError = [&](const LayoutItem& item, const std::string& reason) {
      Specifier at = l;
      at.offset = item.offset;
      breaks(scheme, at, "L_" + l.dim + ": " + reason);
    };
    // Each subscript whole once, or split once each way by one block.
    std::vector<std::array<int, 3>> uses(a.subscripts.size(), {0, 0, 0});  // whole, outer, inner
    std::vector<int64_t> blocks(a.subscripts.size(), 0);
    for (const LayoutItem& item : l.layout) {
      size_t k = a.subscripts.size();
      if (item.dim.empty()) {
        if (item.position < 0 || item.position >= static_cast<int64_t>(a.subscripts.size()))
          itemError(item, "#" + std::to_string(item.position) + " is not a subscript position of " + l.dim +
                              " (it has " + std::to_string(a.subscripts.size()) + ")");
        k = static_cast<size_t>(item.position);
      } else {
        for (size_t j = 0; j < a.subscripts.size(); ++j)
          if (loneVariable(a.subscripts[j]) == item.dim) k = j;
        if (k == a.subscripts.size())
          itemError(item, "no subscript of " + l.dim + " is the loop variable '" + item.dim +
                              "' alone; name it by its position, as #p");
      }
      LayoutDim::Part part = item.split == '/'   ? LayoutDim::Part::Outer
                             : item.split == '%' ? LayoutDim::Part::Inner
                                                 : LayoutDim::Part::Whole;
      if (++uses[k][static_cast<size_t>(part)] > 1 || (uses[k][0] > 0 && uses[k][1] + uses[k][2] > 0))
        itemError(item, "subscript #" + std::to_string(k) + " appears twice");
      if (item.split) {
        if (loneVariable(a.subscripts[k]).empty())
          itemError(item, "only a subscript that is one loop variable can be split into blocks");
        if (a.padded() && a.padBefore[k] + a.padAfter[k] > 0)
          itemError(item,
                    "subscript #" + std::to_string(k) + " of " + l.dim +
                        " reads zero padding (its guard); a padded subscript cannot be split into blocks");
        if (blocks[k] != 0 && blocks[k] != item.block)
          itemError(item, "subscript #" + std::to_string(k) + " is split by " + std::to_string(blocks[k]) +
                              " and by " + std::to_string(item.block));
        blocks[k] = item.block;
      }
      a.layout.push_back({k, part, item.block});
    }
    for (size_t k = 0; k < uses.size(); ++k)
      if (uses[k][0] == 0 && (uses[k][1] == 0 || uses[k][2] == 0))
        breaks(scheme, l,
               "L_" + l.dim + " must list subscript #" + std::to_string(k) + " of " + l.dim +
                   (uses[k][1] + uses[k][2] == 0
                        ? ""
                        : " both as its block number (/b) and as its place in the block (%b)"));
    b.layouts.push_back(l.dim);
  }
  // A guarded operand is read from its zero-padded copy, in its own order unless an L_X says otherwise.
  for (const TensorAccess* a : {&laidOut->lhs, &laidOut->rhs})
    if (a->padded() && std::find(b.layouts.begin(), b.layouts.end(), a->tensor) == b.layouts.end())
      b.layouts.push_back(a->tensor);
  b.laidOut = laidOut;
  b.contraction = laidOut.get();
}

// Every register tile must lie inside one block along a split subscript: the
// micro-kernel addresses its elements at fixed offsets from the tile's first.
void checkLayoutBlocks(const BoundScheme& b, const std::vector<Specifier>& layouts) {
  for (const Packing& p : b.packings)
    for (const TensorAccess* a : {&b.contraction->lhs, &b.contraction->rhs})
      if (a->tensor == p.tensor && a->padded())
        for (const Specifier& s : b.original.specs)
          if (s.kind == SpecKind::P && s.dim == p.tensor)
            breaks(b.original, s,
                   "P_" + p.tensor + ": " + p.tensor +
                       " is read through its zero-padded copy (its guard), which is not packed");
  for (const Specifier& l : layouts) {
    if (std::any_of(b.packings.begin(), b.packings.end(),
                    [&](const Packing& p) { return p.tensor == l.dim; }))
      breaks(b.original, l, l.dim + " is both packed (P_" + l.dim + ") and laid out (L_" + l.dim + ")");
    const Contraction& c = *b.contraction;
    const TensorAccess& a = l.dim == c.output.tensor ? c.output : l.dim == c.lhs.tensor ? c.lhs : c.rhs;
    for (size_t k = 0; k < a.subscripts.size(); ++k) {
      int64_t block = a.blockOf(k);
      if (block == 0) continue;
      std::string dim = a.subscripts[k].coeffs.begin()->first;
      for (const auto& [start, span] : registerTileSpans(b, dim))
        if (start / block != (start + span - 1) / block)
          breaks(b.original, l,
                 "L_" + l.dim + " splits " + dim + " into blocks of " + std::to_string(block) +
                     ", but a register tile covers " + dim + " " + std::to_string(start) + ".." +
                     std::to_string(start + span - 1) + ", across a block boundary (make the block a " +
                     "multiple of the tile along " + dim + ")");
    }
  }
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> registerTileSpans(const BoundScheme& b, const std::string& dim) {
  std::set<std::pair<int64_t, int64_t>> spans;
  std::function<void(size_t, const Bindings&, int64_t)> walk = [&](size_t i, const Bindings& bindings,
                                                                   int64_t start) {
    if (i >= b.registerTileStart) {
      spans.insert({start, b.extentsFrom(i, bindings)[dim]});
      return;
    }
    const Specifier& s = b.scheme.specs[i];
    if (s.kind == SpecKind::Seq) {
      for (const auto& [repetitions, value] : s.branches) {
        Bindings inner = bindings;
        inner[s.param] = value;
        int64_t step = b.extentsFrom(i + 1, inner)[s.dim];
        if (s.dim != dim) {
          walk(i + 1, inner, start);
          continue;
        }
        for (int64_t r = 0; r < repetitions; ++r) walk(i + 1, inner, start + r * step);
        start += repetitions * step;
      }
      return;
    }
    if (s.dim != dim) return walk(i + 1, bindings, start);
    int64_t step = b.extentsFrom(i + 1, bindings)[dim];
    for (int64_t t = 0; t < b.trips(i, bindings); ++t) walk(i + 1, bindings, start + t * step);
  };
  walk(0, {}, 0);
  return {spans.begin(), spans.end()};
}

double footprintElements(const TensorAccess& access, const Extents& extents) {
  double elements = 1;
  for (const auto& subscript : access.subscripts) {
    double span = 1;
    for (const auto& [dim, coeff] : subscript.coeffs) {
      auto it = extents.find(dim);
      if (it != extents.end())
        span += static_cast<double>(coeff < 0 ? -coeff : coeff) * static_cast<double>(it->second - 1);
    }
    elements *= span;
  }
  return elements;
}

namespace {

BoundScheme bindOrBreak(const Contraction& contraction, const Scheme& scheme, const VectorIsa& isa) {
  BoundScheme b;
  b.contraction = &contraction;
  b.original = scheme;
  b.scheme = scheme;
  b.scheme.specs.clear();
  std::vector<std::pair<Specifier, size_t>> packings;
  std::vector<Specifier> layouts;
  for (const auto& s : scheme.specs) {
    if (s.kind == SpecKind::P)
      packings.emplace_back(s, b.scheme.specs.size());
    else if (s.kind == SpecKind::L)
      layouts.push_back(s);
    else
      b.scheme.specs.push_back(s);
  }
  if (b.scheme.specs.empty()) breaks(scheme, scheme.specs.front(), "a scheme needs loops, not only P and L");
  b.isa = isa;
  applyLayouts(b, layouts);
  SchemeChecker(b).check();
  checkPackings(b, packings);
  checkLayoutBlocks(b, layouts);
  return b;
}

}  // namespace

std::variant<BoundScheme, UserError> tryBindScheme(const Contraction& contraction, const Scheme& scheme,
                                                   const VectorIsa& isa) {
  try {
    return bindOrBreak(contraction, scheme, isa);
  } catch (const BrokenRule& broken) {
    return broken.error;
  }
}

BoundScheme bindScheme(const Contraction& contraction, const Scheme& scheme, const VectorIsa& isa) {
  std::variant<BoundScheme, UserError> bound = tryBindScheme(contraction, scheme, isa);
  if (const auto* error = std::get_if<UserError>(&bound)) throw *error;
  return std::get<BoundScheme>(std::move(bound));
}

}  // namespace tessel::microkernel
