#include "bench/OneDnnPeer.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "bench/OperatorShapes.h"

#ifdef TESSEL_HAVE_ONEDNN
#include <omp.h>

#include "bench/OneDnnGraph.h"
#include "bench/OneDnnRun.h"
#endif

namespace tessel::bench {

namespace {

const std::vector<PeerOperator>& oneDnnOperators() {
  static const std::vector<PeerOperator> ops = {
      {"matmul", "C(m,n) +=! A(m,k) * B(k,n)  (A or B may be read transposed)"},
      {"batch_matmul", "C(b,m,n) +=! A(b,m,k) * B(b,k,n)"},
      {"conv2d",
       "O(n,k,h,w) +=! I(n,c,h*s+kh-p,w*s+kw-p) * W(k,c,kh,kw)  (blocked layouts; reorders timed apart)"},
      {"depthwise_conv",
       "O(n,c,h,w) +=! I(n,c,h*s+kh-p,w*s+kw-p) * W(c,kh,kw)  (groups = C; or NHWC: O(n,h,w,c), W(kh,kw,c))"},
      {"relu", "O = fmax(I, 0)"},
      {"gelu", "O = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"},
      {"tanh", "O = tanh(I)"},
      {"sigmoid", "O = 1 / (1 + exp(-I))"},
      {"exp", "O = exp(I)"},
      {"softmax", "softmax over the last dimension"},
      {"layernorm", "layer normalization over the last dimension, (X, Gamma, Beta), eps 1e-5"},
      {"batchnorm_inference", "Y = (X - Mean(c)) / sqrt(|Var(c)| + 1e-5) * Gamma(c) + Beta(c), NCHW"},
      {"batchnorm_stats", "Sum(c) +=! X(n,c,h,w); SumSq(c) +=! X(n,c,h,w)^2"},
      {"reduce_sum", "one '+=!' reduction of one input over some of its dimensions"},
      {"reduce_max", "one 'max=!' reduction of one input over some of its dimensions"},
      {"reduce_min", "one 'min=!' reduction of one input over some of its dimensions"},
      {"maxpool", "2-D max pooling, NCHW"},
      {"avgpool", "2-D average pooling, NCHW (padding counted in the divisor)"},
      {"add", "O = A + B  (B may broadcast)"},
      {"mul", "O = A * B  (B may broadcast)"},
      {"add_relu", "O = fmax(A + B, 0)  (B may broadcast; ReLU as a post-op)"},
      {"add_relu_mul", "O = fmax(A + B, 0) * C  (ReLU and the product as post-ops)"},
      {"transpose", "O(n,m) = I(m,n)  (a reorder)"},
      {"reorder",
       "O(i...) = I(affine in i...) or that times S(one of i): any permutation, blocking (NCHW -> NCHWc16) "
       "or "
       "reshape of one input, as a reorder of the input seen through strides (the scale as per-dimension "
       "output scales)"},
      {"graph",
       "any program op by op: a primitive per stage (matmul, conv, reduction, softmax, reorder, binary, "
       "eltwise), eltwise/binary post-ops and bias fused into the producer of a value read once"},
  };
  return ops;
}

#ifdef TESSEL_HAVE_ONEDNN

using namespace onednn;

std::vector<int64_t> outputShape(const te::Program& p, size_t i = 0) { return p.outputs().at(i)->shape; }

void prepareMatmul(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in, bool batched) {
  MatmulShape m = matmulShape(p);
  if (m.batched != batched)
    throw PeerError(batched ? "batch_matmul needs a batch dimension; use matmul"
                            : "batched; use batch_matmul");
  Dims aDims = {m.m, m.k}, bDims = {m.k, m.n}, cDims = {m.m, m.n};
  // A transposed operand is the same memory read through swapped strides.
  Dims aStrides = m.transA ? Dims{1, m.m} : Dims{m.k, 1};
  Dims bStrides = m.transB ? Dims{1, m.k} : Dims{m.n, 1};
  if (batched) {
    aDims.insert(aDims.begin(), m.batch);
    bDims.insert(bDims.begin(), m.batch);
    cDims.insert(cDims.begin(), m.batch);
    aStrides.insert(aStrides.begin(), m.m * m.k);
    bStrides.insert(bStrides.begin(), m.k * m.n);
  }
  memory::desc aMd(aDims, kF32, aStrides), bMd(bDims, kF32, bStrides), cMd = plainDesc(cDims);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(aMd, bMd, cMd), r.engine());
  memory a = r.wrap(aMd, in[m.aInput]), b = r.wrap(bMd, in[m.bInput]);
  memory c = r.newOutput(outputShape(p), cMd);
  r.addTimed(dnnl::matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
}

void prepareConv(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in, bool depthwise) {
  ConvShape c = convShape(p, depthwise);
  ConvTensors t = convTensors(c, depthwise);
  dnnl::convolution_forward::primitive_desc pd = convPrimitive(r.engine(), c, depthwise);
  Tag activations = c.nhwc ? Tag::nhwc : Tag::nchw;
  // NHWC weights are (KH, KW, C, K): hwio; depthwise (KH, KW, C), oneDNN's (G, 1, 1, KH, KW) as hwigo.
  Tag weights = !c.nhwc ? t.weightsTag : depthwise ? Tag::hwigo : Tag::hwio;
  memory::desc srcUser(t.src, kF32, activations), wtsUser(t.weights, kF32, weights),
      dstUser(t.dst, kF32, activations);
  memory srcMem = r.toLayout(r.wrap(srcUser, in[0]), pd.src_desc(), r.inputReorders());
  memory wtsMem = r.toLayout(r.wrap(wtsUser, in[1]), pd.weights_desc(), r.weightReorders());
  memory dstMem = r.fromLayout(r.newOutput(outputShape(p), dstUser), pd.dst_desc());
  r.addTimed(dnnl::convolution_forward(pd),
             {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_WEIGHTS, wtsMem}, {DNNL_ARG_DST, dstMem}});
  if (pd.src_desc() != srcUser || pd.dst_desc() != dstUser)
    r.notes.push_back("activations in oneDNN's blocked layout; the reorders run outside the timed region");
  if (pd.weights_desc() != wtsUser)
    r.notes.push_back("weights reordered once into oneDNN's blocked layout, outside the timed region");
}

void prepareEltwise(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in,
                    algorithm alg) {
  requireF32Signature(p, 1, 1);
  if (p.inputs()[0]->shape != outputShape(p)) throw PeerError("an eltwise operator keeps its input's shape");
  memory::desc md = plainDesc(dimsOf(outputShape(p)));
  dnnl::eltwise_forward::primitive_desc pd(dnnl::eltwise_forward::desc(kInference, alg, md, 0.f, 0.f),
                                           r.engine());
  r.addTimed(dnnl::eltwise_forward(pd),
             {{DNNL_ARG_SRC, r.wrap(md, in[0])}, {DNNL_ARG_DST, r.newOutput(outputShape(p), md)}});
}

void prepareSoftmax(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in) {
  requireF32Signature(p, 1, 1);
  auto shape = outputShape(p);
  if (p.inputs()[0]->shape != shape || shape.empty()) throw PeerError("softmax keeps its input's shape");
  memory::desc md = plainDesc(dimsOf(shape));
  dnnl::softmax_forward::primitive_desc pd(
      dnnl::softmax_forward::desc(kInference, md, static_cast<int>(shape.size()) - 1), r.engine());
  r.addTimed(dnnl::softmax_forward(pd),
             {{DNNL_ARG_SRC, r.wrap(md, in[0])}, {DNNL_ARG_DST, r.newOutput(shape, md)}});
}

void prepareLayerNorm(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in) {
  requireF32Signature(p, 3, 1);
  auto shape = outputShape(p);
  auto ins = p.inputs();
  if (ins[0]->shape != shape || shape.empty() || ins[1]->shape != std::vector<int64_t>{shape.back()} ||
      ins[2]->shape != ins[1]->shape)
    throw PeerError("layernorm takes X(..., D), Gamma(D), Beta(D)");
  memory::desc md = plainDesc(dimsOf(shape)), vec = plainDesc({shape.back()});
  auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  dnnl::layer_normalization_forward::primitive_desc pd(
      dnnl::layer_normalization_forward::desc(kInference, md, 1e-5f, flags), r.engine());
  r.addTimed(dnnl::layer_normalization_forward(pd), {{DNNL_ARG_SRC, r.wrap(md, in[0])},
                                                     {DNNL_ARG_SCALE, r.wrap(vec, in[1])},
                                                     {DNNL_ARG_SHIFT, r.wrap(vec, in[2])},
                                                     {DNNL_ARG_DST, r.newOutput(shape, md)}});
}

void prepareBatchNormInference(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in) {
  requireF32Signature(p, 5, 1);
  auto shape = outputShape(p);
  auto ins = p.inputs();
  bool ok = shape.size() == 4 && ins[0]->shape == shape;
  for (size_t i = 1; i < 5 && ok; ++i) ok = ins[i]->shape == std::vector<int64_t>{shape[1]};
  if (!ok) throw PeerError("batchnorm_inference takes X(N,C,H,W), Mean(C), Var(C), Gamma(C), Beta(C)");
  // The program normalizes by |Var| (random variances may be negative).
  runtime::Buffer& var = r.keep(in[2].clone());
  for (int64_t i = 0; i < var.size(); ++i) var.set(i, std::fabs(var.get(i)));
  r.notes.push_back("Var replaced by |Var| outside the timed region, as the program does");
  memory::desc md(dimsOf(shape), kF32, Tag::nchw), vec = plainDesc({shape[1]});
  auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::primitive_desc pd(
      dnnl::batch_normalization_forward::desc(kInference, md, 1e-5f, flags), r.engine());
  r.addTimed(dnnl::batch_normalization_forward(pd), {{DNNL_ARG_SRC, r.wrap(md, in[0])},
                                                     {DNNL_ARG_MEAN, r.wrap(vec, in[1])},
                                                     {DNNL_ARG_VARIANCE, r.wrap(vec, var)},
                                                     {DNNL_ARG_SCALE, r.wrap(vec, in[3])},
                                                     {DNNL_ARG_SHIFT, r.wrap(vec, in[4])},
                                                     {DNNL_ARG_DST, r.newOutput(shape, md)}});
}

void addReduction(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in, size_t output,
                  const te::Stage& stage, algorithm alg, float power) {
  ReductionShape rs = reductionShape(p, stage);
  auto ins = p.inputs();
  size_t pos = 0;
  while (pos < ins.size() && ins[pos]->name != rs.input) ++pos;
  if (pos == ins.size()) throw PeerError(stage.output + " does not reduce an input");
  memory::desc src = plainDesc(dimsOf(rs.srcDims)), dst = plainDesc(dimsOf(rs.dstDims));
  dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(alg, src, dst, power, 0.f), r.engine());
  r.addTimed(dnnl::reduction(pd), {{DNNL_ARG_SRC, r.wrap(src, in[pos])},
                                   {DNNL_ARG_DST, r.newOutput(outputShape(p, output), dst)}});
}

