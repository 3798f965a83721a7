#include "bench/OperatorShapes.h"

#include <algorithm>
#include <functional>

#include "bench/Peer.h"

namespace tessel::bench {

namespace {

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ")";
}

// The index variables of a read whose indices are all plain variables.
std::vector<std::string> plainIndexVars(const te::ExprNode& access) {
  std::vector<std::string> vars;
  for (const auto& idx : access.operands) {
    if (idx->kind != te::ExprKind::Var)
      throw PeerError("the read of " + access.name + " has an index that is not a plain variable");
    vars.push_back(idx->name);
  }
  return vars;
}

void collectReads(const te::Expr& e, const std::string& tensor, std::vector<const te::ExprNode*>& out) {
  if (e->kind == te::ExprKind::Access && (tensor.empty() || e->name == tensor)) out.push_back(e.get());
  for (const auto& o : e->operands) collectReads(o, tensor, out);
}

const te::ExprNode& onlyRead(const te::Stage& s, const std::string& tensor) {
  std::vector<const te::ExprNode*> reads;
  collectReads(s.rhs, tensor, reads);
  if (reads.empty()) throw PeerError("the program does not read " + tensor + " in " + s.output);
  return *reads.front();
}

int inputPosition(const te::Program& p, const std::string& name) {
  auto ins = p.inputs();
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i]->name == name) return static_cast<int>(i);
  throw PeerError(name + " is not an input of the program");
}

int64_t extentOf(const te::Stage& s, const std::string& var) {
  auto it = s.ranges.find(var);
  if (it == s.ranges.end()) throw PeerError("no range for index " + var);
  return it->second.extent();
}

// The smallest stride, then the smallest symmetric padding, that turns `in`
// into `out` through a window of `kernel`; padAfter is trimmed to what the
// last window needs, as the libraries expect.
WindowDim inferWindow(int64_t in, int64_t out, int64_t kernel, const std::string& what) {
  // A 1x1 window may still stride (ResNet's downsampling shortcuts).
  for (int64_t stride = 1; stride <= std::max<int64_t>(kernel, 2); ++stride)
    for (int64_t pad = 0; pad < std::max<int64_t>(kernel, 1); ++pad)
      if ((in + 2 * pad - kernel) >= 0 && (in + 2 * pad - kernel) / stride + 1 == out) {
        int64_t after = std::max<int64_t>(0, (out - 1) * stride + kernel - in - pad);
        return {in, out, kernel, stride, pad, after};
      }
  throw PeerError("no stride and padding turn " + what + " " + std::to_string(in) + " into " +
                  std::to_string(out) + " with a window of " + std::to_string(kernel));
}

}  // namespace

void requireF32Signature(const te::Program& p, size_t inputs, size_t outputs) {
  auto ins = p.inputs();
  auto outs = p.outputs();
  if (ins.size() != inputs || outs.size() != outputs)
    throw PeerError("the operator takes " + std::to_string(inputs) + " input(s) and " +
                    std::to_string(outputs) + " output(s); the program has " + std::to_string(ins.size()) +
                    " and " + std::to_string(outs.size()));
  for (const auto* t : ins)
    if (t->dtype != te::DType::F32) throw PeerError(t->name + " is " + te::dtypeName(t->dtype) + ", not f32");
  for (const auto* t : outs)
    if (t->dtype != te::DType::F32) throw PeerError(t->name + " is " + te::dtypeName(t->dtype) + ", not f32");
}

const te::Stage& singleStage(const te::Program& p) {
  if (p.stages.size() != 1)
    throw PeerError("the operator is one stage; the program has " + std::to_string(p.stages.size()));
  return p.stages.front();
}

