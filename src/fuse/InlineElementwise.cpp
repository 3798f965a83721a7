#include "fuse/InlineElementwise.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "poly/ExtractScop.h"
#include "target/Promotion.h"

namespace tessel::fuse {

namespace {

// The reads of `tensor` in `e` (target::collectReads).
std::vector<const te::ExprNode*> readsIn(const te::Expr& e, const std::string& tensor) {
  std::vector<const te::ExprNode*> reads;
  target::collectReads(e, tensor, reads);
  return reads;
}

void tensorsRead(const te::Expr& e, std::set<std::string>& out) {
  if (e->kind == te::ExprKind::Access) out.insert(e->name);
  for (const auto& o : e->operands) tensorsRead(o, out);
}

void variablesOf(const te::Expr& e, std::set<std::string>& out) {
  if (e->kind == te::ExprKind::Var) out.insert(e->name);
  for (const auto& o : e->operands) variablesOf(o, out);
}

// `e` with every node rebuilt by `rewrite` (children first); nodes it leaves
// alone are shared.
template <typename Rewrite>
te::Expr rebuild(const te::Expr& e, const Rewrite& rewrite) {
  std::vector<te::Expr> operands;
  bool changed = false;
  for (const auto& o : e->operands) {
    operands.push_back(rebuild(o, rewrite));
    changed = changed || operands.back() != o;
  }
  te::Expr node = e;
  if (changed) {
    auto copy = std::make_shared<te::ExprNode>(*e);
    copy->operands = std::move(operands);
    node = copy;
  }
  return rewrite(node);
}

// The producer's expression at the element a read names: its index
// variables become the read's indices, and the value is rounded to the
// temporary's type as the store would.
te::Expr substituteRead(const te::Stage& producer, te::DType type, const te::ExprNode& read) {
  std::map<std::string, te::Expr> indices;
  for (size_t d = 0; d < producer.indices.size(); ++d) indices[producer.indices[d]] = read.operands[d];
  te::Expr value = rebuild(producer.rhs, [&](const te::Expr& n) {
    if (n->kind != te::ExprKind::Var) return n;
    auto it = indices.find(n->name);
    return it == indices.end() ? n : it->second;
  });
  // f16 and bf16 arithmetic runs in f32 and rounds only where stored (or cast).
  bool narrow = type == te::DType::F16 || type == te::DType::BF16;
  return value->type == type && !narrow ? value : te::cast(type, value, read.loc);
}

// Operations that recomputing `e` costs, or nullopt when it holds one that
// is not cheap (a division, a math function).
std::optional<int> cheapOperations(const te::Expr& e) {
  int own = 0;
  switch (e->kind) {
    case te::ExprKind::Const:
    case te::ExprKind::Var:
    case te::ExprKind::Access:
    case te::ExprKind::Cast:
      break;
    case te::ExprKind::Select:
      own = 1;
      break;
    case te::ExprKind::Unary:
      if (e->unaryOp != te::UnaryOp::Neg && e->unaryOp != te::UnaryOp::Abs && e->unaryOp != te::UnaryOp::Not)
        return std::nullopt;
      own = 1;
      break;
    case te::ExprKind::Binary:
      switch (e->binaryOp) {
        case te::BinaryOp::Add:
        case te::BinaryOp::Sub:
        case te::BinaryOp::Mul:
        case te::BinaryOp::Min:
        case te::BinaryOp::Max:
        case te::BinaryOp::And:
        case te::BinaryOp::Or:
          own = 1;
          break;
        default:
          if (!te::isComparison(e->binaryOp)) return std::nullopt;
          own = 1;
      }
      break;
  }
  // Index arithmetic is free here: it is the readers' addressing.
  if (e->kind != te::ExprKind::Access)
    for (const auto& o : e->operands) {
      std::optional<int> inner = cheapOperations(o);
      if (!inner) return std::nullopt;
      own += *inner;
    }
  return own;
}

// The cheap rule's bounds (see the header).
constexpr int kMaxCheapOperations = 4;
constexpr double kMaxReadsPerElement = 8;
constexpr double kMaxRecomputedPerElement = 16;

class Inliner {
 public:
  Inliner(isl::ctx ctx, const InlineOptions& options, Remarks& remarks)
      : ctx_(ctx), options_(options), remarks_(remarks) {}

