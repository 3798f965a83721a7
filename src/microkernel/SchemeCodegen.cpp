#include "microkernel/SchemeCodegen.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace tessel::microkernel {

namespace {

// How the micro-kernel spells its vector operations.
struct VectorSpelling {
  std::string type, load, store, broadcast, fma;
};

VectorSpelling spellingFor(const VectorIsa& isa) {
  if (isa.name == "avx512")
    return {"__m512", "_mm512_loadu_ps", "_mm512_storeu_ps", "_mm512_set1_ps", "_mm512_fmadd_ps"};
  return {"__m256", "_mm256_loadu_ps", "_mm256_storeu_ps", "_mm256_set1_ps", "_mm256_fmadd_ps"};
}

class SchemeEmitter {
 public:
  SchemeEmitter(const BoundScheme& b, const SchemeCodeOptions& o) : b_(b), c_(*b.contraction), options_(o) {}

  std::string emit() {
    os_ << "static void " << options_.functionName
        << "(float* restrict out, const float* restrict lhs, const float* restrict rhs) {\n";
    os_ << "  /* " << toString(b_.scheme) << " */\n";
    // Each dimension's index is the sum of the loop variables along it.
    std::map<std::string, std::vector<std::string>> vars;
    emitFrom(0, {}, vars, 1, parallelLoops());
    os_ << "}\n";
    return os_.str();
  }

 private:
  using Vars = std::map<std::string, std::vector<std::string>>;

  // The outermost loops over output dimensions (and reduction loops of one
  // iteration), all T or R: collapsed into one parallel loop.
  int parallelLoops() const {
    if (!options_.parallel) return 0;
    int count = 0;
    int64_t iterations = 1;
    for (size_t i = 0; i < accumulationStart(0); ++i) {
      const Specifier& s = b_.scheme.specs[i];
      if (s.kind == SpecKind::Seq) break;
      int64_t trips = b_.trips(i, {});
      // A reduction loop of one iteration is no reduction: it may sit in the collapsed nest.
      if (c_.dim(s.dim)->reduction && trips > 1) break;
      iterations *= trips;
      ++count;
    }
    return iterations > 1 ? count : 0;
  }

  static std::string pad(int depth) { return std::string(2 * static_cast<size_t>(depth), ' '); }

  std::string indexOf(const std::string& dim, const Vars& vars) const {
    auto it = vars.find(dim);
    if (it == vars.end() || it->second.empty()) return "0";
    std::string text;
    for (const auto& v : it->second) text += (text.empty() ? "" : " + ") + v;
    return text;
  }

  // The element offset of `access` where the dimensions have the loop variables' values.
  std::string offsetOf(const TensorAccess& access, const Vars& vars) const {
    std::string text = std::to_string(access.offset({}));
    for (const auto& d : c_.dims) {
      int64_t stride = access.stride(d.name);
      if (stride == 0 || !vars.count(d.name)) continue;
      text += " + " + std::to_string(stride) + "L * (" + indexOf(d.name, vars) + ")";
    }
    return text;
  }

  std::string loopVar(const Specifier& s, size_t index) const {
    return "i_" + s.dim + "_" + std::to_string(index);
  }

  // Where the micro-kernel starts: the reduction loops right above the
  // register tile (not above `first`) run inside it, on its accumulators.
  size_t accumulationStart(size_t first) const {
    size_t start = b_.registerTileStart;
    while (start > first) {
      const Specifier& s = b_.scheme.specs[start - 1];
      if (s.kind == SpecKind::Seq || !c_.dim(s.dim)->reduction) break;
      --start;
    }
    return start;
  }

