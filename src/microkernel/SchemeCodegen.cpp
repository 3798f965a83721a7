#include "microkernel/SchemeCodegen.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace tessel::microkernel {

namespace {

bool packsBeforeSpec(const BoundScheme& b, size_t index) {
  return std::any_of(b.packings.begin(), b.packings.end(),
                     [&](const Packing& p) { return p.before == index; });
}

// How the micro-kernel spells its vector operations.
struct VectorSpelling {
  std::string type, load, store, broadcast, fma, zero;
};

VectorSpelling spellingFor(const VectorIsa& isa) {
  if (isa.name == "avx512")
    return {"__m512",         "_mm512_loadu_ps", "_mm512_storeu_ps",
            "_mm512_set1_ps", "_mm512_fmadd_ps", "_mm512_setzero_ps"};
  return {"__m256",         "_mm256_loadu_ps", "_mm256_storeu_ps",
          "_mm256_set1_ps", "_mm256_fmadd_ps", "_mm256_setzero_ps"};
}

// How the code reads one operand: the tensor itself, or a packed copy of
// its box (P_X), whose offsets count only the loops inside the packing.
struct OperandView {
  TensorAccess access;
  std::string base;                 // the pointer the offsets apply to
  std::set<std::string> outerVars;  // loop variables fixed where the copy was made
};

class SchemeEmitter {
 public:
  SchemeEmitter(const BoundScheme& b, const SchemeCodeOptions& o) : b_(b), c_(*b.contraction), options_(o) {}

  std::string emit() {
    std::ostringstream body;
    std::swap(os_, body);
    State state;
    state.views = {{c_.lhs, "lhs", {}}, {c_.rhs, "rhs", {}}};
    emitFrom(0, {}, state, 1, parallelLoops());
    std::swap(os_, body);
    // Each packing's per-thread buffer, grown as needed and kept for the next call.
    for (size_t n = 0; n < packCount_; ++n)
      os_ << "static _Thread_local float* " << options_.functionName << "_pack" << n << ";\n"
          << "static _Thread_local long " << options_.functionName << "_pack" << n << "_size;\n";
    os_ << "static int " << options_.functionName
        << "(float* restrict out, const float* restrict lhs, const float* restrict rhs";
    if (options_.epilogue)
      for (size_t t = 0; t < options_.epilogue->tensors().size(); ++t)
        os_ << ", const float* restrict e" << t;
    os_ << ") {\n";
    os_ << "  /* " << toString(b_.original) << " */\n";
    if (packCount_ > 0) os_ << "  int failed = 0;\n";
    os_ << body.str();
    os_ << "  return " << (packCount_ > 0 ? "__atomic_load_n(&failed, __ATOMIC_RELAXED)" : "0") << ";\n}\n";
    return os_.str();
  }

 private:
  using Vars = std::map<std::string, std::vector<std::string>>;
  struct State {
    Vars vars;                       // each dimension's index is the sum of the loop variables along it
    std::vector<OperandView> views;  // lhs, rhs
  };

  int parallelLoops() {
    if (!options_.parallel) return 0;
    ParallelLoops p = parallelLoopsOf(b_);
    if (p.lambdaBranches && p.iterations > 1) parallelLambda_ = static_cast<size_t>(p.loops);
    return p.iterations > 1 && !p.lambdaBranches ? p.loops : 0;
  }

  bool packsBefore(size_t index) const { return packsBeforeSpec(b_, index); }

  // A vector load of the tile's lanes: whole, or masked (AVX-512) for a partial vector.
  std::string vectorLoad(const RegisterTileShape& tile, const std::string& address) const {
    if (tile.lanes < b_.isa.lanes) return "_mm512_maskz_loadu_ps(" + laneMask(tile) + ", " + address + ")";
    return spellingFor(b_.isa).load + "(" + address + ")";
  }
  static std::string laneMask(const RegisterTileShape& tile) {
    return "(__mmask16)" + std::to_string((1u << tile.lanes) - 1) + "u";
  }

  static std::string pad(int depth) { return std::string(2 * static_cast<size_t>(depth), ' '); }

