#include "backend/CEmitter.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "abi/KernelAbi.h"
#include "abi/KernelPreludeText.h"
#include "abi/VectorMathText.h"
#include "abi/VectorPreludeText.h"
#include "backend/CNames.h"
#include "backend/CScalarOps.h"
#include "backend/CVectorLoop.h"
#include "lir/IndexRanges.h"
#include "lir/ThreadVersions.h"
#include "lir/Traverse.h"
#include "lir/VectorLoop.h"

namespace tessel::backend {

const char* storageCType(te::DType t) {
  switch (t) {
    case te::DType::F32:
      return "float";
    case te::DType::F64:
      return "double";
    case te::DType::F16:
    case te::DType::BF16:
      return "uint16_t";
    case te::DType::I32:
      return "int32_t";
    case te::DType::I8:
      return "int8_t";
    case te::DType::U8:
    case te::DType::Bool:
      return "uint8_t";
  }
  return "?";
}

namespace {

using lir::Expr;
using lir::ExprKind;
using te::BinaryOp;
using te::DType;
using te::UnaryOp;

class Emitter final : public lir::StmtVisitor {
 public:
  explicit Emitter(std::ostream& os) : os_(os) {}

  std::string expr(const Expr& e) {
    if (e->index) return indexExpr(e);
    switch (e->kind) {
      case ExprKind::IntImm:
        return "((" + std::string(computeCType(e->type)) + ")" + intLiteral(e->intValue) + ")";
      case ExprKind::FloatImm:
        return floatLiteral(e->floatValue, e->type);
      case ExprKind::Var:
        return e->name;
      case ExprKind::Load:
        return loadExpr(e);
      case ExprKind::Unary:
        return unaryExpr(e);
      case ExprKind::Binary:
        return binaryExpr(e);
      case ExprKind::Select: {
        std::string t = computeCType(e->type);
        return "(" + expr(e->operands[0]) + " ? (" + t + ")" + expr(e->operands[1]) + " : (" + t + ")" +
               expr(e->operands[2]) + ")";
      }
      case ExprKind::Cast:
        return castExpr(e->type, e->operands[0]);
      case ExprKind::CheckedIndex:
      case ExprKind::FloorDiv:
        break;
    }
    throw InternalError("emit-c", "unexpected value expression");
  }

  // Emits `s` at indentation `depth`.
  void stmt(const lir::Stmt& s, int depth) {
    int outer = depth_;
    depth_ = depth;
    visit(s);
    depth_ = outer;
  }

  void visitBlock(const lir::Stmt& s) override {
    std::string pad(2 * depth_, ' ');
    lir::IndexRanges outer = ranges_;
    for (const auto& c : s->body) {
      bool scoped = c->kind == lir::StmtKind::Block && depth_ > 0;
      if (scoped) os_ << pad << "{\n";
      stmt(c, scoped ? depth_ + 1 : depth_);
      if (scoped) os_ << pad << "}\n";
    }
    ranges_ = std::move(outer);
  }

  void visitFor(const lir::Stmt& s) override {
    std::string pad(2 * depth_, ' ');
    // Each thread fences its own non-temporal stores before the loop's
    // end, rather than relying on how the OpenMP barrier is built.
    bool vectorCode = s->vectorLanes > 0 || s->transposeLanes > 0;
    bool fenced = s->parallel && lir::hasStreamingStore(s) && (vectorCode || canonicalLoop(s));
    const char* pragma =
        fenced ? "#pragma omp for schedule(static) nowait" : "#pragma omp parallel for schedule(static)";
    if (fenced) os_ << pad << "#pragma omp parallel\n" << pad << "{\n";
    if (vectorCode) {
      ScalarC scalar{[this](const Expr& e) { return expr(e); },
                     [this](const lir::Stmt& st) { return storeText(st); },
                     [](const std::string& b) { return cName(b); },
                     [this](const std::string& b) { return bufferType(b); }};
      if (s->transposeLanes > 0)
        emitTransposeBlock(os_, s, depth_, scalar, ranges_, s->parallel ? pragma : "");
      else
        emitVectorLoop(os_, s, depth_, scalar, ranges_, s->parallel ? pragma : "");
      if (fenced) os_ << pad << "tessel_stream_fence();\n" << pad << "}\n";
      return;
    }
    if (s->parallel && canonicalLoop(s)) {
      std::string text = pragma;
      if (collapsesWithItsLoop(s)) text.replace(text.find(" schedule"), 0, " collapse(2)");
      os_ << pad << text << "\n";
    }
    // OpenMP wants the loop predicate unparenthesized.
    std::string cond = expr(s->cond);
    if (cond.size() > 2 && cond.front() == '(' && cond.back() == ')' && s->cond->kind == ExprKind::Binary &&
        te::isComparison(s->cond->binaryOp))
      cond = cond.substr(1, cond.size() - 2);
    os_ << pad << "for (long " << s->name << " = " << expr(s->init) << "; " << cond << "; " << s->name
        << " += " << expr(s->step) << ") {\n";
    lir::IndexRanges outer = ranges_;
    lir::bindRange(ranges_, s->name, lir::loopRange(*s, ranges_));
    stmt(s->body[0], depth_ + 1);
    ranges_ = std::move(outer);
    os_ << pad << "}\n";
    if (fenced) os_ << pad << "tessel_stream_fence();\n" << pad << "}\n";
  }

