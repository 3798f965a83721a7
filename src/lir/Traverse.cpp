#include "lir/Traverse.h"

namespace tessel::lir {

Stmt StmtMutator::mutate(const Stmt& s) {
  if (!s) return s;
  switch (s->kind) {
    case StmtKind::Block:
      return mutateBlock(s);
    case StmtKind::If:
      return mutateIf(s);
    case StmtKind::For:
      return mutateFor(s);
    case StmtKind::Let:
      return mutateLet(s);
    case StmtKind::Store:
      return mutateStore(s);
    case StmtKind::Alloc:
      return mutateAlloc(s);
    case StmtKind::Call:
      return mutateCall(s);
  }
  return s;
}

Stmt StmtMutator::mutateBlock(const Stmt& s) {
  std::vector<Stmt> body;
  body.reserve(s->body.size());
  for (const auto& c : s->body) body.push_back(mutate(c));
  return block(std::move(body));
}

Stmt StmtMutator::mutateIf(const Stmt& s) {
  return ifThenElse(s->cond, mutate(s->thenCase), mutate(s->elseCase));
}

Stmt StmtMutator::mutateFor(const Stmt& s) { return forWithMutatedBody(s); }

Stmt StmtMutator::forWithMutatedBody(const Stmt& s) {
  auto copy = std::make_shared<StmtNode>(*s);
  copy->body = {mutate(s->body[0])};
  return copy;
}

void StmtVisitor::visit(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Block:
      return visitBlock(s);
    case StmtKind::If:
      return visitIf(s);
    case StmtKind::For:
      return visitFor(s);
    case StmtKind::Let:
      return visitLet(s);
    case StmtKind::Store:
      return visitStore(s);
    case StmtKind::Alloc:
      return visitAlloc(s);
    case StmtKind::Call:
      return visitCall(s);
  }
}

void StmtVisitor::visitBlock(const Stmt& s) {
  for (const auto& c : s->body) visit(c);
}

void StmtVisitor::visitIf(const Stmt& s) {
  visit(s->thenCase);
  visit(s->elseCase);
}

void StmtVisitor::visitFor(const Stmt& s) { visit(s->body[0]); }

}  // namespace tessel::lir