  std::string indexOf(const std::string& dim, const Vars& vars, const std::set<std::string>& skip) const {
    std::string text;
    auto it = vars.find(dim);
    if (it != vars.end())
      for (const auto& v : it->second)
        if (!skip.count(v)) text += (text.empty() ? "" : " + ") + v;
    return text;
  }

  // The element offset of `access` where the dimensions have the loop
  // variables' values (those in `skip` counted as 0).
  std::string offsetOf(const TensorAccess& access, const Vars& vars,
                       const std::set<std::string>& skip = {}) const {
    std::string text = std::to_string(access.offset({}));
    // A split subscript is one variable (BoundScheme checks it): its block
    // number and its place in the block each have their own stride.
    std::vector<LayoutDim> dims = access.layoutDims();
    std::vector<int64_t> strides = access.layoutStrides();
    std::map<std::string, std::pair<int64_t, int64_t>> split;  // dim -> (block, outer stride)
    for (size_t j = 0; j < dims.size(); ++j)
      if (dims[j].part == LayoutDim::Part::Outer)
        split[access.subscripts[dims[j].subscript].coeffs.begin()->first] = {dims[j].block, strides[j]};
    for (const auto& d : c_.dims) {
      int64_t stride = access.stride(d.name);
      std::string index = indexOf(d.name, vars, skip);
      if (index.empty()) continue;
      auto it = split.find(d.name);
      if (it != split.end()) {
        auto [block, outer] = it->second;
        text += " + " + std::to_string(outer) + "L * ((" + index + ") / " + std::to_string(block) + ") + " +
                std::to_string(stride) + "L * ((" + index + ") % " + std::to_string(block) + ")";
        continue;
      }
      if (stride != 0) text += " + " + std::to_string(stride) + "L * (" + index + ")";
    }
    return text;
  }

  std::string loopVar(const Specifier& s, size_t index) const {
    return "i_" + s.dim + "_" + std::to_string(index);
  }

  // The packings placed before specifier `index`: each copies its operand's
  // box under the loops so far into the thread's buffer, then reads it there.
  void emitPackings(size_t index, const Bindings& bindings, State& state, int depth) {
    for (const auto& packing : b_.packings) {
      if (packing.before != index) continue;
      OperandView& view = state.views[packing.tensor == c_.lhs.tensor ? 0 : 1];
      Extents inner = b_.extentsFrom(index, bindings);
      TensorAccess packed;
      packed.tensor = view.access.tensor;
      packed.subscripts = view.access.subscripts;
      for (auto& subscript : packed.subscripts) {
        int64_t span = 1;
        for (const auto& [dim, coeff] : subscript.coeffs) span += coeff * (inner[dim] - 1);
        packed.shape.push_back(span);
        subscript.constant = 0;
      }
      int64_t elements = 1;
      for (int64_t span : packed.shape) elements *= span;
      std::string buffer = options_.functionName + "_pack" + std::to_string(packCount_);
      std::string local = "pack" + std::to_string(packCount_++);
      std::string p = pad(depth);
      os_ << p << "/* P_" << packing.tensor << ": its " << elements << "-element box, packed */\n";
      os_ << p << "if (" << buffer << "_size < " << elements << ") {\n"
          << p << "  free(" << buffer << ");\n"
          << p << "  " << buffer << " = (float*)aligned_alloc(64, " << (elements * 4 + 63) / 64 * 64 << ");\n"
          << p << "  " << buffer << "_size = " << buffer << " ? " << elements << " : 0;\n"
          << p << "}\n";
      // Threads of the parallel loop may fail together: the flag is written atomically.
      os_ << p << "if (!" << buffer << ") __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);\n";
      os_ << p << "float* restrict " << local << " = " << buffer << " ? " << buffer << " : 0;\n";
      os_ << p << "if (" << local << ") {\n";
      os_ << p << "  const float* restrict from = " << view.base << " + "
          << offsetOf(view.access, state.vars, view.outerVars) << ";\n";
      // The box row by row: the last subscript innermost, contiguous on both sides.
      std::string to = "0", source = "0";
      std::vector<int64_t> tensorStrides(packed.shape.size(), 1);
      for (size_t k = view.access.shape.size(); k-- > 1;)
        tensorStrides[k - 1] = tensorStrides[k] * view.access.shape[k];
      for (size_t k = 0; k < packed.shape.size(); ++k) {
        std::string q = "q" + std::to_string(k);
        os_ << pad(depth + 1 + static_cast<int>(k)) << "for (long " << q << " = 0; " << q << " < "
            << packed.shape[k] << "; ++" << q << ")\n";
        to = "(" + to + ") * " + std::to_string(packed.shape[k]) + " + " + q;
        source += " + " + std::to_string(tensorStrides[k]) + "L * " + q;
      }
      os_ << pad(depth + 1 + static_cast<int>(packed.shape.size())) << local << "[" << to << "] = from["
          << source << "];\n";
      os_ << p << "}\n";
      std::set<std::string> outer;
      for (const auto& [dim, names] : state.vars) outer.insert(names.begin(), names.end());
      view = {packed, local, outer};
    }
  }

