#include "fuse/InlineElementwise.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
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

class Inliner {
 public:
  Inliner(isl::ctx ctx, std::string& explain) : ctx_(ctx), explain_(explain) {}

  te::Program run(te::Program program) {
    std::map<std::string, std::string> kept;  // temporary -> why, from the last look
    // Each inlining may make its reader inlinable: look again until nothing changes.
    for (bool changed = true; changed;) {
      changed = false;
      kept.clear();
      poly::Scop scop = poly::extractScop(ctx_, program);
      for (size_t s = 0; s < program.stages.size(); ++s) {
        const te::Stage& stage = program.stages[s];
        const te::TensorDecl& t = program.tensor(stage.output);
        if (t.role != te::TensorRole::Temporary || stage.reduction != te::Reduction::None ||
            !stage.existsReads.empty())
          continue;
        if (auto why = whyKept(program, scop, s)) {
          kept[t.name] = *why;
          continue;
        }
        explain_ += "inline: " + t.name + " inlined into " + readerNames(program, t.name) + "\n";
        program = inlined(program, s);
        changed = true;
        break;
      }
    }
    for (const auto& [name, why] : kept) explain_ += "inline: " + name + " kept (" + why + ")\n";
    return program;
  }

 private:
  static std::string readerNames(const te::Program& p, const std::string& tensor) {
    std::string out;
    for (const auto& stage : p.stages)
      if (!readsIn(stage.rhs, tensor).empty()) out += (out.empty() ? "" : ", ") + stage.output;
    return out;
  }

  // Why stage `s` cannot be inlined, or nothing when it can.
  std::optional<std::string> whyKept(const te::Program& p, const poly::Scop& scop, size_t s) const {
    const te::Stage& producer = p.stages[s];
    const std::string& t = producer.output;
    std::vector<size_t> readers;
    for (size_t k = 0; k < p.stages.size(); ++k) {
      const te::Stage& stage = p.stages[k];
      if (k != s && stage.output == t) return "another stage writes it too";
      for (const auto& e : stage.existsReads)
        if (!readsIn(e, t).empty()) return "a `where exists` names it";
      std::vector<const te::ExprNode*> found = readsIn(stage.rhs, t);
      size_t reads = found.size();
      if (reads == 0) continue;
      if (k <= s) return "it reads itself or is read before it is written";
      if (reads > 1) return "a reader reads it at " + std::to_string(reads) + " places";
      for (const auto& index : found.front()->operands)
        if (!te::toAffine(index)) return "a read's index is not affine";
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
    for (const auto& statement : scop.statements) {
      if (statement.kind == poly::StatementKind::Init || readsIn(p.stages[statement.stage].rhs, t).empty())
        continue;
      isl::union_map relation = target::readsOf(scop, isl::union_set(statement.domain), t);
      isl::union_set elements = relation.range();
      if (!relation.is_injective() || !elements.intersect(read).is_empty())
        return "some element is read more than once";
      if (!elements.is_subset(written)) return "a reader reads elements it does not write";
      read = read.unite(elements);
    }
    return std::nullopt;
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
  std::string& explain_;
};

}  // namespace

te::Program inlineElementwise(isl::ctx ctx, const te::Program& program, std::string& explain) {
  return Inliner(ctx, explain).run(program);
}

}  // namespace tessel::fuse