  void emitFrom(size_t first, const Bindings& bindings, Vars vars, int depth, int parallel) {
    if (first == accumulationStart(first)) return emitMicroKernel(first, bindings, vars, depth);
    const Specifier& s = b_.scheme.specs[first];
    std::string var = loopVar(s, first);
    if (s.kind == SpecKind::Seq) {
      int64_t start = 0;
      for (const auto& [repetitions, value] : s.branches) {
        Bindings inner = bindings;
        inner[s.param] = value;
        int64_t step = b_.extentsFrom(first + 1, inner)[s.dim];
        os_ << pad(depth) << "/* " << s.param << " = " << value << " */\n";
        emitLoop(var, start, start + repetitions * step, step, depth, 0);
        Vars innerVars = vars;
        innerVars[s.dim].push_back(var);
        emitFrom(first + 1, inner, innerVars, depth + 1, 0);
        os_ << pad(depth) << "}\n";
        start += repetitions * step;
      }
      return;
    }
    int64_t step = b_.extentsFrom(first + 1, bindings)[s.dim];
    emitLoop(var, 0, b_.trips(first, bindings) * step, step, depth, parallel);
    vars[s.dim].push_back(var);
    emitFrom(first + 1, bindings, vars, depth + 1, 0);  // collapse(parallel) covers the loops inside
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
  void emitMicroKernel(size_t first, const Bindings& bindings, Vars vars, int depth) {
    RegisterTileShape tile = b_.registerTile(bindings);
    bool vector = !tile.vectorDim.empty();
    VectorSpelling v = spellingFor(b_.isa);
    std::string type = vector ? v.type : "float";
    std::string p = pad(depth);
    os_ << p << "{\n";
    os_ << p << "  float* restrict o = out + " << offsetOf(c_.output, vars) << ";\n";
    for (size_t a = 0; a < tile.accumulators.size(); ++a) {
      int64_t offset =
          c_.output.offset({tile.accumulators[a].begin(), tile.accumulators[a].end()}) - c_.output.offset({});
      os_ << p << "  " << type << " acc" << a << " = "
          << (vector ? v.load + "(o + " + std::to_string(offset) + ")" : "o[" + std::to_string(offset) + "]")
          << ";\n";
    }
    int inner = depth + 1;
    for (size_t i = first; i < b_.registerTileStart; ++i) {
      const Specifier& s = b_.scheme.specs[i];
      std::string var = loopVar(s, i);
      int64_t step = b_.extentsFrom(i + 1, bindings)[s.dim];
      emitLoop(var, 0, b_.trips(i, bindings) * step, step, inner, 0);
      vars[s.dim].push_back(var);
      ++inner;
    }
    std::string q = pad(inner);
    os_ << q << "const float* restrict a = lhs + " << offsetOf(c_.lhs, vars) << ";\n";
    os_ << q << "const float* restrict b = rhs + " << offsetOf(c_.rhs, vars) << ";\n";
    bool keepLeft = keepsLeftOperand(c_, tile);
    const TensorAccess& kept = keepLeft ? c_.lhs : c_.rhs;
    const TensorAccess& streamed = keepLeft ? c_.rhs : c_.lhs;
    std::string keptPtr = keepLeft ? "a" : "b", streamedPtr = keepLeft ? "b" : "a";
    auto value = [&](const TensorAccess& access, const std::string& ptr, int64_t offset) {
      std::string element = ptr + "[" + std::to_string(offset) + "]";
      if (!vector) return element;
      return access.stride(tile.vectorDim) == 0 ? v.broadcast + "(" + element + ")"
                                                : v.load + "(" + ptr + " + " + std::to_string(offset) + ")";
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
    for (size_t a = 0; a < tile.accumulators.size(); ++a) {
      int64_t offset =
          c_.output.offset({tile.accumulators[a].begin(), tile.accumulators[a].end()}) - c_.output.offset({});
      if (vector)
        os_ << p << "  " << v.store << "(o + " << offset << ", acc" << a << ");\n";
      else
        os_ << p << "  o[" << offset << "] = acc" << a << ";\n";
    }
    os_ << p << "}\n";
  }

  const BoundScheme& b_;
  const Contraction& c_;
  const SchemeCodeOptions& options_;
  std::ostringstream os_;
};

}  // namespace

std::string generateSchemeC(const BoundScheme& scheme, const SchemeCodeOptions& options) {
  return SchemeEmitter(scheme, options).emit();
}

}  // namespace tessel::microkernel