  void emitFrom(size_t first, const Bindings& bindings, State state, int depth, int parallel) {
    if (packsBefore(first)) {
      os_ << pad(depth) << "{\n";
      emitPackings(first, bindings, state, depth + 1);
      // A failed allocation skips the work: the caller reports it.
      os_ << pad(depth + 1) << "if (!__atomic_load_n(&failed, __ATOMIC_RELAXED)) {\n";
      emitAt(first, bindings, state, depth + 2, parallel);
      os_ << pad(depth + 1) << "}\n" << pad(depth) << "}\n";
      return;
    }
    emitAt(first, bindings, state, depth, parallel);
  }

  void emitAt(size_t first, const Bindings& bindings, State state, int depth, int parallel) {
    if (first == b_.accumulationStart(first)) return emitMicroKernel(first, bindings, state, depth);
    const Specifier& s = b_.scheme.specs[first];
    std::string var = loopVar(s, first);
    if (s.kind == SpecKind::Seq) {
      int64_t start = 0;
      for (const auto& [repetitions, value] : s.branches) {
        Bindings inner = bindings;
        inner[s.param] = value;
        int64_t step = b_.extentsFrom(first + 1, inner)[s.dim];
        os_ << pad(depth) << "/* " << s.param << " = " << value << " */\n";
        emitLoop(var, start, start + repetitions * step, step, depth,
                 first == parallelLambda_ && repetitions > 1 ? 1 : 0);
        State innerState = state;
        innerState.vars[s.dim].push_back(var);
        emitFrom(first + 1, inner, innerState, depth + 1, 0);
        os_ << pad(depth) << "}\n";
        start += repetitions * step;
      }
      return;
    }
    int64_t step = b_.extentsFrom(first + 1, bindings)[s.dim];
    emitLoop(var, 0, b_.trips(first, bindings) * step, step, depth, parallel);
    state.vars[s.dim].push_back(var);
    emitFrom(first + 1, bindings, state, depth + 1, 0);  // collapse(parallel) covers the loops inside
    os_ << pad(depth) << "}\n";
  }

  void emitLoop(const std::string& var, int64_t begin, int64_t end, int64_t step, int depth, int collapse) {
    if (collapse > 0)
      os_ << pad(depth) << "#pragma omp parallel for"
          << (collapse > 1 ? " collapse(" + std::to_string(collapse) + ")" : "") << " schedule(static)\n";
    os_ << pad(depth) << "for (long " << var << " = " << begin << "; " << var << " < " << end << "; " << var
        << " += " << step << ") {\n";
  }

