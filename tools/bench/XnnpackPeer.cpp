#include "bench/XnnpackPeer.h"

#include <cmath>
#include <cstring>
#include <deque>
#include <functional>

#include "bench/OperatorShapes.h"

#ifdef TESSEL_HAVE_XNNPACK
#include <pthreadpool.h>
#include <xnnpack.h>
#endif

namespace tessel::bench {

namespace {

const std::vector<PeerOperator>& xnnpackOperators() {
  static const std::vector<PeerOperator> ops = {
      {"fully_connected",
       "C(m,n) +=! A(m,k) * B(k,n)  (B may be read transposed; weights packed at creation)"},
      {"conv2d", "2-D convolution, computed in NHWC (tensors converted outside the timed region)"},
      {"depthwise_conv", "depthwise 2-D convolution, W(c,kh,kw) (or NHWC with W(kh,kw,c)), computed in NHWC"},
      {"add", "O = A + B  (broadcasting)"},
      {"mul", "O = A * B  (broadcasting)"},
      {"add_relu", "O = fmax(A + B, 0)  (the clamp fused into the add)"},
      {"add_relu_mul", "O = fmax(A + B, 0) * C  (two operators)"},
      {"relu", "O = fmax(I, 0)  (clamp)"},
      {"sigmoid", "O = 1 / (1 + exp(-I))"},
      {"softmax", "softmax over the last dimension"},
      {"maxpool", "2-D max pooling, computed in NHWC"},
      {"avgpool", "2-D average pooling, computed in NHWC"},
  };
  return ops;
}

#ifdef TESSEL_HAVE_XNNPACK

using Pool = std::shared_ptr<pthreadpool>;

void check(xnn_status status, const char* what) {
  if (status != xnn_status_success)
    throw PeerError(std::string("XNNPACK ") + what + " failed (status " + std::to_string(status) + ")");
}

// Every operator lets its pool's workers sleep once it is done: spinning
// workers starve the OpenMP threads of the contestant timed next (Tessel's
// 2-thread softmax ran at 1-thread speed beside a spinning pool).
constexpr uint32_t kYield = XNN_FLAG_YIELD_WORKERS;

// XNNPACK may read up to XNN_EXTRA_BYTES past the end of the arrays it
// reads, so every array it reads is one of these (flat, with that slack).
runtime::Buffer paddedBuffer(int64_t elements) {
  return runtime::Buffer(te::DType::F32, {elements + XNN_EXTRA_BYTES / static_cast<int64_t>(sizeof(float))});
}

runtime::Buffer paddedCopy(const runtime::Buffer& in) {
  runtime::Buffer out = paddedBuffer(in.size());
  std::memcpy(out.data(), in.data(), static_cast<size_t>(in.bytes()));
  return out;
}

// Layout conversions, run outside the timed region. `s` is the tensor's
// logical shape: the buffers XNNPACK reads are flat.
runtime::Buffer nchwToNhwc(const runtime::Buffer& in, const std::vector<int64_t>& s) {
  int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  runtime::Buffer out = paddedBuffer(n * c * h * w);
  const float* src = static_cast<const float*>(in.data());
  float* dst = static_cast<float*>(out.data());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < h * w; ++i) dst[(b * h * w + i) * c + ch] = src[(b * c + ch) * h * w + i];
  return out;
}

void nhwcToNchw(const runtime::Buffer& in, runtime::Buffer& out) {
  const auto& s = out.shape();
  int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  const float* src = static_cast<const float*>(in.data());
  float* dst = static_cast<float*>(out.data());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < h * w; ++i) dst[(b * c + ch) * h * w + i] = src[(b * h * w + i) * c + ch];
}