void prepareReduction(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in,
                      te::Reduction kind, algorithm alg) {
  requireF32Signature(p, 1, 1);
  const te::Stage& s = singleStage(p);
  if (s.reduction != kind || !s.init || s.rhs->kind != te::ExprKind::Access)
    throw PeerError(std::string("the operator is one '") + te::reductionName(kind) +
                    "!' stage over a plain read of the input");
  addReduction(r, p, in, 0, s, alg, 0.f);
}

void prepareBatchNormStats(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in) {
  requireF32Signature(p, 1, 2);
  if (p.stages.size() != 2 || p.stages[0].reduction != te::Reduction::Sum ||
      p.stages[1].reduction != te::Reduction::Sum)
    throw PeerError("batchnorm_stats is two '+=!' stages: the sum and the sum of squares");
  addReduction(r, p, in, 0, p.stages[0], algorithm::reduction_sum, 0.f);
  // Sum of squares: the L2 norm's p-th power with p = 2.
  addReduction(r, p, in, 1, p.stages[1], algorithm::reduction_norm_lp_power_p_sum, 2.f);
  r.notes.push_back("two reduction primitives (sum; sum of squares as norm_lp_power_p_sum, p = 2)");
}

void preparePool(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in, bool max) {
  PoolShape ps = poolShape(p);
  if (ps.reduction != (max ? te::Reduction::Max : te::Reduction::Sum))
    throw PeerError(max ? "max pooling is a 'max=!' stage" : "average pooling is a '+=!' stage");
  Dims src = {ps.n, ps.c, ps.h.in, ps.w.in}, dst = {ps.n, ps.c, ps.h.out, ps.w.out};
  memory::desc srcMd(src, kF32, Tag::nchw), dstMd(dst, kF32, Tag::nchw);
  algorithm alg = max ? algorithm::pooling_max : algorithm::pooling_avg_include_padding;
  dnnl::pooling_forward::primitive_desc pd(
      dnnl::pooling_forward::desc(kInference, alg, srcMd, dstMd, {ps.h.stride, ps.w.stride},
                                  {ps.h.kernel, ps.w.kernel}, {ps.h.padBefore, ps.w.padBefore},
                                  {ps.h.padAfter, ps.w.padAfter}),
      r.engine());
  r.addTimed(dnnl::pooling_forward(pd),
             {{DNNL_ARG_SRC, r.wrap(srcMd, in[0])}, {DNNL_ARG_DST, r.newOutput(outputShape(p), dstMd)}});
}