  // Accumulators loaded from the output, the reduction loops from `first` to
  // the register tile, the unrolled products, the accumulators stored back.
  void emitMicroKernel(size_t first, const Bindings& bindings, State state, int depth) {
    RegisterTileShape tile = b_.registerTile(bindings);
    bool vector = !tile.vectorDim.empty();
    VectorSpelling v = spellingFor(b_.isa);
    std::string type = vector ? v.type : "float";
    std::string p = pad(depth);
    const Epilogue* epilogue = options_.epilogue;
    const TensorAccess& output = epilogue ? epilogue->output : c_.output;
    os_ << p << "{\n";
    os_ << p << "  float* restrict o = out + " << offsetOf(output, state.vars) << ";\n";
    for (size_t a = 0; a < tile.accumulators.size(); ++a) {
      int64_t offset =
          output.offset({tile.accumulators[a].begin(), tile.accumulators[a].end()}) - output.offset({});
      std::string init = epilogue || options_.startsAtZero
                             ? (vector ? v.zero + "()" : "0.0f")
                             : (vector ? vectorLoad(tile, "o + " + std::to_string(offset))
                                       : "o[" + std::to_string(offset) + "]");
      os_ << p << "  " << type << " acc" << a << " = " << init << ";\n";
    }
    int inner = depth + 1;
    for (size_t i = first; i < b_.registerTileStart; ++i) {
      const Specifier& s = b_.scheme.specs[i];
      std::string var = loopVar(s, i);
      int64_t step = b_.extentsFrom(i + 1, bindings)[s.dim];
      // Kept rolled: GCC unrolls short reduction loops (a convolution's 3 x 3
      // window) completely around the register tile, then interleaves the
      // copies and spills accumulators (a 6 x 2 tile of a 3 x 3 convolution:
      // 47 -> 32 ms). The scheme's U specifiers are the unrolling it asks for.
      os_ << pad(inner) << "#pragma GCC unroll 1\n";
      emitLoop(var, 0, b_.trips(i, bindings) * step, step, inner, 0);
      state.vars[s.dim].push_back(var);
      ++inner;
    }
    std::string q = pad(inner);
    const OperandView& lhs = state.views[0];
    const OperandView& rhs = state.views[1];
    os_ << q << "const float* restrict a = " << lhs.base << " + "
        << offsetOf(lhs.access, state.vars, lhs.outerVars) << ";\n";
    os_ << q << "const float* restrict b = " << rhs.base << " + "
        << offsetOf(rhs.access, state.vars, rhs.outerVars) << ";\n";
    bool keepLeft = keepsLeftOperand(c_, tile);
    const TensorAccess& kept = keepLeft ? lhs.access : rhs.access;
    const TensorAccess& streamed = keepLeft ? rhs.access : lhs.access;
    std::string keptPtr = keepLeft ? "a" : "b", streamedPtr = keepLeft ? "b" : "a";
    auto value = [&](const TensorAccess& access, const std::string& ptr, int64_t offset) {
      std::string element = ptr + "[" + std::to_string(offset) + "]";
      if (!vector) return element;
      return access.stride(tile.vectorDim) == 0 ? v.broadcast + "(" + element + ")"
                                                : vectorLoad(tile, ptr + " + " + std::to_string(offset));
    };
    auto offsetAt = [](const TensorAccess& access, const Extents& point, const Extents& step) {
      std::vector<std::pair<std::string, int64_t>> all(point.begin(), point.end());
      all.insert(all.end(), step.begin(), step.end());
      return access.offset(all) - access.offset({});
    };
    for (size_t st = 0; st < tile.steps.size(); ++st) {
      const Extents& step = tile.steps[st];
      os_ << q << "{\n";
      std::vector<int64_t> keptOffsets = distinctOffsets(kept, tile, step);
      for (size_t k = 0; k < keptOffsets.size(); ++k)
        os_ << q << "  const " << type << " k" << k << " = " << value(kept, keptPtr, keptOffsets[k]) << ";\n";
      std::vector<int64_t> streamedOffsets = distinctOffsets(streamed, tile, step);
      for (int64_t so : streamedOffsets) {
        os_ << q << "  {\n"
            << q << "    const " << type << " s = " << value(streamed, streamedPtr, so) << ";\n";
        for (size_t a = 0; a < tile.accumulators.size(); ++a) {
          if (offsetAt(streamed, tile.accumulators[a], step) != so) continue;
          size_t k = static_cast<size_t>(
              std::find(keptOffsets.begin(), keptOffsets.end(), offsetAt(kept, tile.accumulators[a], step)) -
              keptOffsets.begin());
          std::string acc = "acc" + std::to_string(a);
          // The product's operand order is the source's: lhs * rhs.
          std::string l = keepLeft ? "k" + std::to_string(k) : "s",
                      r = keepLeft ? "s" : "k" + std::to_string(k);
          if (vector)
            os_ << q << "    " << acc << " = " << v.fma << "(" << l << ", " << r << ", " << acc << ");\n";
          else
            os_ << q << "    " << acc << " += " << l << " * " << r << ";\n";
        }
        os_ << q << "  }\n";
      }
      os_ << q << "}\n";
    }
    for (int d = inner - 1; d > depth; --d) os_ << pad(d) << "}\n";
    if (epilogue) return emitEpilogue(*epilogue, tile, state, depth);
    for (size_t a = 0; a < tile.accumulators.size(); ++a) {
      int64_t offset =
          output.offset({tile.accumulators[a].begin(), tile.accumulators[a].end()}) - output.offset({});
      if (vector && tile.lanes < b_.isa.lanes)
        os_ << p << "  _mm512_mask_storeu_ps(o + " << offset << ", " << laneMask(tile) << ", acc" << a
            << ");\n";
      else if (vector)
        os_ << p << "  " << v.store << "(o + " << offset << ", acc" << a << ");\n";
      else
        os_ << p << "  o[" << offset << "] = acc" << a << ";\n";
    }
    os_ << p << "}\n";
  }

