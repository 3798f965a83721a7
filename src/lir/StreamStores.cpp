#include "lir/StreamStores.h"

#include <set>

namespace tessel::lir {

namespace {

// Copies of the statements with the vector-loop stores into `outputs` marked.
Stmt markIn(const Stmt& s, const std::set<std::string>& outputs, bool inVectorLoop) {
  if (!s) return s;
  switch (s->kind) {
    case StmtKind::Store: {
      if (!inVectorLoop || !outputs.count(s->name)) return s;
      auto copy = std::make_shared<StmtNode>(*s);
      copy->streaming = true;
      return copy;
    }
    case StmtKind::Block:
    case StmtKind::For:
    case StmtKind::If: {
      auto copy = std::make_shared<StmtNode>(*s);
      bool vector = inVectorLoop || (s->kind == StmtKind::For && s->vectorLanes > 0);
      for (auto& c : copy->body) c = markIn(c, outputs, vector);
      copy->thenCase = markIn(s->thenCase, outputs, vector);
      copy->elseCase = markIn(s->elseCase, outputs, vector);
      return copy;
    }
    case StmtKind::Let:
    case StmtKind::Alloc:
    case StmtKind::Call:
      return s;
  }
  return s;
}

}  // namespace

Kernel markStreamingStores(const Kernel& kernel, int64_t minBytes, std::string& explain) {
  if (kernel.vectorIsa.empty()) return kernel;
  std::set<std::string> outputs;
  for (const auto& out : kernel.outputs) {
    int64_t bytes = out.numElements() * te::dtypeBytes(out.dtype);
    if (out.dtype != te::DType::F32 || bytes < minBytes) continue;
    if (readsBuffer(kernel.body, out.name)) {
      explain += "output " + out.name + ": cached stores (the kernel reads it back)\n";
      continue;
    }
    outputs.insert(out.name);
    explain += "output " + out.name + ": streaming stores (" + std::to_string(bytes) + " bytes, at least " +
               std::to_string(minBytes) + ")\n";
  }
  if (outputs.empty()) return kernel;
  Kernel k = kernel;
  k.body = markIn(kernel.body, outputs, false);
  k.streamsStores = true;
  return k;
}

}  // namespace tessel::lir