// src0 must have the output's full shape in oneDNN; the broadcast operand is src1.
void prepareBinary(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in, algorithm alg,
                   bool relu, bool thenMul) {
  requireF32Signature(p, thenMul ? 3 : 2, 1);
  auto shape = outputShape(p);
  auto ins = p.inputs();
  Dims dst = dimsOf(shape);
  Dims d0 = dimsOf(broadcastDims(p, ins[0]->name)), d1 = dimsOf(broadcastDims(p, ins[1]->name));
  size_t first = 0, second = 1;
  if (d0 != dst) {
    std::swap(first, second);
    std::swap(d0, d1);
  }
  if (d0 != dst) throw PeerError("neither operand of the sum has the output's shape");
  dnnl::post_ops ops;
  if (relu) ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
  memory::desc mulMd;
  if (thenMul) {
    mulMd = plainDesc(dimsOf(broadcastDims(p, ins[2]->name)));
    ops.append_binary(algorithm::binary_mul, mulMd);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  memory::desc md0 = plainDesc(d0), md1 = plainDesc(d1), dstMd = plainDesc(dst);
  dnnl::binary::primitive_desc pd(dnnl::binary::desc(alg, md0, md1, dstMd), attr, r.engine());
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC_0, r.wrap(md0, in[first])},
                                          {DNNL_ARG_SRC_1, r.wrap(md1, in[second])},
                                          {DNNL_ARG_DST, r.newOutput(shape, dstMd)}};
  if (thenMul) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(relu ? 1 : 0) | DNNL_ARG_SRC_1] = r.wrap(mulMd, in[2]);
  r.addTimed(dnnl::binary(pd), std::move(args));
}