  te::Program run(te::Program program) {
    std::map<std::string, std::string> kept;  // temporary -> why, from the last look
    // Each inlining may make its reader inlinable: look again until nothing changes.
    for (bool changed = true; changed;) {
      changed = false;
      kept.clear();
      std::optional<poly::Scop> scop;  // extracted once a temporary gets that far
      for (size_t s = 0; s < program.stages.size(); ++s) {
        const te::Stage& stage = program.stages[s];
        const te::TensorDecl& t = program.tensor(stage.output);
        if (t.role != te::TensorRole::Temporary || stage.reduction != te::Reduction::None ||
            !stage.existsReads.empty())
          continue;
        // Without the read-once rule most programs stop here, before any isl work.
        if (!options_.readOnce && !whyNotCheap(program, s, readCountOf(program, t.name)).empty()) continue;
        if (!scop) scop = poly::extractScop(ctx_, program);
        std::string how;
        double readsPerElement = 0;
        if (auto why = whyKept(program, *scop, s, how, readsPerElement)) {
          if (options_.readOnce) kept[t.name] = *why;
          continue;
        }
        std::string readers = readerNames(program, t.name);
        Remarks::Values values{{"readers", readers}, {"rule", how.empty() ? "read-once" : "cheap"}};
        if (!how.empty()) values.emplace_back("reads_per_element", readsPerElement);
        remarks_.applied(t.name, "inline: " + t.name + " inlined into " + readers + how, std::move(values));
        program = inlined(program, s);
        changed = true;
        break;
      }
    }
    for (const auto& [name, why] : kept)
      remarks_.missed(name, "inline: " + name + " kept (" + why + ")", {{"reason", why}});
    return program;
  }

 private:
  static std::string readerNames(const te::Program& p, const std::string& tensor) {
    std::string out;
    for (const auto& stage : p.stages)
      if (!readsIn(stage.rhs, tensor).empty()) out += (out.empty() ? "" : ", ") + stage.output;
    return out;
  }

  // Why stage `s` cannot be inlined, or nothing when it can (and `how`, for
  // the cheap rule: its figures, the reads per element in `readsPerElement`).
  std::optional<std::string> whyKept(const te::Program& p, const poly::Scop& scop, size_t s, std::string& how,
                                     double& readsPerElement) const {
    const te::Stage& producer = p.stages[s];
    const std::string& t = producer.output;
    std::vector<size_t> readers;
    size_t mostReadsInOneReader = 0;
    for (size_t k = 0; k < p.stages.size(); ++k) {
      const te::Stage& stage = p.stages[k];
      if (k != s && stage.output == t) return "another stage writes it too";
      for (const auto& e : stage.existsReads)
        if (!readsIn(e, t).empty()) return "a `where exists` names it";
      std::vector<const te::ExprNode*> found = readsIn(stage.rhs, t);
      size_t reads = found.size();
      if (reads == 0) continue;
      if (k <= s) return "it reads itself or is read before it is written";
      for (const auto* read : found)
        for (const auto& index : read->operands)
          if (!te::toAffine(index)) return "a read's index is not affine";
      mostReadsInOneReader = std::max(mostReadsInOneReader, reads);
      readers.push_back(k);
    }
    if (readers.empty()) return "nothing reads it";
    std::set<std::string> variables;
    variablesOf(producer.rhs, variables);
    for (const auto& v : variables)
      if (std::find(producer.indices.begin(), producer.indices.end(), v) == producer.indices.end())
        return "its expression uses " + v + ", which is not one of its indices";
    std::set<std::string> inputs;
    tensorsRead(producer.rhs, inputs);
    for (size_t k = s + 1; k <= readers.back(); ++k)
      if (inputs.count(p.stages[k].output))
        return "its expression reads " + p.stages[k].output + ", which changes before its last reader";
    isl::union_set written = isl::union_set::empty(ctx_);
    for (const auto& statement : scop.statements)
      if (statement.stage == static_cast<int>(s)) written = written.unite(statement.writes.range());
    isl::union_set read = isl::union_set::empty(ctx_);
    bool readOnce = mostReadsInOneReader == 1;
    for (const auto& statement : scop.statements) {
      if (statement.kind == poly::StatementKind::Init || readsIn(p.stages[statement.stage].rhs, t).empty())
        continue;
      isl::union_map relation = target::readsOf(scop, isl::union_set(statement.domain), t);
      isl::union_set elements = relation.range();
      if (!elements.is_subset(written)) return "a reader reads elements it does not write";
      readOnce = readOnce && relation.is_injective() && elements.intersect(read).is_empty();
      read = read.unite(elements);
    }
    if (options_.readOnce && readOnce) return std::nullopt;
    double readCount = readCountOf(p, t);
    std::string cheap = whyNotCheap(p, s, readCount);
    if (cheap.empty()) {
      readsPerElement = readCount / static_cast<double>(p.tensor(t).numElements());
      char figures[96];
      std::snprintf(figures, sizeof figures, " (cheap to recompute: about %.1f reads per element)",
                    readsPerElement);
      how = figures;
      return std::nullopt;
    }
    if (!options_.readOnce) return cheap;
    if (mostReadsInOneReader > 1)
      return "a reader reads it at " + std::to_string(mostReadsInOneReader) + " places";
    return "some element is read more than once";
  }