  // Each accumulator through the epilogue, lane by lane, into the output.
  void emitEpilogue(const Epilogue& ep, const RegisterTileShape& tile, const State& state, int depth) {
    std::string p = pad(depth);
    std::vector<std::string> tensors = ep.tensors();
    auto pointOffset = [](const TensorAccess& access, const Extents& point) {
      return access.offset({point.begin(), point.end()}) - access.offset({});
    };
    bool vector = !tile.vectorDim.empty();
    for (size_t a = 0; a < tile.accumulators.size(); ++a) {
      const Extents& point = tile.accumulators[a];
      std::string lane = vector ? " + l" : "";
      auto element = [&](size_t k) {
        const EpilogueRead& r = ep.reads[k];
        size_t t =
            static_cast<size_t>(std::find(tensors.begin(), tensors.end(), r.access.tensor) - tensors.begin());
        int64_t stride = vector ? r.access.stride(tile.vectorDim) : 0;
        return "e" + std::to_string(t) + "[" + offsetOf(r.access, state.vars) + " + " +
               std::to_string(pointOffset(r.access, point)) +
               (stride ? " + " + std::to_string(stride) + "L * l" : "") + "]";
      };
      std::string o = "o[" + std::to_string(pointOffset(ep.output, point)) + lane + "]";
      if (!vector) {
        os_ << p << "  " << o << " = " << epilogueC(ep, "acc" + std::to_string(a), element) << ";\n";
        continue;
      }
      os_ << p << "  {\n"
          << p << "    float t[" << b_.isa.lanes << "];\n"
          << p << "    " << spellingFor(b_.isa).store << "(t, acc" << a << ");\n"
          << p << "    for (long l = 0; l < " << tile.lanes << "; ++l) " << o << " = "
          << epilogueC(ep, "t[l]", element) << ";\n"
          << p << "  }\n";
    }
    os_ << p << "}\n";
  }