void prepareTranspose(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in) {
  requireF32Signature(p, 1, 1);
  auto src = p.inputs()[0]->shape, dst = outputShape(p);
  if (src.size() != 2 || dst != std::vector<int64_t>{src[1], src[0]})
    throw PeerError("transpose maps (M, N) to (N, M)");
  // The input seen in the output's index order: the same memory, strides swapped.
  memory::desc fromMd(Dims{src[1], src[0]}, kF32, Dims{1, src[1]});
  memory::desc toMd = plainDesc(dimsOf(dst));
  memory from = r.wrap(fromMd, in[0]), to = r.newOutput(dst, toMd);
  r.addTimed(dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

// The position of input `name` among the program's inputs (the buffers' order).
size_t inputPosition(const te::Program& p, const std::string& name) {
  auto inputs = p.inputs();
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k]->name == name) return k;
  throw PeerError("'" + name + "' is not an input");
}

// The output's elements as a strided view of the input: the read's indices
// must be affine in the output's indices, without offsets. A factor S(i)
// over one output dimension becomes oneDNN's output scales along it.
void prepareReorder(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in) {
  if (p.stages.size() != 1 || p.stages[0].reduction != te::Reduction::None || p.outputs().size() != 1)
    throw PeerError("reorder takes one plain assignment O(i...) = I(...) [* S(i)]");
  const te::Stage& stage = p.stages[0];
  te::Expr read = stage.rhs, scale;
  if (read->kind == te::ExprKind::Binary && read->binaryOp == te::BinaryOp::Mul) {
    // The scale is the factor read through one index: S(c) * I(...) or I(...) * S(c).
    bool scaleFirst =
        read->operands[0]->kind == te::ExprKind::Access && read->operands[0]->operands.size() == 1 &&
        read->operands[1]->kind == te::ExprKind::Access && read->operands[1]->operands.size() > 1;
    scale = read->operands[scaleFirst ? 0 : 1];
    read = read->operands[scaleFirst ? 1 : 0];
  }
  if (read->kind != te::ExprKind::Access || (scale && scale->kind != te::ExprKind::Access))
    throw PeerError("reorder takes one plain assignment O(i...) = I(...) [* S(i)]");
  const te::TensorDecl& from = p.tensor(read->name);
  const te::TensorDecl& to = *p.outputs()[0];
  if (from.dtype != te::DType::F32 || to.dtype != te::DType::F32)
    throw PeerError("reorder is timed on f32 tensors");
  std::vector<int64_t> inputStrides(from.shape.size(), 1);
  for (size_t d = from.shape.size(); d-- > 1;) inputStrides[d - 1] = inputStrides[d] * from.shape[d];
  Dims viewStrides(stage.indices.size(), 0);
  for (size_t d = 0; d < read->operands.size(); ++d) {
    std::optional<te::AffineExpr> a = te::toAffine(read->operands[d]);
    if (!a || a->constant != 0)
      throw PeerError("reorder's read indices must be linear in the output's indices");
    for (const auto& [name, coefficient] : a->coeffs) {
      auto it = std::find(stage.indices.begin(), stage.indices.end(), name);
      if (it == stage.indices.end()) throw PeerError("reorder's read uses an index the output does not have");
      viewStrides[static_cast<size_t>(it - stage.indices.begin())] += coefficient * inputStrides[d];
    }
  }
  memory::desc fromMd(dimsOf(to.shape), kF32, viewStrides), toMd = plainDesc(dimsOf(to.shape));
  memory source = r.wrap(fromMd, in[inputPosition(p, read->name)]);
  memory destination = r.newOutput(to.shape, toMd);
  if (!scale) {
    r.addTimed(dnnl::reorder(source, destination), {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, destination}});
    return;
  }
  const te::TensorDecl& s = p.tensor(scale->name);
  auto dim = scale->operands.size() == 1 && scale->operands[0]->kind == te::ExprKind::Var
                 ? std::find(stage.indices.begin(), stage.indices.end(), scale->operands[0]->name)
                 : stage.indices.end();
  if (dim == stage.indices.end() || s.dtype != te::DType::F32 || s.role != te::TensorRole::Input)
    throw PeerError("reorder's scale must be an f32 input S(i) over one output index");
  dnnl::primitive_attr attr;
  attr.set_output_scales(1 << (dim - stage.indices.begin()), {DNNL_RUNTIME_F32_VAL});
  memory scales = r.wrap(plainDesc({s.shape[0]}), in[inputPosition(p, scale->name)]);
  dnnl::reorder::primitive_desc pd(r.engine(), fromMd, r.engine(), toMd, attr);
  r.addTimed(dnnl::reorder(pd),
             {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, destination}, {DNNL_ARG_ATTR_OUTPUT_SCALES, scales}});
}

