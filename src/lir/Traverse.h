// Traversals of the loop IR (as Halide's IRVisitor and IRMutator): a pass
// overrides the statement kinds it cares about; the others are walked
// (StmtVisitor) or rebuilt around their rewritten children (StmtMutator).
#pragma once

#include "lir/Lir.h"

namespace tessel::lir {

class StmtMutator {
 public:
  virtual ~StmtMutator() = default;
  Stmt mutate(const Stmt& s);  // a null statement stays null

 protected:
  virtual Stmt mutateBlock(const Stmt& s);  // each statement of the block
  virtual Stmt mutateIf(const Stmt& s);     // both branches
  virtual Stmt mutateFor(const Stmt& s);    // the body
  virtual Stmt mutateLet(const Stmt& s) { return s; }
  virtual Stmt mutateStore(const Stmt& s) { return s; }
  virtual Stmt mutateAlloc(const Stmt& s) { return s; }
  virtual Stmt mutateCall(const Stmt& s) { return s; }
  // A copy of the loop `s` with its body mutated.
  Stmt forWithMutatedBody(const Stmt& s);
};

class StmtVisitor {
 public:
  virtual ~StmtVisitor() = default;
  void visit(const Stmt& s);  // a null statement is skipped

 protected:
  virtual void visitBlock(const Stmt& s);  // each statement of the block
  virtual void visitIf(const Stmt& s);     // both branches
  virtual void visitFor(const Stmt& s);    // the body
  virtual void visitLet(const Stmt&) {}
  virtual void visitStore(const Stmt&) {}
  virtual void visitAlloc(const Stmt&) {}
  virtual void visitCall(const Stmt&) {}
};

}  // namespace tessel::lir