  const BoundScheme& b_;
  const Contraction& c_;
  const SchemeCodeOptions& options_;
  std::ostringstream os_;
  size_t packCount_ = 0;
  size_t parallelLambda_ = SIZE_MAX;  // the lambda whose branches are parallel loops, if any
};

// The loops of a layout transform: one per layout dimension, outermost
// first. `back`: from the layout to the tensor's own (an output's), the
// overhang and the border left out.
void emitTransformLoops(std::ostringstream& os, const TensorAccess& a, bool back) {
  std::vector<LayoutDim> dims = a.layoutDims();
  std::vector<int64_t> extents = a.layoutShape();
  // Each subscript's value, and whether it is inside the tensor (blocks may
  // overhang; a padded subscript has a zero border).
  // `inside` tests the subscripts but the innermost layout dimension's, `insideLast` that one.
  std::string to = "0", from = "0", inside, insideLast;
  int64_t stride = 1;
  for (size_t k = a.shape.size(); k-- > 0;) {
    std::string index;
    for (size_t j = 0; j < dims.size(); ++j) {
      std::string q = "q" + std::to_string(j);
      if (dims[j].subscript != k) continue;
      if (dims[j].part == LayoutDim::Part::Whole) index = q;
      if (dims[j].part == LayoutDim::Part::Outer)
        index = q + " * " + std::to_string(dims[j].block) + (index.empty() ? "" : " + " + index);
      if (dims[j].part == LayoutDim::Part::Inner) index = (index.empty() ? "" : index + " + ") + q;
    }
    int64_t before = a.padded() ? a.padBefore[k] : 0;
    std::vector<std::string> tests;
    if (before > 0) tests.push_back("(" + index + ") >= " + std::to_string(before));
    int64_t laidOut = a.blockOf(k) != 0 ? (a.paddedExtent(k) + a.blockOf(k) - 1) / a.blockOf(k) * a.blockOf(k)
                                        : a.paddedExtent(k);
    if (laidOut > before + a.shape[k])
      tests.push_back("(" + index + ") < " + std::to_string(before + a.shape[k]));
    bool last = k == dims.back().subscript;
    for (const auto& t : tests)
      (last ? insideLast : inside) += ((last ? insideLast : inside).empty() ? "" : " && ") + t;
    from += " + " + std::to_string(stride) + "L * (" + index +
            (before ? " - " + std::to_string(before) : "") + ")";
    stride *= a.shape[k];
  }
  for (size_t j = 0; j < dims.size(); ++j)
    to = "(" + to + ") * " + std::to_string(extents[j]) + " + q" + std::to_string(j);
  // With the innermost dimension a run of the source's last subscript, whole
  // rows are copied, or zeroed in the border (the kernel's C is compiled
  // without GCC's vectorizer).
  size_t lastSubscript = dims.back().subscript;
  bool runOfLast = lastSubscript + 1 == a.shape.size() && dims.back().part != LayoutDim::Part::Outer;
  // A padded last subscript, whole: the row's border zeroed, its inside copied.
  int64_t before = a.padded() ? a.padBefore[lastSubscript] : 0;
  bool paddedRows = !insideLast.empty() && !back && runOfLast && dims.back().part == LayoutDim::Part::Whole;
  bool rows = insideLast.empty() && runOfLast;
  if (paddedRows) {
    size_t loops = dims.size() - 1;
    if (loops > 0) os << "  #pragma omp parallel for schedule(static)\n";
    for (size_t j = 0; j < loops; ++j)
      os << std::string(2 * (j + 1), ' ') << "for (long q" << j << " = 0; q" << j << " < " << extents[j]
         << "; ++q" << j << ")\n";
    std::string pad(2 * (loops + 1), ' ');
    int64_t after = extents.back() - before - a.shape[lastSubscript];
    os << pad << "{\n"
       << pad << "  const long q" << loops << " = " << before << ";\n"
       << pad << "  float* row = to + " << to << " - " << before << ";\n";
    std::string in = pad + "    ";
    std::string whole = in + "memset(row, 0, " + std::to_string(extents.back()) + " * sizeof(float));\n";
    std::string parts =
        (before ? in + "memset(row, 0, " + std::to_string(before) + " * sizeof(float));\n" : "") + in +
        "memcpy(row + " + std::to_string(before) + ", from + " + from + ", " +
        std::to_string(a.shape[lastSubscript]) + " * sizeof(float));\n" +
        (after ? in + "memset(row + " + std::to_string(before + a.shape[lastSubscript]) + ", 0, " +
                     std::to_string(after) + " * sizeof(float));\n"
               : "");
    if (inside.empty())
      os << parts;
    else
      os << pad << "  if (" << inside << ") {\n" << parts << pad << "  } else {\n" << whole << pad << "  }\n";
    os << pad << "}\n";
    return;
  }
  if (!insideLast.empty()) inside += (inside.empty() ? "" : " && ") + insideLast;
  size_t loops = rows ? dims.size() - 1 : dims.size();
  if (loops > 0) os << "  #pragma omp parallel for schedule(static)\n";
  for (size_t j = 0; j < loops; ++j)
    os << std::string(2 * (j + 1), ' ') << "for (long q" << j << " = 0; q" << j << " < " << extents[j]
       << "; ++q" << j << ")\n";
  std::string pad(2 * (loops + 1), ' ');
  if (rows) {
    std::string bytes = std::to_string(extents.back()) + " * sizeof(float)";
    os << pad << "{\n" << pad << "  const long q" << loops << " = 0;\n";
    if (back)
      os << pad << "  " << (inside.empty() ? "" : "if (" + inside + ") ") << "memcpy(to + " << from
         << ", from + " << to << ", " << bytes << ");\n";
    else if (inside.empty())
      os << pad << "  memcpy(to + " << to << ", from + " << from << ", " << bytes << ");\n";
    else
      os << pad << "  if (" << inside << ")\n"
         << pad << "    memcpy(to + " << to << ", from + " << from << ", " << bytes << ");\n"
         << pad << "  else\n"
         << pad << "    memset(to + " << to << ", 0, " << bytes << ");\n";
    os << pad << "}\n";
    return;
  }
  if (back) {
    os << pad << (inside.empty() ? "" : "if (" + inside + ") ") << "to[" << from << "] = from[" << to
       << "];\n";
    return;
  }
  std::string element = "from[" + from + "]";
  os << pad << "to[" << to << "] = " << (inside.empty() ? element : inside + " ? " + element + " : 0.0f")
     << ";\n";
}

}  // namespace