MatmulShape matmulShape(const te::Program& p) {
  requireF32Signature(p, 2, 1);
  const te::Stage& s = singleStage(p);
  if (s.reduction != te::Reduction::Sum || !s.init || s.reductionVars.size() != 1)
    throw PeerError("a matmul is one '+=!' stage reducing over one index");
  const te::Expr& rhs = s.rhs;
  if (rhs->kind != te::ExprKind::Binary || rhs->binaryOp != te::BinaryOp::Mul ||
      rhs->operands[0]->kind != te::ExprKind::Access || rhs->operands[1]->kind != te::ExprKind::Access)
    throw PeerError("a matmul's right-hand side is a product of two reads");
  MatmulShape m;
  m.batched = s.indices.size() == 3;
  if (s.indices.size() != 2 && !m.batched)
    throw PeerError("a matmul's output has rank 2 (or 3 with a batch)");
  const std::string& k = s.reductionVars[0];
  const std::string& row = s.indices[s.indices.size() - 2];
  const std::string& col = s.indices.back();
  auto lhsVars = plainIndexVars(*rhs->operands[0]);
  auto rhsVars = plainIndexVars(*rhs->operands[1]);
  bool firstIsA = std::find(lhsVars.begin(), lhsVars.end(), row) != lhsVars.end();
  const te::ExprNode& a = firstIsA ? *rhs->operands[0] : *rhs->operands[1];
  const te::ExprNode& b = firstIsA ? *rhs->operands[1] : *rhs->operands[0];
  auto aVars = firstIsA ? lhsVars : rhsVars;
  auto bVars = firstIsA ? rhsVars : lhsVars;
  std::vector<std::string> batch;
  if (m.batched) batch.push_back(s.indices[0]);
  auto is = [&](const std::vector<std::string>& vars, const std::string& x, const std::string& y) {
    std::vector<std::string> want = batch;
    want.push_back(x);
    want.push_back(y);
    return vars == want;
  };
  if (is(aVars, row, k)) {
    m.transA = false;
  } else if (is(aVars, k, row)) {
    m.transA = true;
  } else {
    throw PeerError("the first operand is not read as A(m, k) or A(k, m)");
  }
  if (is(bVars, k, col)) {
    m.transB = false;
  } else if (is(bVars, col, k)) {
    m.transB = true;
  } else {
    throw PeerError("the second operand is not read as B(k, n) or B(n, k)");
  }
  m.aInput = inputPosition(p, a.name);
  m.bInput = inputPosition(p, b.name);
  m.batch = m.batched ? extentOf(s, s.indices[0]) : 1;
  m.m = extentOf(s, row);
  m.n = extentOf(s, col);
  m.k = extentOf(s, k);
  return m;
}

namespace {

// The output's last index variable indexes the weights' last dimension (k in
// O(n, h, w, k) and W(r, s, c, k)).
bool nhwcConvolution(const te::Program& p) {
  if (p.stages.size() != 1) return false;
  const te::Stage& s = p.stages[0];
  const std::string& weights = p.inputs()[1]->name;
  bool found = false;
  std::function<void(const te::Expr&)> visit = [&](const te::Expr& e) {
    if (e->kind == te::ExprKind::Access && e->name == weights && !e->operands.empty()) {
      const te::Expr& last = e->operands.back();
      found =
          found || (last->kind == te::ExprKind::Var && !s.indices.empty() && last->name == s.indices.back());
    }
    for (const auto& o : e->operands) visit(o);
  };
  visit(s.rhs);
  return found;
}

}  // namespace