// Weights (K, C, KH, KW) -> XNNPACK's (K, KH, KW, C).
runtime::Buffer kcrsToKrsc(const runtime::Buffer& in, const std::vector<int64_t>& s) {
  int64_t k = s[0], c = s[1], r = s[2] * s[3];
  runtime::Buffer out = paddedBuffer(k * c * r);
  const float* src = static_cast<const float*>(in.data());
  float* dst = static_cast<float*>(out.data());
  for (int64_t o = 0; o < k; ++o)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < r; ++i) dst[(o * r + i) * c + ch] = src[(o * c + ch) * r + i];
  return out;
}

// (KH, KW, C, K) weights -> XNNPACK's (K, KH, KW, C).
runtime::Buffer rsckToKrsc(const runtime::Buffer& in, const std::vector<int64_t>& s) {
  int64_t r = s[0] * s[1], c = s[2], k = s[3];
  runtime::Buffer out = paddedBuffer(k * c * r);
  const float* src = static_cast<const float*>(in.data());
  float* dst = static_cast<float*>(out.data());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t o = 0; o < k; ++o) dst[(o * r + i) * c + ch] = src[(i * c + ch) * k + o];
  return out;
}

const float* f32(const runtime::Buffer& b) { return static_cast<const float*>(b.data()); }
float* f32(runtime::Buffer& b) { return static_cast<float*>(b.data()); }

class XnnRun : public PreparedPeer {
 public:
  explicit XnnRun(Pool pool) : pool_(std::move(pool)) {}
  ~XnnRun() override {
    for (xnn_operator_t op : ops_) xnn_delete_operator(op);
  }

  void run() override {
    for (xnn_operator_t op : ops_) check(xnn_run_operator(op, pool_.get()), "run");
  }
  std::vector<runtime::Buffer> outputs() override {
    if (toProgramLayout_) toProgramLayout_();
    return {outputs_.begin(), outputs_.end()};
  }

  pthreadpool_t pool() const { return pool_.get(); }
  // Takes ownership of a created operator; operators run in the order added.
  void add(xnn_operator_t op) { ops_.push_back(op); }
  runtime::Buffer& keep(runtime::Buffer b) {
    kept_.push_back(std::move(b));
    return kept_.back();
  }
  runtime::Buffer& newOutput(const std::vector<int64_t>& shape) {
    outputs_.emplace_back(te::DType::F32, shape);
    return outputs_.back();
  }
  // Converts the peer's result into the program's layout after each run.
  std::function<void()> toProgramLayout_;

 private:
  Pool pool_;
  std::vector<xnn_operator_t> ops_;
  std::deque<runtime::Buffer> kept_;     // converted inputs, packed-weight sources, intermediates
  std::deque<runtime::Buffer> outputs_;  // deques: references handed out stay valid
};

std::vector<size_t> sizesOf(const std::vector<int64_t>& dims) {
  if (dims.empty()) return {1};
  return std::vector<size_t>(dims.begin(), dims.end());
}

void prepareFullyConnected(XnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in) {
  MatmulShape m = matmulShape(p);
  if (m.batched || m.transA) throw PeerError("fully_connected computes A(m,k) B with a plain 2-D A");
  // XNNPACK's kernel is (output channels, input channels) = B(n, k); a B(k, n) needs the flag.
  uint32_t flags = kYield | (m.transB ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS);
  xnn_operator_t op = nullptr;
  check(xnn_create_fully_connected_nc_f32(m.k, m.n, m.k, m.n, f32(in[m.bInput]), nullptr, -INFINITY, INFINITY,
                                          flags, &op),
        "create fully_connected");
  r.add(op);
  runtime::Buffer& c = r.newOutput(p.outputs()[0]->shape);
  check(xnn_setup_fully_connected_nc_f32(op, m.m, f32(in[m.aInput]), f32(c), r.pool()),
        "setup fully_connected");
  r.notes.push_back("weights packed when the operator is created, outside the timed region");
}