ParallelLoops parallelLoopsOf(const BoundScheme& b) {
  ParallelLoops p;
  for (size_t i = 0; i < b.accumulationStart(0); ++i) {
    const Specifier& s = b.scheme.specs[i];
    if (s.kind == SpecKind::Seq || (i > 0 && packsBeforeSpec(b, i))) break;
    int64_t trips = b.trips(i, {});
    // A reduction loop of one iteration is no reduction: it may sit in the collapsed nest.
    if (b.contraction->dim(s.dim)->reduction && trips > 1) break;
    p.iterations *= trips;
    ++p.loops;
  }
  if (p.iterations > 1) return p;
  // Past loops of one iteration and reduction loops (which then run
  // sequentially around the parallel branches), up to a packing.
  for (size_t i = static_cast<size_t>(p.loops); i < b.accumulationStart(0) && !packsBeforeSpec(b, i); ++i) {
    const Specifier& s = b.scheme.specs[i];
    bool reduction = b.contraction->dim(s.dim)->reduction;
    if (s.kind == SpecKind::Seq && !reduction) {
      p.loops = static_cast<int>(i);
      p.lambdaBranches = true;
      for (const auto& branch : s.branches) p.iterations = std::max(p.iterations, branch.first);
      return p;
    }
    if (s.kind == SpecKind::Seq || (!reduction && b.trips(i, {}) > 1)) break;
  }
  return p;
}

std::string generateSchemeC(const BoundScheme& scheme, const SchemeCodeOptions& options) {
  return SchemeEmitter(scheme, options).emit();
}

}  // namespace tessel::microkernel

namespace tessel::microkernel {

std::string generateLayoutTransformC(const TensorAccess& access, const std::string& functionName) {
  std::ostringstream os;
  os << "static int " << functionName << "(float* restrict to, const float* restrict from) {\n";
  os << "  /* " << access.tensor << " into the micro-kernel's layout: " << layoutText(access) << " */\n";
  emitTransformLoops(os, access, false);
  os << "  return 0;\n}\n";
  return os.str();
}

std::string generateLayoutTransformBackC(const TensorAccess& access, const std::string& functionName) {
  std::ostringstream os;
  os << "static int " << functionName << "(float* restrict to, const float* restrict from) {\n";
  os << "  /* " << access.tensor << " back from the micro-kernel's layout: " << layoutText(access) << " */\n";
  emitTransformLoops(os, access, true);
  os << "  return 0;\n}\n";
  return os.str();
}

std::string layoutText(const TensorAccess& access) {
  std::vector<int64_t> extents = access.layoutShape();
  std::vector<LayoutDim> dims = access.layoutDims();
  std::string text = access.tensor + "[";
  for (size_t j = 0; j < dims.size(); ++j) {
    text += j ? "][" : "";
    text += "#" + std::to_string(dims[j].subscript);
    if (dims[j].part != LayoutDim::Part::Whole)
      text += (dims[j].part == LayoutDim::Part::Outer ? "/" : "%") + std::to_string(dims[j].block);
    text += ":" + std::to_string(extents[j]);
  }
  text += "]";
  if (access.padded()) {
    text += " with a zero border of";
    for (size_t k = 0; k < access.shape.size(); ++k)
      text +=
          (k ? ", " : " ") + std::to_string(access.padBefore[k]) + "+" + std::to_string(access.padAfter[k]);
  }
  return text;
}

}  // namespace tessel::microkernel
