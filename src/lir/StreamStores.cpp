#include "lir/StreamStores.h"

#include <set>

#include "lir/Traverse.h"

namespace tessel::lir {

namespace {

// Copies of the statements with the vector-loop stores into `outputs` marked.
class StreamingStoreMarker final : public StmtMutator {
 public:
  explicit StreamingStoreMarker(const std::set<std::string>& outputs) : outputs_(outputs) {}

 protected:
  Stmt mutateStore(const Stmt& s) override {
    if (!inVectorLoop_ || !outputs_.count(s->name)) return s;
    auto copy = std::make_shared<StmtNode>(*s);
    copy->streaming = true;
    return copy;
  }
  Stmt mutateFor(const Stmt& s) override {
    bool outside = inVectorLoop_;
    inVectorLoop_ = inVectorLoop_ || s->vectorLanes > 0;
    Stmt loop = forWithMutatedBody(s);
    inVectorLoop_ = outside;
    return loop;
  }

 private:
  const std::set<std::string>& outputs_;
  bool inVectorLoop_ = false;
};

}  // namespace

Kernel markStreamingStores(const Kernel& kernel, int64_t minBytes, Remarks& remarks) {
  if (kernel.vectorIsa.empty()) return kernel;
  std::set<std::string> outputs;
  for (const auto& out : kernel.outputs) {
    int64_t bytes = out.numElements() * te::dtypeBytes(out.dtype);
    if (out.dtype != te::DType::F32 || bytes < minBytes) continue;
    if (readsBuffer(kernel.body, out.name)) {
      remarks.missed(out.name, "output " + out.name + ": cached stores (the kernel reads it back)",
                     {{"reason", "the kernel reads it back"}, {"bytes", bytes}, {"min_bytes", minBytes}});
      continue;
    }
    outputs.insert(out.name);
    remarks.applied(out.name,
                    "output " + out.name + ": streaming stores (" + std::to_string(bytes) +
                        " bytes, at least " + std::to_string(minBytes) + ")",
                    {{"bytes", bytes}, {"min_bytes", minBytes}});
  }
  if (outputs.empty()) return kernel;
  Kernel k = kernel;
  k.body = StreamingStoreMarker(outputs).mutate(kernel.body);
  k.streamsStores = true;
  return k;
}

}  // namespace tessel::lir
