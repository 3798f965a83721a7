#include "lir/ThreadVersions.h"

#include <sstream>

#include "lir/Traverse.h"

namespace tessel::lir {

namespace {

// Every parallel loop (they do not nest) as `if (threads > 1) loop else serial copy`.
class ThreadVersioner final : public StmtMutator {
 public:
  int versioned = 0;

 protected:
  Stmt mutateFor(const Stmt& s) override {
    if (!s->parallel) return forWithMutatedBody(s);
    auto serial = std::make_shared<StmtNode>(*s);
    serial->parallel = false;
    ++versioned;
    return ifThenElse(indexBinary(te::BinaryOp::Gt, indexVar(kThreadCountVar), indexImm(1)), s, serial);
  }
};

}  // namespace

Kernel versionParallelLoopsByThreads(const Kernel& kernel, Remarks& remarks) {
  if (kernel.work >= kMaxWorkForThreadVersions) return kernel;
  ThreadVersioner versioner;
  Kernel out = kernel;
  out.body = versioner.mutate(kernel.body);
  if (versioner.versioned == 0) return kernel;
  out.readsThreadCount = true;
  std::ostringstream message;
  message << "kernel: " << versioner.versioned << " parallel loop(s) with a serial copy for one thread (work "
          << kernel.work << ", below " << kMaxWorkForThreadVersions << ")";
  remarks.applied("kernel", message.str(), {{"parallel_loops", versioner.versioned}, {"work", kernel.work}});
  return out;
}

}  // namespace tessel::lir