void prepareConv(XnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in, bool depthwise) {
  ConvShape c = convShape(p, depthwise);
  // XNNPACK may read a little past its input: it gets a padded copy either way.
  const runtime::Buffer& input = r.keep(c.nhwc ? paddedCopy(in[0]) : nchwToNhwc(in[0], p.inputs()[0]->shape));
  // Depthwise (C, KH, KW) weights already are XNNPACK's (groups, 1, KH, KW, 1); NHWC depthwise
  // (KH, KW, C) weights are its HWGo layout, which XNN_FLAG_DEPTHWISE_CONVOLUTION selects.
  const runtime::Buffer& weights = depthwise ? in[1]
                                   : c.nhwc  ? r.keep(rsckToKrsc(in[1], p.inputs()[1]->shape))
                                             : r.keep(kcrsToKrsc(in[1], p.inputs()[1]->shape));
  size_t groupIn = depthwise ? 1 : c.c, groupOut = depthwise ? 1 : c.k;
  uint32_t flags = kYield | (depthwise && c.nhwc ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0);
  xnn_operator_t op = nullptr;
  check(
      xnn_create_convolution2d_nhwc_f32(c.h.padBefore, c.w.padAfter, c.h.padAfter, c.w.padBefore, c.h.kernel,
                                        c.w.kernel, c.h.stride, c.w.stride, 1, 1, c.groups, groupIn, groupOut,
                                        c.c, c.k, f32(weights), nullptr, -INFINITY, INFINITY, flags, &op),
      "create convolution");
  r.add(op);
  runtime::Buffer& out = r.newOutput(p.outputs()[0]->shape);
  if (c.nhwc) {
    check(xnn_setup_convolution2d_nhwc_f32(op, c.n, c.h.in, c.w.in, f32(input), f32(out), r.pool()),
          "setup convolution");
    r.notes.push_back("weights packed at creation");
    return;
  }
  runtime::Buffer& nhwcOut = r.keep(runtime::Buffer(te::DType::F32, {c.n, c.h.out, c.w.out, c.k}));
  check(xnn_setup_convolution2d_nhwc_f32(op, c.n, c.h.in, c.w.in, f32(input), f32(nhwcOut), r.pool()),
        "setup convolution");
  r.toProgramLayout_ = [&nhwcOut, &out] { nhwcToNchw(nhwcOut, out); };
  r.notes.push_back(
      "input NCHW -> NHWC and output NHWC -> NCHW outside the timed region; weights packed at creation");
}

void preparePool(XnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in, bool max) {
  PoolShape ps = poolShape(p);
  if (ps.reduction != (max ? te::Reduction::Max : te::Reduction::Sum))
    throw PeerError(max ? "max pooling is a 'max=!' stage" : "average pooling is a '+=!' stage");
  runtime::Buffer& input = r.keep(nchwToNhwc(in[0], p.inputs()[0]->shape));
  runtime::Buffer& nhwcOut = r.keep(runtime::Buffer(te::DType::F32, {ps.n, ps.h.out, ps.w.out, ps.c}));
  runtime::Buffer& out = r.newOutput(p.outputs()[0]->shape);
  xnn_operator_t op = nullptr;
  if (max) {
    check(xnn_create_max_pooling2d_nhwc_f32(ps.h.padBefore, ps.w.padAfter, ps.h.padAfter, ps.w.padBefore,
                                            ps.h.kernel, ps.w.kernel, ps.h.stride, ps.w.stride, 1, 1, ps.c,
                                            ps.c, ps.c, -INFINITY, INFINITY, kYield, &op),
          "create max pooling");
    r.add(op);
    check(xnn_setup_max_pooling2d_nhwc_f32(op, ps.n, ps.h.in, ps.w.in, f32(input), f32(nhwcOut), r.pool()),
          "setup max pooling");
  } else {
    check(xnn_create_average_pooling2d_nhwc_f32(ps.h.padBefore, ps.w.padAfter, ps.h.padAfter, ps.w.padBefore,
                                                ps.h.kernel, ps.w.kernel, ps.h.stride, ps.w.stride, ps.c,
                                                ps.c, ps.c, -INFINITY, INFINITY, kYield, &op),
          "create average pooling");
    r.add(op);
    check(
        xnn_setup_average_pooling2d_nhwc_f32(op, ps.n, ps.h.in, ps.w.in, f32(input), f32(nhwcOut), r.pool()),
        "setup average pooling");
  }
  r.toProgramLayout_ = [&nhwcOut, &out] { nhwcToNchw(nhwcOut, out); };
  r.notes.push_back("input NCHW -> NHWC and output NHWC -> NCHW outside the timed region");
}

