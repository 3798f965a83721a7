// What the oneDNN peer's operators (OneDnnPeer.cpp) and its op-by-op graph
// runner (OneDnnGraph.cpp) share: a prepared run (the timed primitives, the
// reorders kept apart, the outputs) and the descriptors both build. Only for
// sources compiled with TESSEL_HAVE_ONEDNN.
#pragma once

#include <deque>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/OperatorShapes.h"
#include "bench/Peer.h"

namespace tessel::bench::onednn {

using dnnl::algorithm;
using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;
constexpr auto kInference = dnnl::prop_kind::forward_inference;

inline Dims rowMajorStrides(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// Rank-0 tensors (a full reduction's result) are one-element 1-D tensors here.
inline Dims dimsOf(const std::vector<int64_t>& shape) {
  if (shape.empty()) return {1};
  return Dims(shape.begin(), shape.end());
}

inline memory::desc plainDesc(const Dims& dims, memory::data_type type = kF32) {
  return memory::desc(dims, type, rowMajorStrides(dims));
}

// The oneDNN type of a Tessel dtype the peer can hold; PeerError for the others.
inline memory::data_type dataTypeOf(te::DType t) {
  switch (t) {
    case te::DType::F32:
      return memory::data_type::f32;
    case te::DType::F16:
      return memory::data_type::f16;
    case te::DType::BF16:
      return memory::data_type::bf16;
    default:
      throw PeerError(std::string("oneDNN holds no ") + te::dtypeName(t) + " tensors here");
  }
}

struct Call {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
};

class OneDnnRun : public PreparedPeer {
 public:
  OneDnnRun(dnnl::engine engine, dnnl::stream stream)
      : engine_(std::move(engine)), stream_(std::move(stream)) {}

  void run() override { execute(timed_); }
  std::vector<runtime::Buffer> outputs() override {
    execute(outputReorders_);
    return {outputs_.begin(), outputs_.end()};
  }
  std::vector<SideStep> sideSteps() override {
    std::vector<SideStep> steps;
    if (!inputReorders_.empty() || !outputReorders_.empty())
      steps.push_back({"activation reorders", [this] {
                         execute(inputReorders_);
                         execute(outputReorders_);
                       }});
    if (!weightReorders_.empty()) steps.push_back({"weight reorder", [this] { execute(weightReorders_); }});
    return steps;
  }

  // oneDNN memory over a Buffer's storage (inputs are only read).
  memory wrap(const memory::desc& md, const runtime::Buffer& b) {
    return memory(md, engine_, const_cast<void*>(b.data()));
  }
  // A fresh output of `shape`, in the program's row-major layout; outputs()
  // returns them in the order they were made.
  memory newOutput(const std::vector<int64_t>& shape, const memory::desc& md,
                   te::DType dtype = te::DType::F32) {
    outputs_.emplace_back(dtype, shape);
    return memory(md, engine_, outputs_.back().data());
  }
  // `user` in the layout `wanted` asks for: the same memory, or a copy filled
  // by a reorder that runs now and is kept as a side step.
  memory toLayout(const memory& user, const memory::desc& wanted, std::vector<Call>& reorders) {
    if (user.get_desc() == wanted) return user;
    memory converted(wanted, engine_);
    reorders.push_back({dnnl::reorder(user, converted), {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, converted}}});
    execute({reorders.back()});
    return converted;
  }
  // An output computed in layout `computed` and reordered into `user` after each run.
  memory fromLayout(const memory& user, const memory::desc& computed) {
    if (user.get_desc() == computed) return user;
    memory produced(computed, engine_);
    outputReorders_.push_back(
        {dnnl::reorder(produced, user), {{DNNL_ARG_FROM, produced}, {DNNL_ARG_TO, user}}});
    return produced;
  }

  void addTimed(dnnl::primitive p, std::unordered_map<int, memory> args) {
    timed_.push_back({std::move(p), std::move(args)});
  }
  std::vector<Call>& inputReorders() { return inputReorders_; }
  std::vector<Call>& weightReorders() { return weightReorders_; }
  const dnnl::engine& engine() const { return engine_; }
  // Scratch buffers owned by the run (|Var|, for instance).
  runtime::Buffer& keep(runtime::Buffer b) {
    kept_.push_back(std::move(b));
    return kept_.back();
  }
  // Memory of layout `md` the run owns (an intermediate): views made over
  // its storage stay valid as long as the run.
  memory scratch(const memory::desc& md) {
    runtime::Buffer& b = keep(runtime::Buffer(te::DType::U8, {static_cast<int64_t>(md.get_size())}));
    return memory(md, engine_, b.data());
  }

 private:
  void execute(const std::vector<Call>& calls) {
    try {
      for (const auto& c : calls) c.primitive.execute(stream_, c.args);
      stream_.wait();
    } catch (const dnnl::error& e) {
      throw PeerError(std::string("oneDNN: ") + e.what());
    }
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::vector<Call> timed_, inputReorders_, outputReorders_, weightReorders_;
  std::deque<runtime::Buffer> outputs_;  // deques: references handed out stay valid
  std::deque<runtime::Buffer> kept_;
};

// A convolution's tensors as oneDNN sees them: NCHW source, (K, C, KH, KW)
// weights (depthwise: (C, 1, 1, KH, KW), groups = C), NKHW destination.
struct ConvTensors {
  Dims src, weights, dst;
  Tag weightsTag;
};

inline ConvTensors convTensors(const ConvShape& c, bool depthwise) {
  return {{c.n, c.c, c.h.in, c.w.in},
          depthwise ? Dims{c.c, 1, 1, c.h.kernel, c.w.kernel} : Dims{c.k, c.c, c.h.kernel, c.w.kernel},
          {c.n, c.k, c.h.out, c.w.out},
          depthwise ? Tag::goihw : Tag::oihw};
}

// format_tag::any: oneDNN picks its blocked layouts; converting into and out
// of them is what a framework pays at the edges of a blocked graph. `bias`
// may be a zero desc (no bias).
inline dnnl::convolution_forward::primitive_desc convPrimitive(const dnnl::engine& engine, const ConvShape& c,
                                                               bool depthwise, const memory::desc& bias = {},
                                                               const dnnl::primitive_attr& attr = {}) {
  ConvTensors t = convTensors(c, depthwise);
  dnnl::convolution_forward::desc d(
      kInference, algorithm::convolution_direct, memory::desc(t.src, kF32, Tag::any),
      memory::desc(t.weights, kF32, Tag::any), bias, memory::desc(t.dst, kF32, Tag::any),
      {c.h.stride, c.w.stride}, {c.h.padBefore, c.w.padBefore}, {c.h.padAfter, c.w.padAfter});
  return dnnl::convolution_forward::primitive_desc(d, attr, engine);
}

}  // namespace tessel::bench::onednn