class OneDnnFamily : public PeerFamily {
 public:
  std::string name() const override { return "onednn"; }
  std::vector<PeerOperator> operators() const override { return oneDnnOperators(); }
  bool available() const override { return true; }
  std::string version() const override {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + " (" +
           (v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other runtime") + ")";
  }
  // oneDNN runs on the process's OpenMP runtime (the calling thread's setting).
  void setThreads(int threads) override { omp_set_num_threads(threads); }

  std::unique_ptr<PreparedPeer> prepare(const std::string& op, const te::Program& p,
                                        const std::vector<runtime::Buffer>& in) override {
    auto r = std::make_unique<OneDnnRun>(engine_, stream_);
    try {
      dispatch(*r, op, p, in);
    } catch (const dnnl::error& e) {
      throw PeerError(std::string("oneDNN: ") + e.what());
    }
    return r;
  }

 private:
  static void dispatch(OneDnnRun& r, const std::string& op, const te::Program& p,
                       const std::vector<runtime::Buffer>& in) {
    if (op == "matmul" || op == "batch_matmul") return prepareMatmul(r, p, in, op == "batch_matmul");
    if (op == "conv2d" || op == "depthwise_conv") return prepareConv(r, p, in, op == "depthwise_conv");
    if (op == "relu") return prepareEltwise(r, p, in, algorithm::eltwise_relu);
    if (op == "gelu") return prepareEltwise(r, p, in, algorithm::eltwise_gelu_tanh);
    if (op == "tanh") return prepareEltwise(r, p, in, algorithm::eltwise_tanh);
    if (op == "sigmoid") return prepareEltwise(r, p, in, algorithm::eltwise_logistic);
    if (op == "exp") return prepareEltwise(r, p, in, algorithm::eltwise_exp);
    if (op == "softmax") return prepareSoftmax(r, p, in);
    if (op == "layernorm") return prepareLayerNorm(r, p, in);
    if (op == "batchnorm_inference") return prepareBatchNormInference(r, p, in);
    if (op == "batchnorm_stats") return prepareBatchNormStats(r, p, in);
    if (op == "reduce_sum") return prepareReduction(r, p, in, te::Reduction::Sum, algorithm::reduction_sum);
    if (op == "reduce_max") return prepareReduction(r, p, in, te::Reduction::Max, algorithm::reduction_max);
    if (op == "reduce_min") return prepareReduction(r, p, in, te::Reduction::Min, algorithm::reduction_min);
    if (op == "maxpool" || op == "avgpool") return preparePool(r, p, in, op == "maxpool");
    if (op == "add") return prepareBinary(r, p, in, algorithm::binary_add, false, false);
    if (op == "mul") return prepareBinary(r, p, in, algorithm::binary_mul, false, false);
    if (op == "add_relu") return prepareBinary(r, p, in, algorithm::binary_add, true, false);
    if (op == "add_relu_mul") return prepareBinary(r, p, in, algorithm::binary_add, true, true);
    if (op == "transpose") return prepareTranspose(r, p, in);
    if (op == "reorder") return prepareReorder(r, p, in);
    if (op == "graph") return prepareGraph(r, p, in);
    throw PeerError("oneDNN has no operator '" + op + "'");
  }

  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{engine_};
};

#else

class OneDnnFamily : public PeerFamily {
 public:
  std::string name() const override { return "onednn"; }
  std::vector<PeerOperator> operators() const override { return oneDnnOperators(); }
  bool available() const override { return false; }
  std::string version() const override { return ""; }
  void setThreads(int) override {}
  std::unique_ptr<PreparedPeer> prepare(const std::string&, const te::Program&,
                                        const std::vector<runtime::Buffer>&) override {
    throw PeerError("Tessel was built without oneDNN (install libdnnl-dev and reconfigure)");
  }
};

#endif

}  // namespace

std::unique_ptr<PeerFamily> makeOneDnnPeer() { return std::make_unique<OneDnnFamily>(); }

}  // namespace tessel::bench