// A binary operator over the program's first two inputs, broadcasting, into `out`.
void addBinary(XnnRun& r, const te::Program& p, const std::string& a, const std::string& b,
               const runtime::Buffer& aBuf, const runtime::Buffer& bBuf, runtime::Buffer& out, bool multiply,
               float outMin) {
  auto aDims = sizesOf(broadcastDims(p, a)), bDims = sizesOf(broadcastDims(p, b));
  xnn_operator_t op = nullptr;
  if (multiply) {
    check(xnn_create_multiply_nd_f32(outMin, INFINITY, kYield, &op), "create multiply");
    r.add(op);
    check(xnn_setup_multiply_nd_f32(op, aDims.size(), aDims.data(), bDims.size(), bDims.data(), f32(aBuf),
                                    f32(bBuf), f32(out), r.pool()),
          "setup multiply");
  } else {
    check(xnn_create_add_nd_f32(outMin, INFINITY, kYield, &op), "create add");
    r.add(op);
    check(xnn_setup_add_nd_f32(op, aDims.size(), aDims.data(), bDims.size(), bDims.data(), f32(aBuf),
                               f32(bBuf), f32(out), r.pool()),
          "setup add");
  }
}

void prepareBinary(XnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in, bool multiply,
                   bool relu, bool thenMul) {
  requireF32Signature(p, thenMul ? 3 : 2, 1);
  auto ins = p.inputs();
  auto shape = p.outputs()[0]->shape;
  if (!thenMul) {
    addBinary(r, p, ins[0]->name, ins[1]->name, in[0], in[1], r.newOutput(shape), multiply,
              relu ? 0.f : -INFINITY);
    return;
  }
  runtime::Buffer& sum = r.keep(paddedBuffer(p.outputs()[0]->numElements()));
  addBinary(r, p, ins[0]->name, ins[1]->name, in[0], in[1], sum, false, 0.f);
  // The product reads the intermediate with the output's own dims.
  auto sumDims = sizesOf(shape), cDims = sizesOf(broadcastDims(p, ins[2]->name));
  runtime::Buffer& out = r.newOutput(shape);
  xnn_operator_t op = nullptr;
  check(xnn_create_multiply_nd_f32(-INFINITY, INFINITY, kYield, &op), "create multiply");
  r.add(op);
  check(xnn_setup_multiply_nd_f32(op, sumDims.size(), sumDims.data(), cDims.size(), cDims.data(), f32(sum),
                                  f32(in[2]), f32(out), r.pool()),
        "setup multiply");
  r.notes.push_back(
      "two operators (add with a [0, inf) clamp, then multiply) through an intermediate tensor");
}

