#include "lir/Vectorize.h"

#include "lir/Traverse.h"
#include "lir/VectorLoop.h"

namespace tessel::lir {

namespace {

class Vectorizer final : public StmtMutator {
 public:
  Vectorizer(const Kernel& k, int lanes, Remarks& remarks) : lanes_(lanes), remarks_(remarks) {
    for (const auto* list : {&k.inputs, &k.outputs, &k.temporaries, &k.locals})
      for (const auto& b : *list) buffers_[b.name] = b.dtype;
  }

  Stmt mutateFor(const Stmt& s) override {
    if (s->transposeBlock && lanes_ > 0)
      if (Stmt blocked = transposeBlock(s)) return blocked;
    if (s->vector != VectorHint::None && lanes_ > 0) {
      std::string why = whyNotVectorizable(*s, buffers_);
      // A vector with a handful of active lanes costs more than the scalar
      // iterations, except for independent iterations under a loop the
      // register tiler unrolls and jams: there it lets the rows'
      // accumulators stay in registers (a matmul's last 3 columns; see
      // docs/performance.md, "Remainders"). A short reduction stays scalar:
      // its lanes would need a horizontal sum per row.
      std::optional<int64_t> trips = constantTripCount(*s);
      bool registerTiled = insideUnrollJam_ && s->vector == VectorHint::Independent;
      if (why.empty() && trips && *trips < 4 && !registerTiled)
        why = "it runs only " + std::to_string(*trips) + " iteration" + (*trips == 1 ? "" : "s");
      if (why.empty()) {
        auto copy = std::make_shared<StmtNode>(*s);
        copy->vectorLanes = lanes_;
        const bool reduction = s->vector == VectorHint::Reduction;
        remarks_.applied(s->name,
                         "loop " + s->name + ": vectorized, " + std::to_string(lanes_) + " f32 lanes" +
                             (reduction ? " (reduction)" : ""),
                         {{"lanes", lanes_}, {"reduction", reduction}});
        ++vectorized_;
        return copy;
      }
      remarks_.missed(s->name, "loop " + s->name + ": not vectorized: " + why, {{"reason", why}});
    }
    if (!s->unrollJam) return forWithMutatedBody(s);
    bool outer = insideUnrollJam_;
    insideUnrollJam_ = true;
    Stmt out = forWithMutatedBody(s);
    insideUnrollJam_ = outer;
    return out;
  }

  int vectorized() const { return vectorized_; }

 private:
  // `outer` in blocks of the lane count around its vector loop, when that
  // loop is vectorizable only with its reads contiguous along `outer`
  // transposed through registers; nullptr otherwise.
  Stmt transposeBlock(const Stmt& outer) {
    const Stmt& body = outer->body[0];
    Stmt inner = body->kind == StmtKind::Block && body->body.size() == 1 ? body->body[0] : body;
    if (inner->kind != StmtKind::For || inner->vector != VectorHint::Independent) return nullptr;
    if (whyNotVectorizable(*inner, buffers_).empty()) return nullptr;  // plain vector code suffices
    // The blocks interleave the inner loop's iterations of several outer ones.
    std::string why = whyNotStepOneUpTo(*outer);
    if (why.empty() && (dependsOn(inner->init, outer->name) || dependsOn(inner->cond, outer->name) ||
                        dependsOn(inner->step, outer->name)))
      why = "the bounds of loop " + inner->name + " depend on it";
    if (why.empty()) why = whyNotVectorizable(*inner, buffers_, outer->name);
    if (!why.empty()) {
      remarks_.missed(outer->name, "loop " + outer->name + ": not run in transpose blocks: " + why,
                      {{"reason", why}, {"vector_loop", inner->name}});
      return nullptr;
    }
    auto vectorLoop = std::make_shared<StmtNode>(*inner);
    vectorLoop->vectorLanes = lanes_;
    auto copy = std::make_shared<StmtNode>(*outer);
    copy->transposeLanes = lanes_;
    copy->body = {vectorLoop};
    const std::string transpose = std::to_string(lanes_) + "x" + std::to_string(lanes_);
    remarks_.applied(outer->name,
                     "loop " + outer->name + ": in blocks of " + std::to_string(lanes_) +
                         " around vector loop " + inner->name + ", its reads contiguous along " +
                         outer->name + " transposed in registers (" + transpose + ")",
                     {{"lanes", lanes_}, {"vector_loop", inner->name}, {"transpose", transpose}});
    ++vectorized_;
    return copy;
  }

  int lanes_;
  Remarks& remarks_;
  BufferTypes buffers_;
  int vectorized_ = 0;
  bool insideUnrollJam_ = false;  // mutating the body of a loop marked unroll-jam
};

}  // namespace

int f32Lanes(const std::string& isa) {
  if (isa == "avx512") return 16;
  if (isa == "avx2") return 8;
  return 0;
}

Kernel vectorizeLoops(const Kernel& kernel, const std::string& isa, Remarks& remarks) {
  Kernel out = kernel;
  Vectorizer v(kernel, f32Lanes(isa), remarks);
  out.body = v.mutate(kernel.body);
  out.vectorIsa = v.vectorized() > 0 ? isa : "";
  return out;
}

}  // namespace tessel::lir