  void visitIf(const lir::Stmt& s) override {
    std::string pad(2 * depth_, ' ');
    lir::IndexRanges outer = ranges_;
    os_ << pad << "if (" << expr(s->cond) << ") {\n";
    stmt(s->thenCase, depth_ + 1);
    ranges_ = outer;
    if (s->elseCase) {
      os_ << pad << "} else {\n";
      stmt(s->elseCase, depth_ + 1);
      ranges_ = outer;
    }
    os_ << pad << "}\n";
  }

  void visitLet(const lir::Stmt& s) override {
    std::string pad(2 * depth_, ' ');
    // (a Let lasts to the end of its block: visitBlock restores the ranges
    // around the block, visitFor and visitIf those around them)
    os_ << pad << "const long " << s->name << " = " << expr(s->value) << ";\n";
    lir::bindRange(ranges_, s->name, lir::rangeOf(s->value, ranges_));
  }

  void visitStore(const lir::Stmt& s) override {
    std::string pad(2 * depth_, ' ');
    os_ << pad << storeText(s) << "\n";
  }

  void visitAlloc(const lir::Stmt& s) override {
    std::string pad(2 * depth_, ' ');
    const lir::BufferDecl& b = locals_.at(s->name);
    os_ << pad << storageCType(b.dtype) << " " << cName(b.name) << "[" << b.numElements()
        << "] __attribute__((aligned(64)));\n";
  }

  void visitCall(const lir::Stmt& s) override {
    std::string pad(2 * depth_, ' ');
    os_ << pad << "if (" << s->name << "(";
    for (size_t i = 0; i < s->arguments.size(); ++i) os_ << (i ? ", " : "") << cName(s->arguments[i]);
    os_ << ")) tessel_status = " << abi::kKernelOutOfMemory << ";\n";
  }

  void setBuffers(const lir::Kernel& k) {
    for (const auto* list : {&k.inputs, &k.outputs, &k.temporaries, &k.locals})
      for (const auto& b : *list) dtypes_[b.name] = b.dtype;
    for (const auto& b : k.locals) locals_.emplace(b.name, b);
  }

 private:
  // Whether a parallel loop and the loop that is its body run as one OpenMP
  // loop (collapse(2)): that loop marked collapsible (schedule/MarkParallel.h),
  // scalar, canonical, and with bounds and step that do not depend on the
  // outer loop (OpenMP's rectangular nests).
  static bool collapsesWithItsLoop(const lir::Stmt& outer) {
    lir::Stmt inner = outer->body[0];
    if (inner->kind == lir::StmtKind::Block && inner->body.size() == 1) inner = inner->body[0];
    if (inner->kind != lir::StmtKind::For || !inner->collapsible || inner->vectorLanes > 0 ||
        inner->transposeLanes > 0 || !canonicalLoop(inner))
      return false;
    for (const Expr& e : {inner->init, inner->cond->operands[1], inner->step})
      if (lir::dependsOn(e, outer->name)) return false;
    return true;
  }