ConvShape convShape(const te::Program& p, bool depthwise) {
  requireF32Signature(p, 2, 1);
  auto ins = p.inputs();
  const auto& in = ins[0]->shape;
  const auto& wt = ins[1]->shape;
  const auto& out = p.outputs()[0]->shape;
  if (in.size() != 4 || out.size() != 4)
    throw PeerError("a 2-D convolution reads an NCHW input and writes an NKHW output; got " + shapeText(in) +
                    " -> " + shapeText(out));
  ConvShape c;
  c.n = in[0];
  if (nhwcConvolution(p)) {
    c.nhwc = true;
    c.c = in[3];
    c.k = out[3];
    if (depthwise) {
      if (wt.size() != 3 || wt[2] != c.c || c.k != c.c)
        throw PeerError("an NHWC depthwise convolution has (KH, KW, C) weights and C output channels; got " +
                        shapeText(wt) + " for input " + shapeText(in) + " and output " + shapeText(out));
      c.groups = c.c;
    } else if (wt.size() != 4 || wt[2] != c.c || wt[3] != c.k) {
      throw PeerError("an NHWC convolution has (KH, KW, C, K) weights; got " + shapeText(wt) + " for input " +
                      shapeText(in) + " and output " + shapeText(out));
    }
    if (out[0] != c.n) throw PeerError("the output's batch differs from the input's");
    c.h = inferWindow(in[1], out[1], wt[0], "height");
    c.w = inferWindow(in[2], out[2], wt[1], "width");
    return c;
  }
  c.c = in[1];
  c.k = out[1];
  int64_t kh = 0, kw = 0;
  if (depthwise) {
    bool rank3 = wt.size() == 3 && wt[0] == c.c;
    bool rank4 = wt.size() == 4 && wt[0] == c.c && wt[1] == 1;
    if ((!rank3 && !rank4) || c.k != c.c)
      throw PeerError("a depthwise convolution has (C, KH, KW) weights and C output channels; got " +
                      shapeText(wt));
    kh = wt[wt.size() - 2];
    kw = wt.back();
    c.groups = c.c;
  } else {
    if (wt.size() != 4 || wt[0] != c.k || wt[1] != c.c)
      throw PeerError("a 2-D convolution has (K, C, KH, KW) weights; got " + shapeText(wt) + " for input " +
                      shapeText(in) + " and output " + shapeText(out));
    kh = wt[2];
    kw = wt[3];
  }
  if (out[0] != c.n) throw PeerError("the output's batch differs from the input's");
  c.h = inferWindow(in[2], out[2], kh, "height");
  c.w = inferWindow(in[3], out[3], kw, "width");
  return c;
}

PoolShape poolShape(const te::Program& p) {
  requireF32Signature(p, 1, 1);
  const te::Stage& s = singleStage(p);
  const auto& in = p.inputs()[0]->shape;
  const auto& out = p.outputs()[0]->shape;
  if (in.size() != 4 || out.size() != 4 || in[0] != out[0] || in[1] != out[1])
    throw PeerError("a 2-D pooling maps NCHW to NCHW; got " + shapeText(in) + " -> " + shapeText(out));
  if (s.reductionVars.size() < 2) throw PeerError("a 2-D pooling reduces over a window of two indices");
  PoolShape ps;
  ps.reduction = s.reduction;
  ps.n = in[0];
  ps.c = in[1];
  int64_t kh = extentOf(s, s.reductionVars[s.reductionVars.size() - 2]);
  int64_t kw = extentOf(s, s.reductionVars.back());
  ps.h = inferWindow(in[2], out[2], kh, "height");
  ps.w = inferWindow(in[3], out[3], kw, "width");
  return ps;
}

ReductionShape reductionShape(const te::Program& p, const te::Stage& s) {
  if (s.reduction == te::Reduction::None) throw PeerError(s.output + " is not a reduction");
  std::vector<const te::ExprNode*> reads;
  collectReads(s.rhs, "", reads);
  if (reads.empty()) throw PeerError(s.output + " reads no tensor");
  const te::ExprNode& read = *reads.front();
  for (const auto* r : reads)
    if (r->name != read.name) throw PeerError(s.output + " reads more than one tensor");
  auto vars = plainIndexVars(read);
  ReductionShape rs;
  rs.input = read.name;
  rs.srcDims = p.tensor(read.name).shape;
  std::vector<std::string> kept;
  for (size_t d = 0; d < vars.size(); ++d) {
    bool keep = std::find(s.indices.begin(), s.indices.end(), vars[d]) != s.indices.end();
    rs.dstDims.push_back(keep ? rs.srcDims[d] : 1);
    if (keep) kept.push_back(vars[d]);
  }
  if (kept != s.indices)
    throw PeerError(s.output + " keeps the input's dimensions in another order, or adds some");
  return rs;
}

std::vector<int64_t> broadcastDims(const te::Program& p, const std::string& input) {
  const te::Stage& s = singleStage(p);
  auto vars = plainIndexVars(onlyRead(s, input));
  const auto& shape = p.tensor(input).shape;
  std::vector<int64_t> dims;
  size_t next = 0;  // the input's dims appear in the output's order
  for (const auto& outVar : s.indices) {
    if (next < vars.size() && vars[next] == outVar) {
      dims.push_back(shape[next++]);
    } else {
      dims.push_back(1);
    }
  }
  if (next != vars.size())
    throw PeerError(input + " is read transposed or reduced, not broadcast along " + s.output);
  return dims;
}

}  // namespace tessel::bench