// Unary operators over rows of the last dimension.
void prepareUnary(XnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in,
                  const std::string& op) {
  requireF32Signature(p, 1, 1);
  auto shape = p.outputs()[0]->shape;
  if (p.inputs()[0]->shape != shape) throw PeerError("the operator keeps its input's shape");
  size_t channels = shape.empty() ? 1 : shape.back();
  size_t rows = channels ? static_cast<size_t>(p.outputs()[0]->numElements()) / channels : 0;
  runtime::Buffer& out = r.newOutput(shape);
  xnn_operator_t x = nullptr;
  if (op == "relu") {
    check(xnn_create_clamp_nc_f32(channels, channels, channels, 0.f, INFINITY, kYield, &x), "create clamp");
    r.add(x);
    check(xnn_setup_clamp_nc_f32(x, rows, f32(in[0]), f32(out), r.pool()), "setup clamp");
  } else if (op == "sigmoid") {
    check(xnn_create_sigmoid_nc_f32(channels, channels, channels, kYield, &x), "create sigmoid");
    r.add(x);
    check(xnn_setup_sigmoid_nc_f32(x, rows, f32(in[0]), f32(out), r.pool()), "setup sigmoid");
  } else {
    if (shape.empty()) throw PeerError("softmax needs a dimension");
    check(xnn_create_softmax_nc_f32(channels, channels, channels, kYield, &x), "create softmax");
    r.add(x);
    check(xnn_setup_softmax_nc_f32(x, rows, f32(in[0]), f32(out), r.pool()), "setup softmax");
  }
}

class XnnpackFamily : public PeerFamily {
 public:
  XnnpackFamily() : initialized_(xnn_initialize(nullptr) == xnn_status_success) {}
  std::string name() const override { return "xnnpack"; }
  std::vector<PeerOperator> operators() const override { return xnnpackOperators(); }
  bool available() const override { return initialized_; }
  std::string version() const override { return initialized_ ? "XNNPACK (Debian, 2022 operator API)" : ""; }
  // One thread runs on the caller (no pool); more use a pool of that size.
  void setThreads(int threads) override {
    pool_ = threads > 1 ? Pool(pthreadpool_create(threads), pthreadpool_destroy) : Pool();
  }

  std::unique_ptr<PreparedPeer> prepare(const std::string& op, const te::Program& p,
                                        const std::vector<runtime::Buffer>& inputs) override {
    if (!initialized_) throw PeerError("xnn_initialize failed on this processor");
    auto r = std::make_unique<XnnRun>(pool_);
    std::vector<runtime::Buffer> in;
    for (const auto& b : inputs) in.push_back(r->keep(paddedCopy(b)));
    if (op == "fully_connected") {
      prepareFullyConnected(*r, p, in);
    } else if (op == "conv2d" || op == "depthwise_conv") {
      prepareConv(*r, p, in, op == "depthwise_conv");
    } else if (op == "maxpool" || op == "avgpool") {
      preparePool(*r, p, in, op == "maxpool");
    } else if (op == "add" || op == "mul" || op == "add_relu" || op == "add_relu_mul") {
      prepareBinary(*r, p, in, op == "mul", op == "add_relu" || op == "add_relu_mul", op == "add_relu_mul");
    } else if (op == "relu" || op == "sigmoid" || op == "softmax") {
      prepareUnary(*r, p, in, op);
    } else {
      throw PeerError("XNNPACK has no operator '" + op + "'");
    }
    r->notes.push_back("inputs copied outside the timed region into arrays with the " +
                       std::to_string(XNN_EXTRA_BYTES) + " readable bytes past the end XNNPACK requires");
    return r;
  }

 private:
  bool initialized_;
  Pool pool_;
};

#else

class XnnpackFamily : public PeerFamily {
 public:
  std::string name() const override { return "xnnpack"; }
  std::vector<PeerOperator> operators() const override { return xnnpackOperators(); }
  bool available() const override { return false; }
  std::string version() const override { return ""; }
  void setThreads(int) override {}
  std::unique_ptr<PreparedPeer> prepare(const std::string&, const te::Program&,
                                        const std::vector<runtime::Buffer>&) override {
    throw PeerError(
        "Tessel was built without XNNPACK (install libxnnpack-dev libpthreadpool-dev and reconfigure)");
  }
};

#endif

}  // namespace

std::unique_ptr<PeerFamily> makeXnnpackPeer() { return std::make_unique<XnnpackFamily>(); }

}  // namespace tessel::bench