  // OpenMP needs `for (v = init; v <op> bound; v += step)`.
  static bool canonicalLoop(const lir::Stmt& s) {
    const Expr& c = s->cond;
    return c->kind == ExprKind::Binary && (c->binaryOp == BinaryOp::Le || c->binaryOp == BinaryOp::Lt) &&
           c->operands[0]->kind == ExprKind::Var && c->operands[0]->name == s->name;
  }

  std::string indexExpr(const Expr& e) {
    auto a = [&](int k) { return expr(e->operands[static_cast<size_t>(k)]); };
    switch (e->kind) {
      case ExprKind::IntImm:  // long: products of two constants must not overflow int
        return e->intValue < 0 ? "(" + std::to_string(e->intValue) + "L)" : std::to_string(e->intValue) + "L";
      case ExprKind::Var:
        return e->name;
      case ExprKind::Unary:
        return "(-" + a(0) + ")";
      case ExprKind::FloorDiv:
        return "tessel_floord(" + a(0) + ", " + a(1) + ")";
      case ExprKind::CheckedIndex:
        return "tessel_checked_index(tessel_trunc_i64((double)" + a(0) + "), " + intLiteral(e->intValue) +
               ", &tessel_status)";
      case ExprKind::Select:
        return "(" + a(0) + " ? " + a(1) + " : " + a(2) + ")";
      case ExprKind::Binary:
        switch (e->binaryOp) {
          case BinaryOp::Min:
            return "tessel_lmin(" + a(0) + ", " + a(1) + ")";
          case BinaryOp::Max:
            return "tessel_lmax(" + a(0) + ", " + a(1) + ")";
          default:
            return "(" + a(0) + " " + te::binaryOpName(e->binaryOp) + " " + a(1) + ")";
        }
      default:
        break;
    }
    throw InternalError("emit-c", "unexpected index expression");
  }

  DType bufferType(const std::string& name) const {
    auto it = dtypes_.find(name);
    TESSEL_CHECK(it != dtypes_.end(), "emit-c", "unknown buffer " + name);
    return it->second;
  }

  std::string loadExpr(const Expr& e) {
    std::string ref = cName(e->name) + "[" + expr(e->operands[0]) + "]";
    switch (bufferType(e->name)) {
      case DType::F16:
        return "tessel_f16_to_f32(" + ref + ")";
      case DType::BF16:
        return "tessel_bf16_to_f32(" + ref + ")";
      case DType::I8:
      case DType::U8:
        return "((int32_t)" + ref + ")";
      case DType::Bool:
        return "((int32_t)" + ref + ")";
      default:
        return ref;
    }
  }

  std::string storeText(const lir::Stmt& s) {
    DType t = bufferType(s->name);
    // A cast to the stored 16-bit type rounds as the store does: rounding twice is rounding once.
    bool narrowCast =
        (t == DType::F16 || t == DType::BF16) && s->value->kind == ExprKind::Cast && s->value->type == t;
    std::string v = expr(narrowCast ? s->value->operands[0] : s->value);
    std::string target = cName(s->name) + "[" + expr(s->index) + "]";
    switch (t) {
      case DType::F16:
        v = "tessel_f32_to_f16(" + v + ")";
        break;
      case DType::BF16:
        v = "tessel_f32_to_bf16(" + v + ")";
        break;
      case DType::I8:
      case DType::U8:
      case DType::Bool:
        v = "(" + std::string(storageCType(t)) + ")" + v;
        break;
      default:
        break;
    }
    std::string prefetch;
    if (!s->prefetchBuffer.empty())
      prefetch =
          "__builtin_prefetch(&" + cName(s->prefetchBuffer) + "[" + expr(s->prefetchIndex) + "], 0, 3); ";
    return prefetch + target + " = " + v + ";";
  }

  std::string castExpr(DType t, const Expr& x) {
    std::string v = expr(x);
    bool fromFloat = !x->index && te::isFloat(x->type);
    switch (t) {
      case DType::F32:
        return "((float)" + v + ")";
      case DType::F64:
        return "((double)" + v + ")";
      case DType::F16:
        return "tessel_f16_to_f32(tessel_f32_to_f16((float)" + v + "))";
      case DType::BF16:
        return "tessel_bf16_to_f32(tessel_f32_to_bf16((float)" + v + "))";
      case DType::I32:
        return fromFloat ? "tessel_to_i32((double)" + v + ")" : "((int32_t)" + v + ")";
      case DType::I8:
        return "((int32_t)tessel_to_i8((double)" + v + "))";
      case DType::U8:
        return "((int32_t)tessel_to_u8((double)" + v + "))";
      case DType::Bool:
        return "((int32_t)(" + v + " != 0))";
    }
    return v;
  }