  // Reads of `tensor`'s elements over the whole program: each read in a
  // stage's expression, once per instance of the stage.
  static double readCountOf(const te::Program& p, const std::string& tensor) {
    double count = 0;
    for (const auto& stage : p.stages) {
      size_t reads = readsIn(stage.rhs, tensor).size();
      if (reads == 0) continue;
      double instances = 1;
      for (const auto& [v, r] : stage.ranges) instances *= static_cast<double>(r.extent());
      count += static_cast<double>(reads) * instances;
    }
    return count;
  }

  // Why the cheap rule does not take stage `s` ("" when it does), whose
  // elements are read `readCount` times in all.
  std::string whyNotCheap(const te::Program& p, size_t s, double readCount) const {
    const te::Stage& producer = p.stages[s];
    const te::TensorDecl& t = p.tensor(producer.output);
    int64_t bytes = t.numElements() * te::dtypeBytes(t.dtype);
    if (options_.recomputeAboveBytes <= 0 || bytes <= options_.recomputeAboveBytes)
      return "it fits in the caches";
    std::set<std::string> inputs;
    tensorsRead(producer.rhs, inputs);
    for (const auto& name : inputs)
      if (p.tensor(name).role != te::TensorRole::Input) return "it reads " + name + ", which is not an input";
    std::optional<int> operations = cheapOperations(producer.rhs);
    if (!operations || *operations > kMaxCheapOperations) return "it is not cheap to recompute";
    double perElement = readCount / static_cast<double>(t.numElements());
    if (perElement > kMaxReadsPerElement || perElement * *operations > kMaxRecomputedPerElement)
      return "its elements are read too often to recompute";
    return "";
  }

  static te::Program inlined(const te::Program& p, size_t s) {
    const te::Stage& producer = p.stages[s];
    const te::TensorDecl& t = p.tensor(producer.output);
    te::Program out = p;
    out.stages.clear();
    for (size_t k = 0; k < p.stages.size(); ++k) {
      if (k == s) continue;
      te::Stage stage = p.stages[k];
      stage.rhs = rebuild(stage.rhs, [&](const te::Expr& n) {
        if (n->kind != te::ExprKind::Access || n->name != t.name) return n;
        return substituteRead(producer, t.dtype, *n);
      });
      out.stages.push_back(stage);
    }
    out.tensors.clear();
    for (const auto& decl : p.tensors)
      if (decl.name != t.name) out.tensors.push_back(decl);
    return out;
  }

  isl::ctx ctx_;
  const InlineOptions& options_;
  Remarks& remarks_;
};

}  // namespace

te::Program inlineElementwise(isl::ctx ctx, const te::Program& program, const InlineOptions& options,
                              Remarks& remarks) {
  return Inliner(ctx, options, remarks).run(program);
}

}  // namespace tessel::fuse