  std::string unaryExpr(const Expr& e) { return unaryC(e->unaryOp, e->type, expr(e->operands[0])); }

  std::string binaryExpr(const Expr& e) {
    return binaryC(e->binaryOp, e->type, expr(e->operands[0]), expr(e->operands[1]));
  }

  std::ostream& os_;
  std::map<std::string, DType> dtypes_;
  std::map<std::string, lir::BufferDecl> locals_;
  lir::IndexRanges ranges_;  // of the loop and let variables in scope
  int depth_ = 0;            // the indentation of the statement emitted
};

// A parameter list over buffers, each read-only or not.
using Parameters = std::vector<std::pair<const lir::BufferDecl*, bool>>;  // buffer, const

std::string parameterList(const Parameters& params, bool withNames) {
  std::string s;
  for (const auto& [b, isConst] : params) {
    s += s.empty() ? "" : ", ";
    s += std::string(isConst ? "const " : "") + storageCType(b->dtype) + "* restrict";
    if (withNames) s += " " + cName(b->name);
  }
  return s.empty() ? "void" : s;
}

// The parameters of each entry point: the kernel's (inputs, outputs), its
// prepare entry's (inputs, laid-out inputs) and its prepared entry's (inputs,
// outputs, laid-out inputs).
Parameters wholeParameters(const lir::Kernel& k) {
  Parameters params;
  for (const auto& b : k.inputs) params.emplace_back(&b, true);
  for (const auto& b : k.outputs) params.emplace_back(&b, false);
  return params;
}
Parameters prepareParameters(const lir::Kernel& k) {
  Parameters params;
  for (const auto& b : k.inputs) params.emplace_back(&b, true);
  for (const auto& p : k.preparedInputs) params.emplace_back(&p.buffer, false);
  return params;
}
Parameters preparedParameters(const lir::Kernel& k) {
  Parameters params = wholeParameters(k);
  for (const auto& p : k.preparedInputs) params.emplace_back(&p.buffer, true);
  return params;
}

std::string signature(const std::string& name, const Parameters& params, bool withNames) {
  return "int " + name + "(" + parameterList(params, withNames) + ")";
}

// `int NAME(void** args)` calling `target` with args cast to its parameters.
void emitPackedEntry(std::ostream& os, const std::string& name, const std::string& target,
                     const Parameters& params) {
  os << "int " << name << "(void** args) {\n  return " << target << "(";
  for (size_t i = 0; i < params.size(); ++i)
    os << (i ? ", " : "") << "(" << (params[i].second ? "const " : "") << storageCType(params[i].first->dtype)
       << "*)args[" << i << "]";
  os << ");\n}\n";
}

std::string slotName(const lir::Kernel& k, const lir::BufferDecl& b) {
  return kernelSymbol(k) + "__slot_" + cName(b.name);
}

// The prepare entry, and the whole kernel as prepare + prepared, the laid-out
// inputs in scratch arrays kept from call to call.
void emitPreparedInputEntries(std::ostream& os, const lir::Kernel& k) {
  std::string symbol = kernelSymbol(k);
  os << signature(symbol + "__prepare", prepareParameters(k), true) << " {\n";
  for (const auto& p : k.preparedInputs)
    os << "  if (" << p.function << "(" << cName(p.buffer.name) << ", " << cName(p.input) << ")) return "
       << abi::kKernelOutOfMemory << ";\n";
  os << "  return " << abi::kKernelOk << ";\n}\n\n";
  for (const auto& p : k.preparedInputs) os << "static void* " << slotName(k, p.buffer) << ";\n";
  os << "__attribute__((destructor)) static void " << symbol << "__release_prepared(void) {\n";
  for (const auto& p : k.preparedInputs) os << "  free(" << slotName(k, p.buffer) << ");\n";
  os << "}\n\n";
  os << signature(symbol, wholeParameters(k), true) << " {\n";
  for (const auto& p : k.preparedInputs)
    os << "  float* " << cName(p.buffer.name) << " = (float*)tessel_take(&" << slotName(k, p.buffer) << ", "
       << p.buffer.numElements() * 4 << ");\n";
  os << "  int tessel_status = " << abi::kKernelOk << ";\n  if (";
  for (size_t i = 0; i < k.preparedInputs.size(); ++i)
    os << (i ? " || " : "") << "!" << cName(k.preparedInputs[i].buffer.name);
  os << ") tessel_status = " << abi::kKernelOutOfMemory << ";\n";
  auto names = [](const Parameters& params) {
    std::string s;
    for (const auto& [b, isConst] : params) s += (s.empty() ? "" : ", ") + cName(b->name);
    return s;
  };
  os << "  if (tessel_status == " << abi::kKernelOk << ") tessel_status = " << symbol << "__prepare("
     << names(prepareParameters(k)) << ");\n";
  os << "  if (tessel_status == " << abi::kKernelOk << ") tessel_status = " << symbol << "__prepared("
     << names(preparedParameters(k)) << ");\n";
  for (const auto& p : k.preparedInputs)
    os << "  if (" << cName(p.buffer.name) << ") tessel_keep(&" << slotName(k, p.buffer) << ", "
       << cName(p.buffer.name) << ");\n";
  os << "  return tessel_status;\n}\n\n";
}

}  // namespace

std::string packedEntryName(const lir::Kernel& kernel) { return kernelSymbol(kernel) + "__packed"; }

runtime::KernelEntries kernelEntries(const lir::Kernel& kernel,
                                     const std::function<bool(const std::string&)>& isConstant) {
  runtime::KernelEntries entries;
  entries.whole = packedEntryName(kernel);
  if (kernel.preparedInputs.empty() || !isConstant) return entries;
  for (const auto& p : kernel.preparedInputs)
    if (!isConstant(p.input)) return entries;
  entries.prepare = kernelSymbol(kernel) + "__prepare__packed";
  entries.prepared = kernelSymbol(kernel) + "__prepared__packed";
  for (const auto& p : kernel.preparedInputs) entries.preparedBuffers.push_back({p.input, p.buffer.shape});
  return entries;
}

std::string emitC(const lir::Kernel& k) {
  std::ostringstream os;
  os << abi::kKernelPrelude << "\n";
  if (!k.vectorIsa.empty()) os << abi::vectorMathText() << "\n" << abi::kVectorPrelude << "\n";
  if (!k.helpers.empty()) os << "#include <immintrin.h>\n\n";
  if (k.readsThreadCount) os << "#ifdef _OPENMP\n#include <omp.h>\n#endif\n\n";
  for (const auto& helper : k.helpers) os << helper << "\n";
  // The scratch arrays' slots (tessel_take), emptied when the library is unloaded.
  if (!k.temporaries.empty()) {
    for (const auto& t : k.temporaries) os << "static void* " << slotName(k, t) << ";\n";
    os << "__attribute__((destructor)) static void " << kernelSymbol(k) << "__release(void) {\n";
    for (const auto& t : k.temporaries) os << "  free(" << slotName(k, t) << ");\n";
    os << "}\n\n";
  }
  // With laid-out inputs the body is the prepared entry; the kernel itself prepares, then runs it.
  bool prepared = !k.preparedInputs.empty();
  std::string bodyName = kernelSymbol(k) + (prepared ? "__prepared" : "");
  os << signature(bodyName, prepared ? preparedParameters(k) : wholeParameters(k), true) << " {\n";
  os << "  int tessel_status = " << abi::kKernelOk << ";\n";
  if (k.readsThreadCount)
    os << "#ifdef _OPENMP\n  const long " << lir::kThreadCountVar
       << " = omp_get_max_threads();\n#else\n  const long " << lir::kThreadCountVar << " = 1;\n#endif\n";
  for (const auto& t : k.temporaries) {
    os << "  " << storageCType(t.dtype) << "* restrict " << cName(t.name) << " = (" << storageCType(t.dtype)
       << "*)tessel_take(&" << slotName(k, t) << ", " << t.numElements() * te::dtypeBytes(t.dtype) << ");\n";
  }
  if (!k.temporaries.empty()) {
    os << "  if (";
    for (size_t i = 0; i < k.temporaries.size(); ++i)
      os << (i ? " || " : "") << "!" << cName(k.temporaries[i].name);
    os << ") {\n";
    for (const auto& t : k.temporaries) os << "    free(" << cName(t.name) << ");\n";
    os << "    return " << abi::kKernelOutOfMemory << ";\n  }\n";
    // A temporary first updated without `!` accumulates onto zeros.
    for (const auto& t : k.temporaries)
      os << "  memset(" << cName(t.name) << ", 0, " << t.numElements() * te::dtypeBytes(t.dtype) << ");\n";
  }
  Emitter e(os);
  e.setBuffers(k);
  e.stmt(k.body, 1);
  if (k.streamsStores && !k.vectorIsa.empty()) os << "  tessel_stream_fence();\n";
  for (const auto& t : k.temporaries)
    os << "  tessel_keep(&" << slotName(k, t) << ", " << cName(t.name) << ");\n";
  os << "  return tessel_status;\n}\n\n";
  if (prepared) {
    emitPreparedInputEntries(os, k);
    runtime::KernelEntries entries = kernelEntries(k, [](const std::string&) { return true; });
    emitPackedEntry(os, entries.prepare, kernelSymbol(k) + "__prepare", prepareParameters(k));
    emitPackedEntry(os, entries.prepared, bodyName, preparedParameters(k));
  }
  emitPackedEntry(os, packedEntryName(k), kernelSymbol(k), wholeParameters(k));
  return os.str();
}

std::string emitHeader(const lir::Kernel& k, const std::string& provenance) {
  std::ostringstream os;
  std::string guard = "TESSEL_KERNEL_" + kernelSymbol(k) + "_H";
  for (auto& c : guard) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  os << "/* Generated by Tessel. " << provenance << " */\n";
  os << "#ifndef " << guard << "\n#define " << guard << "\n\n#include <stdint.h>\n\n";
  os << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  os << "/* Tensors are dense, row-major, in the order of the TC signature:\n";
  auto describe = [&](const char* role, const lir::BufferDecl& b) {
    os << " *   " << role << " " << cName(b.name) << ": " << te::dtypeName(b.dtype) << "[";
    for (size_t i = 0; i < b.shape.size(); ++i) os << (i ? "][" : "") << b.shape[i];
    os << "]" << (b.dtype == DType::F16 || b.dtype == DType::BF16 ? " (16-bit patterns)" : "") << "\n";
  };
  for (const auto& b : k.inputs) describe("input ", b);
  for (const auto& b : k.outputs) describe("output", b);
  os << " * Returns " << abi::kKernelOk << " on success, " << abi::kKernelBadIndex
     << " if a read whose index could not be proven in range (an indirect read, a data-dependent guard) was "
        "out of range, "
     << abi::kKernelOutOfMemory
     << " if scratch memory could not be allocated.\n * Inputs and outputs must not overlap. */\n";
  // `restrict` is C99; keep the prototypes valid C++ too.
  auto prototype = [&os](std::string sig) {
    for (size_t p; (p = sig.find(" restrict")) != std::string::npos;) sig.erase(p, 9);
    os << sig << ";\n";
  };
  prototype(signature(kernelSymbol(k), wholeParameters(k), true));
  if (!k.preparedInputs.empty()) {
    os << "\n/* Some inputs are read in the kernel's own layout. For inputs that stay the same from call\n"
       << " * to call (weights), transform them once with the prepare entry, then call the prepared\n"
       << " * entry with the transformed copies (f32, of these extents):\n";
    for (const auto& p : k.preparedInputs) {
      os << " *   " << cName(p.buffer.name) << "[";
      for (size_t i = 0; i < p.buffer.shape.size(); ++i) os << (i ? "][" : "") << p.buffer.shape[i];
      os << "]: " << p.input << " as " << p.layout << "\n";
    }
    os << " * The kernel above does both on every call. */\n";
    prototype(signature(kernelSymbol(k) + "__prepare", prepareParameters(k), true));
    prototype(signature(kernelSymbol(k) + "__prepared", preparedParameters(k), true));
  }
  os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return os.str();
}

}  // namespace tessel::backend
