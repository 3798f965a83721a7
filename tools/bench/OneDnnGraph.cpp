#ifdef TESSEL_HAVE_ONEDNN

#include "bench/OneDnnGraph.h"

#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace tessel::bench::onednn {

namespace {

// A stage's form does not fit one matcher; the caller tries the next one.
class Mismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void refuse(const std::string& stage, const std::string& why) {
  throw PeerError("stage " + stage + ": " + why);
}

int64_t elements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// A tensor the graph holds: the program's, or one the peer adds (a
// subexpression computed on its own, a scaled softmax input).
struct TensorInfo {
  Dims dims;
  te::DType dtype = te::DType::F32;
  te::TensorRole role = te::TensorRole::Temporary;
};

// A tensor read (or written) as oneDNN dims and strides over its row-major
// storage: the tensor's dims in another order, with 1 where the read does
// not vary (a broadcast).
struct View {
  std::string tensor;
  Dims dims, strides;
  bool whole = false;  // the tensor itself in its own order: any layout of it will do
  bool dense = false;  // every element once, in storage order (whole, or a reshape adding 1s)
  memory::desc desc() const { return memory::desc(dims, kF32, strides); }
};

// One step of an elementwise chain: the running value combined with a
// constant (eltwise) or with a tensor (binary, the running value first).
struct Op {
  bool binary = false;
  algorithm alg = algorithm::undef;
  float alpha = 0, beta = 0;
  View operand;
};

Op eltwise(algorithm alg, float alpha = 0, float beta = 0) { return {false, alg, alpha, beta, {}}; }
Op binaryOp(algorithm alg, View operand) { return {true, alg, 0, 0, std::move(operand)}; }

enum class Kind { Chain, Matmul, Conv, Reduction, Softmax };

// One primitive (a chain: its first operation) with its post-ops.
struct Group {
  Kind kind = Kind::Chain;
  std::string stage;  // the last stage it computes, named in errors
  std::string out;
  View dst;                // out as the primitive writes it
  std::vector<View> srcs;  // chain: where the running value starts; matmul, conv: src, weights; else src
  std::vector<Op> ops;     // chain: all its operations; the others: post-ops
  algorithm alg = algorithm::undef;  // reduction
  float power = 0;                   // reduction
  int axis = 0;                      // softmax
  ConvShape conv;
  bool depthwise = false;
};

std::optional<std::vector<std::string>> plainVars(const te::Expr& e) {
  if (e->kind != te::ExprKind::Access) return std::nullopt;
  std::vector<std::string> vars;
  for (const auto& idx : e->operands) {
    if (idx->kind != te::ExprKind::Var || std::count(vars.begin(), vars.end(), idx->name))
      return std::nullopt;
    vars.push_back(idx->name);
  }
  return vars;
}

void varsOf(const te::Expr& e, std::set<std::string>& vars) {
  if (e->kind == te::ExprKind::Var) vars.insert(e->name);
  for (const auto& o : e->operands) varsOf(o, vars);
}

std::set<std::string> varsOf(const te::Expr& e) {
  std::set<std::string> vars;
  varsOf(e, vars);
  return vars;
}

void countReads(const te::Expr& e, std::map<std::string, int>& reads) {
  if (e->kind == te::ExprKind::Access) ++reads[e->name];
  for (const auto& o : e->operands) countReads(o, reads);
}

// A number, possibly negated or converted: folded into an eltwise operation.
std::optional<double> constantOf(const te::Expr& e) {
  if (e->kind == te::ExprKind::Const) return e->value;
  if (e->kind == te::ExprKind::Unary && e->unaryOp == te::UnaryOp::Neg)
    if (auto c = constantOf(e->operands[0])) return -*c;
  if (e->kind == te::ExprKind::Cast && te::isFloat(e->type)) return constantOf(e->operands[0]);
  return std::nullopt;
}

// x * c, c * x or x / c: the x and the factor.
std::pair<te::Expr, double> unscaled(const te::Expr& e) {
  if (e->kind == te::ExprKind::Binary &&
      (e->binaryOp == te::BinaryOp::Mul || e->binaryOp == te::BinaryOp::Div)) {
    bool div = e->binaryOp == te::BinaryOp::Div;
    if (auto c = constantOf(e->operands[1]); c && *c != 0) return {e->operands[0], div ? 1 / *c : *c};
    if (auto c = constantOf(e->operands[0]); c && !div) return {e->operands[1], *c};
  }
  return {e, 1.0};
}

// Index variables of a stage's output, with their extents; a variable absent
// from `live` does not vary (a subexpression computed broadcast). Rank 0 is
// one dimension of extent 1, along no variable.
struct Space {
  std::vector<std::string> vars;
  Dims dims;
  std::set<std::string> live;
};

constexpr float kInf = std::numeric_limits<float>::infinity();

class Planner {
 public:
  explicit Planner(const te::Program& p) : p_(p) {
    for (const auto& t : p.tensors) tensors_[t.name] = {dimsOf(t.shape), t.dtype, t.role};
    for (size_t i = 0; i < p.stages.size(); ++i) {
      const te::Stage& s = p.stages[i];
      if (tensors_.at(s.output).role == te::TensorRole::Input) refuse(s.output, "writes an input");
      if (!written_.insert(s.output).second) refuse(s.output, "is written by more than one stage");
      std::map<std::string, int> reads;
      countReads(s.rhs, reads);
      for (const auto& [name, n] : reads) {
        reads_[name] += n;
        readers_[name].push_back(i);
      }
    }
  }

  void plan() {
    std::set<size_t> absorbed;  // softmax idioms: stages replaced by the primitive at their last one
    std::map<size_t, std::function<void()>> softmaxAt;
    for (size_t i = 0; i < p_.stages.size(); ++i)
      if (auto idiom = softmaxIdiom(i)) {
        absorbed.insert({idiom->mx, idiom->e, idiom->sum, idiom->p});
        softmaxAt[idiom->p] = [this, idiom = *idiom] { addSoftmax(idiom); };
      }
    for (size_t i = 0; i < p_.stages.size(); ++i) {
      if (auto it = softmaxAt.find(i); it != softmaxAt.end()) it->second();
      if (absorbed.count(i)) continue;
      const te::Stage& s = p_.stages[i];
      if (!s.existsReads.empty()) refuse(s.output, "bounds its indices by data ('where exists')");
      if (s.reduction == te::Reduction::None) {
        elementwise(s);
      } else {
        reduction(s);
      }
    }
  }

  std::vector<Group> groups;
  std::vector<size_t> order;  // groups in execution order
  const TensorInfo& tensor(const std::string& name) const { return tensors_.at(name); }

 private:
  struct SoftmaxIdiom {
    size_t mx = 0, e = 0, sum = 0, p = 0;
    std::string src;
    int axis = 0;
    double scale = 1;
  };

  // ---- Reads ----

  // `tensor`, indexed by `tensorVars` (one per dimension) in stage `s`, seen
  // along `viewVars` (a name read by no dimension, e.g. "", gives extent 1).
  View viewOf(const te::Stage& s, const std::string& tensor, const std::vector<std::string>& tensorVars,
              const std::vector<std::string>& viewVars) const {
    const TensorInfo& t = tensors_.at(tensor);
    if (t.dtype != te::DType::F32)
      refuse(s.output,
             "reads " + tensor + ", a " + te::dtypeName(t.dtype) + " tensor (the graph computes in f32)");
    Dims tStrides = rowMajorStrides(t.dims);
    View v{tensor, Dims(viewVars.size(), 1), {}, false, false};
    std::vector<int64_t> at;  // the tensor dimension each view dimension reads
    for (size_t d = 0; d < tensorVars.size(); ++d) {
      const std::string& var = tensorVars[d];
      auto pos = std::find(viewVars.begin(), viewVars.end(), var);
      if (pos == viewVars.end()) refuse(s.output, "reads " + tensor + " along " + var + " in another role");
      const te::Range& r = s.ranges.at(var);
      if (r.lo != 0 || r.extent() != t.dims[d])
        refuse(s.output, "reads part of " + tensor + " along " + var + " (oneDNN reads whole dimensions)");
      at.push_back(pos - viewVars.begin());
    }
    for (size_t d = 0; d < at.size(); ++d) v.dims[at[d]] = t.dims[d];
    v.strides =
        rowMajorStrides(v.dims);  // size-1 dimensions: the row-major value, so an in-order read is plain
    for (size_t d = 0; d < at.size(); ++d) v.strides[at[d]] = tStrides[d];
    v.dense = v.strides == rowMajorStrides(v.dims) && elements(v.dims) == elements(t.dims);
    v.whole = v.dense && v.dims == t.dims;
    return v;
  }

  View read(const te::Stage& s, const te::Expr& access, const std::vector<std::string>& viewVars) const {
    auto vars = plainVars(access);
    if (!vars)
      refuse(s.output,
             "reads " + access->name + " at an index that is not a plain variable, or twice along one");
    return viewOf(s, access->name, *vars, viewVars);
  }

  // The stage's output indices; they must cover the whole output.
  Space outputSpace(const te::Stage& s) const {
    const TensorInfo& t = tensors_.at(s.output);
    Space sp;
    sp.vars = s.indices.empty() ? std::vector<std::string>{""} : s.indices;
    sp.dims = t.dims;
    for (size_t d = 0; d < s.indices.size(); ++d) {
      const std::string& v = s.indices[d];
      const te::Range& r = s.ranges.at(v);
      if (std::count(s.indices.begin(), s.indices.end(), v) > 1) refuse(s.output, "writes a diagonal");
      if (r.lo != 0 || r.extent() != t.dims[d])
        refuse(s.output, "writes part of " + s.output + " along " + v);
      sp.live.insert(v);
    }
    return sp;
  }

  View wholeView(const std::string& tensor) const {
    const Dims& dims = tensors_.at(tensor).dims;
    return {tensor, dims, rowMajorStrides(dims), true, true};
  }

  // ---- Grouping ----

  void add(Group g) {
    producer_[g.out] = groups.size();
    order.push_back(groups.size());
    groups.push_back(std::move(g));
  }

  // The group whose result `v` is, when a chain reading it may continue that
  // group as post-ops: `v` is a temporary read once, whole, written whole by
  // a primitive that takes post-ops.
  std::optional<size_t> fusableProducer(const View& v) const {
    auto it = producer_.find(v.tensor);
    if (!v.whole || it == producer_.end() || tensors_.at(v.tensor).role != te::TensorRole::Temporary ||
        reads_.at(v.tensor) != 1)
      return std::nullopt;
    const Group& g = groups[it->second];
    bool takesPostOps =
        g.kind == Kind::Matmul || g.kind == Kind::Conv || (g.kind == Kind::Chain && !g.ops.empty());
    if (!takesPostOps || !g.dst.whole) return std::nullopt;
    return it->second;
  }

  // A chain computing `out` over `sp`: the post-ops of the running value's
  // producer when it can take them (that group then runs here, after the
  // operands the chain reads), else its own primitive.
  void addChain(const std::string& stage, const std::string& out, const Space& sp, View spine,
                std::vector<Op> ops) {
    View dst{out, sp.dims, rowMajorStrides(sp.dims), true, true};
    if (auto gi = fusableProducer(spine)) {
      Group& g = groups[*gi];
      g.ops.insert(g.ops.end(), ops.begin(), ops.end());
      g.out = out;
      g.dst = dst;
      g.stage = stage;
      producer_[out] = *gi;
      order.erase(std::find(order.begin(), order.end(), *gi));
      order.push_back(*gi);
      return;
    }
    Group g;
    g.kind = Kind::Chain;
    g.stage = stage;
    g.out = out;
    g.dst = dst;
    g.srcs = {std::move(spine)};
    g.ops = std::move(ops);
    add(std::move(g));
  }

  // ---- Elementwise stages: a chain of eltwise and binary operations ----

  void elementwise(const te::Stage& s) {
    Space sp = outputSpace(s);
    const TensorInfo& out = tensors_.at(s.output);
    te::Expr e = s.rhs;
    if (out.dtype != te::DType::F32 && out.dtype != te::DType::F16 && out.dtype != te::DType::BF16)
      refuse(s.output, std::string("writes a ") + te::dtypeName(out.dtype) +
                           " tensor (the graph holds f32, f16, bf16)");
    if (e->kind == te::ExprKind::Cast && e->type == out.dtype) e = e->operands[0];  // the conversion on store
    if (!s.reductionVars.empty()) refuse(s.output, "has indices only its right-hand side uses");
    if (varsOf(e) != sp.live)
      refuse(s.output, "no read varies along every index of " + s.output + " (a broadcast copy)");
    std::vector<Op> ops;
    View start = spine(s, e, sp, ops);
    mergeClips(ops);
    addChain(s.output, s.output, sp, std::move(start), std::move(ops));
  }

  // Appends to `ops` what turns the running value into `e` and returns where
  // it starts: a read varying along all of `sp.live`.
  View spine(const te::Stage& s, const te::Expr& e, const Space& sp, std::vector<Op>& ops) {
    if (e->type != te::DType::F32)
      refuse(s.output, "computes in " + std::string(te::dtypeName(e->type)) + ": " + te::toString(e));
    switch (e->kind) {
      case te::ExprKind::Access:
        return read(s, e, sp.vars);
      case te::ExprKind::Cast:
        if (e->operands[0]->type != te::DType::F32) break;
        return spine(s, e->operands[0], sp, ops);
      case te::ExprKind::Unary: {
        View v = spine(s, e->operands[0], sp, ops);
        ops.push_back(unaryOp(s, e->unaryOp));
        return v;
      }
      case te::ExprKind::Binary:
        return binarySpine(s, e, sp, ops);
      default:
        break;
    }
    refuse(s.output, "oneDNN has no operation for " + te::toString(e));
  }

  View binarySpine(const te::Stage& s, const te::Expr& e, const Space& sp, std::vector<Op>& ops) {
    const te::Expr& a = e->operands[0];
    const te::Expr& b = e->operands[1];
    for (bool left : {true, false})
      if (auto c = constantOf(left ? b : a)) {
        View v = spine(s, left ? a : b, sp, ops);
        ops.push_back(withConstant(s, e->binaryOp, static_cast<float>(*c), left));
        return v;
      }
    bool fullA = varsOf(a) == sp.live, fullB = varsOf(b) == sp.live;
    if (!fullA && !fullB)
      refuse(s.output, "neither operand of " + std::string(te::binaryOpName(e->binaryOp)) +
                           " varies along all its indices: " + te::toString(e));
    bool left = fullA;
    if (fullA && fullB) {
      bool leafA = a->kind == te::ExprKind::Access, leafB = b->kind == te::ExprKind::Access;
      bool commutes = e->binaryOp != te::BinaryOp::Sub && e->binaryOp != te::BinaryOp::Div;
      // The running value goes through the subexpression, so the other side
      // is a plain read; between two reads, the one a producer can continue.
      if (leafA != leafB)
        left = leafB;
      else if (leafA && commutes)
        left = !(fusableProducer(read(s, b, sp.vars)) && !fusableProducer(read(s, a, sp.vars)));
    }
    View v = spine(s, left ? a : b, sp, ops);
    View other = operand(s, left ? b : a, sp);
    withTensor(s, e->binaryOp, std::move(other), left, ops);
    return v;
  }

  // The other side of a binary operation: a read, or a subexpression
  // computed first into a tensor of its own (broadcast where it does not vary).
  View operand(const te::Stage& s, const te::Expr& e, const Space& sp) {
    if (e->kind == te::ExprKind::Access) return read(s, e, sp.vars);
    if (e->kind == te::ExprKind::Cast && e->type == te::DType::F32 && e->operands[0]->type == te::DType::F32)
      return operand(s, e->operands[0], sp);
    Space sub = sp;
    sub.live = varsOf(e);
    for (size_t d = 0; d < sub.vars.size(); ++d)
      if (!sub.live.count(sub.vars[d])) sub.dims[d] = 1;
    std::string name = s.output + "~" + std::to_string(++subexpressions_);
    tensors_[name] = {sub.dims, te::DType::F32, te::TensorRole::Temporary};
    reads_[name] = 1;
    std::vector<Op> ops;
    View start = spine(s, e, sub, ops);
    mergeClips(ops);
    addChain(s.output, name, sub, std::move(start), std::move(ops));
    return wholeView(name);
  }

  static Op unaryOp(const te::Stage& s, te::UnaryOp op) {
    switch (op) {
      case te::UnaryOp::Neg:
        return eltwise(algorithm::eltwise_linear, -1, 0);
      case te::UnaryOp::Abs:
        return eltwise(algorithm::eltwise_abs);
      case te::UnaryOp::Exp:
        return eltwise(algorithm::eltwise_exp);
      case te::UnaryOp::Log:
        return eltwise(algorithm::eltwise_log);
      case te::UnaryOp::Sqrt:
        return eltwise(algorithm::eltwise_sqrt);
      case te::UnaryOp::Rsqrt:
        return eltwise(algorithm::eltwise_pow, 1, -0.5f);  // alpha * x^beta
      case te::UnaryOp::Tanh:
        return eltwise(algorithm::eltwise_tanh);
      case te::UnaryOp::Sigmoid:
        return eltwise(algorithm::eltwise_logistic);
      default:
        refuse(s.output, std::string("oneDNN has no eltwise operation for ") + te::unaryOpName(op));
    }
  }

  // x op c (left) or c op x: one eltwise operation.
  static Op withConstant(const te::Stage& s, te::BinaryOp op, float c, bool left) {
    switch (op) {
      case te::BinaryOp::Add:
        return eltwise(algorithm::eltwise_linear, 1, c);
      case te::BinaryOp::Sub:
        return left ? eltwise(algorithm::eltwise_linear, 1, -c) : eltwise(algorithm::eltwise_linear, -1, c);
      case te::BinaryOp::Mul:
        return eltwise(algorithm::eltwise_linear, c, 0);
      case te::BinaryOp::Div:
        return left ? eltwise(algorithm::eltwise_linear, 1 / c, 0) : eltwise(algorithm::eltwise_pow, c, -1);
      case te::BinaryOp::Max:
        return c == 0 ? eltwise(algorithm::eltwise_relu, 0, 0) : eltwise(algorithm::eltwise_clip, c, kInf);
      case te::BinaryOp::Min:
        return eltwise(algorithm::eltwise_clip, -kInf, c);
      case te::BinaryOp::Pow:
        if (left) return eltwise(algorithm::eltwise_pow, 1, c);
        break;
      default:
        break;
    }
    refuse(s.output, std::string("oneDNN has no eltwise operation for ") + (left ? "x " : "c ") +
                         te::binaryOpName(op) + (left ? " c" : " x"));
  }

  // x op T (left) or T op x: a binary operation, after an eltwise one when
  // the running value is the right operand of a subtraction or a division.
  static void withTensor(const te::Stage& s, te::BinaryOp op, View t, bool left, std::vector<Op>& ops) {
    switch (op) {
      case te::BinaryOp::Add:
        return ops.push_back(binaryOp(algorithm::binary_add, std::move(t)));
      case te::BinaryOp::Mul:
        return ops.push_back(binaryOp(algorithm::binary_mul, std::move(t)));
      case te::BinaryOp::Max:
        return ops.push_back(binaryOp(algorithm::binary_max, std::move(t)));
      case te::BinaryOp::Min:
        return ops.push_back(binaryOp(algorithm::binary_min, std::move(t)));
      case te::BinaryOp::Sub:
        if (!left) ops.push_back(eltwise(algorithm::eltwise_linear, -1, 0));
        return ops.push_back(binaryOp(left ? algorithm::binary_sub : algorithm::binary_add, std::move(t)));
      case te::BinaryOp::Div:
        if (!left) ops.push_back(eltwise(algorithm::eltwise_pow, 1, -1));
        return ops.push_back(binaryOp(left ? algorithm::binary_div : algorithm::binary_mul, std::move(t)));
      default:
        refuse(s.output, std::string("oneDNN has no binary operation for ") + te::binaryOpName(op));
    }
  }

  // fmin(fmax(x, lo), hi) is one clip: clamping to two overlapping intervals
  // in turn clamps to their intersection.
  static void mergeClips(std::vector<Op>& ops) {
    auto interval = [](const Op& o) -> std::optional<std::pair<float, float>> {
      if (o.binary) return std::nullopt;
      if (o.alg == algorithm::eltwise_clip) return std::pair{o.alpha, o.beta};
      if (o.alg == algorithm::eltwise_relu && o.alpha == 0) return std::pair{0.f, kInf};
      return std::nullopt;
    };
    for (size_t i = 0; i + 1 < ops.size();) {
      auto a = interval(ops[i]), b = interval(ops[i + 1]);
      if (a && b && std::max(a->first, b->first) <= std::min(a->second, b->second)) {
        ops[i] =
            eltwise(algorithm::eltwise_clip, std::max(a->first, b->first), std::min(a->second, b->second));
        ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      } else {
        ++i;
      }
    }
  }

  // ---- Reduction stages: matmul, convolution or reduction ----

  void reduction(const te::Stage& s) {
    if (tensors_.at(s.output).dtype != te::DType::F32) refuse(s.output, "reduces into a non-f32 tensor");
    if (!s.init) refuse(s.output, "accumulates into " + s.output + " without '!' (oneDNN starts from zero)");
    std::string why;
    using Matcher = void (Planner::*)(const te::Stage&);
    for (auto [form, matcher] : {std::pair<const char*, Matcher>{"a matmul", &Planner::matmul},
                                 {"a convolution", &Planner::convolution},
                                 {"a reduction", &Planner::reduce}}) {
      try {
        return (this->*matcher)(s);
      } catch (const Mismatch& m) {
        why += std::string(why.empty() ? "" : "; ") + "not " + form + ": " + m.what();
      }
    }
    refuse(s.output, why);
  }

  // C(batch.., m, n) = sum_k A(.., m, k) * B(.., k, n), any index order in
  // each tensor (strides), batch dimensions broadcast where one side lacks them.
  void matmul(const te::Stage& s) {
    if (s.reduction != te::Reduction::Sum) throw Mismatch("not a '+=!' stage");
    if (s.reductionVars.size() != 1) throw Mismatch("it reduces over more than one index");
    const te::Expr& rhs = s.rhs;
    if (rhs->kind != te::ExprKind::Binary || rhs->binaryOp != te::BinaryOp::Mul)
      throw Mismatch("the right-hand side is not a product");
    auto v0 = plainVars(rhs->operands[0]), v1 = plainVars(rhs->operands[1]);
    if (!v0 || !v1) throw Mismatch("the factors are not reads at plain indices");
    const std::string& k = s.reductionVars[0];
    auto has = [](const std::vector<std::string>& vars, const std::string& v) {
      return std::find(vars.begin(), vars.end(), v) != vars.end();
    };
    if (!has(*v0, k) || !has(*v1, k)) throw Mismatch("a factor does not vary along " + k);
    auto own = [&](const std::vector<std::string>& mine, const std::vector<std::string>& other) {
      std::vector<std::string> vars;
      for (const auto& v : mine)
        if (v != k && !has(other, v)) vars.push_back(v);
      return vars;
    };
    std::vector<std::string> own0 = own(*v0, *v1), own1 = own(*v1, *v0);
    if (own0.size() > 1 || own1.size() > 1) throw Mismatch("a factor has more than one index of its own");
    auto position = [&](const std::vector<std::string>& vars) {
      return vars.empty() ? s.indices.size()
                          : static_cast<size_t>(std::find(s.indices.begin(), s.indices.end(), vars[0]) -
                                                s.indices.begin());
    };
    // src holds the rows (its own index), weights the columns; rows before
    // columns in the output keeps C in its own order. A factor without an
    // index of its own gives one row or column.
    bool firstIsSrc = true;
    if (!own0.empty() && !own1.empty()) {
      firstIsSrc = position(own0) < position(own1);
    } else if (!own0.empty()) {
      firstIsSrc = position(own0) + 1 != s.indices.size();
    } else if (!own1.empty()) {
      firstIsSrc = position(own1) + 1 == s.indices.size();
    }
    const te::Expr& a = rhs->operands[firstIsSrc ? 0 : 1];
    const te::Expr& b = rhs->operands[firstIsSrc ? 1 : 0];
    std::string m = firstIsSrc ? (own0.empty() ? "" : own0[0]) : (own1.empty() ? "" : own1[0]);
    std::string n = firstIsSrc ? (own1.empty() ? "" : own1[0]) : (own0.empty() ? "" : own0[0]);
    std::vector<std::string> batch;
    for (const auto& v : s.indices) {
      if (v == m || v == n) continue;
      if (!has(*v0, v) && !has(*v1, v))
        throw Mismatch(s.output + " varies along " + v + ", which no factor reads");
      batch.push_back(v);
    }
    auto with = [&](std::string x, std::string y) {
      std::vector<std::string> vars = batch;
      vars.push_back(std::move(x));
      vars.push_back(std::move(y));
      return vars;
    };
    outputSpace(s);
    Group g;
    g.kind = Kind::Matmul;
    g.stage = s.output;
    g.out = s.output;
    g.srcs = {read(s, a, with(m, k)), read(s, b, with(k, n))};
    g.dst = viewOf(s, s.output, s.indices, with(m, n));
    add(std::move(g));
  }

  // O(n, k, h, w) = sum_{c,kh,kw} I(n, c, h*s + kh - p, w*s + kw - p) * W(k, c, kh, kw),
  // the read of I guarded by its bounds (zero padding); depthwise: W(c, kh, kw).
  void convolution(const te::Stage& s) {
    if (s.reduction != te::Reduction::Sum) throw Mismatch("not a '+=!' stage");
    if (s.indices.size() != 4) throw Mismatch("the output is not (N, K, H, W)");
    const te::Expr& rhs = s.rhs;
    if (rhs->kind != te::ExprKind::Binary || rhs->binaryOp != te::BinaryOp::Mul)
      throw Mismatch("the right-hand side is not a product");
    for (bool swap : {false, true})
      if (auto w = plainVars(rhs->operands[swap ? 0 : 1]); w && (w->size() == 4 || w->size() == 3))
        return convolution(s, rhs->operands[swap ? 1 : 0], rhs->operands[swap ? 0 : 1], *w);
    throw Mismatch("no factor is a read of (K, C, KH, KW) or (C, KH, KW) weights");
  }

  void convolution(const te::Stage& s, const te::Expr& input, const te::Expr& weights,
                   const std::vector<std::string>& w) {
    bool depthwise = w.size() == 3;
    const std::string& ch = w[depthwise ? 0 : 1];
    const std::string& kh = w[w.size() - 2];
    const std::string& kw = w.back();
    if (w[0] != s.indices[1]) throw Mismatch("the weights' first index is not the output channel");
    std::set<std::string> reduced(s.reductionVars.begin(), s.reductionVars.end());
    std::set<std::string> want =
        depthwise ? std::set<std::string>{kh, kw} : std::set<std::string>{ch, kh, kw};
    if (reduced != want) throw Mismatch("it does not reduce over exactly the weights' window and channels");
    te::Expr read = input, guard;
    if (input->kind == te::ExprKind::Select) {
      auto zero = constantOf(input->operands[2]);
      if (!zero || *zero != 0) throw Mismatch("the guarded read is not zero outside");
      guard = input->operands[0];
      read = input->operands[1];
    }
    if (read->kind != te::ExprKind::Access || read->operands.size() != 4)
      throw Mismatch("the input is not NCHW");
    const std::vector<te::Expr>& idx = read->operands;
    auto isVar = [](const te::Expr& e, const std::string& v) {
      return e->kind == te::ExprKind::Var && e->name == v;
    };
    if (!isVar(idx[0], s.indices[0]) || !isVar(idx[1], ch))
      throw Mismatch("the input is not read at (n, c, ...)");
    const TensorInfo& in = tensors_.at(read->name);
    const TensorInfo& wt = tensors_.at(weights->name);
    const TensorInfo& out = tensors_.at(s.output);
    if (in.dtype != te::DType::F32 || wt.dtype != te::DType::F32) throw Mismatch("the operands are not f32");
    auto fullRange = [&](const std::string& v, int64_t extent) {
      const te::Range& r = s.ranges.at(v);
      return r.lo == 0 && r.extent() == extent;
    };
    if (in.dims[0] != out.dims[0] || !fullRange(ch, in.dims[1]) ||
        !fullRange(ch, wt.dims[depthwise ? 0 : 1]) || !fullRange(w[0], wt.dims[0]) ||
        !fullRange(kh, wt.dims[w.size() - 2]) || !fullRange(kw, wt.dims.back()))
      throw Mismatch("the channels or the window do not cover the tensors");
    ConvShape c;
    c.n = in.dims[0];
    c.c = in.dims[1];
    c.k = out.dims[1];
    c.groups = depthwise ? c.c : 1;
    // Per spatial dimension, the lower and upper bound the guard checks (-1: none).
    std::vector<std::pair<int64_t, int64_t>> bounds = {{-1, -1}, {-1, -1}};
    if (guard) guardBounds(guard, idx, in.dims, bounds);
    c.h = window(s, idx[2], s.indices[2], kh, in.dims[2], out.dims[2], bounds[0]);
    c.w = window(s, idx[3], s.indices[3], kw, in.dims[3], out.dims[3], bounds[1]);
    outputSpace(s);
    Group g;
    g.kind = Kind::Conv;
    g.stage = s.output;
    g.out = s.output;
    g.dst = wholeView(s.output);
    ConvTensors t = convTensors(c, depthwise);
    g.srcs = {wholeView(read->name), View{weights->name, t.weights, rowMajorStrides(t.weights), false, true}};
    g.conv = c;
    g.depthwise = depthwise;
    add(std::move(g));
  }

  // The bounds a guard checks, per spatial index: lower (0) and upper (its
  // extent), as `e >= 0`, `0 <= e`, `e < H`, `e <= H - 1`, ... conjoined.
  static void guardBounds(const te::Expr& guard, const std::vector<te::Expr>& idx, const Dims& dims,
                          std::vector<std::pair<int64_t, int64_t>>& bounds) {
    if (guard->kind == te::ExprKind::Binary && guard->binaryOp == te::BinaryOp::And) {
      guardBounds(guard->operands[0], idx, dims, bounds);
      guardBounds(guard->operands[1], idx, dims, bounds);
      return;
    }
    if (guard->kind != te::ExprKind::Binary || !te::isComparison(guard->binaryOp))
      throw Mismatch("the guard is not a conjunction of bound checks");
    auto lhs = te::toAffine(guard->operands[0]), rhs = te::toAffine(guard->operands[1]);
    if (!lhs || !rhs) throw Mismatch("the guard compares non-affine values");
    // lhs - rhs op 0, as idx + d op 0 or -(idx + d) op 0.
    te::AffineExpr diff = *lhs;
    for (const auto& [v, c] : rhs->coeffs) diff.coeffs[v] -= c;
    diff.constant -= rhs->constant;
    std::erase_if(diff.coeffs, [](const auto& kv) { return kv.second == 0; });
    for (size_t d = 0; d < 2; ++d) {
      auto e = te::toAffine(idx[d + 2]);
      if (!e) throw Mismatch("the input's spatial index is not affine");
      for (int sign : {1, -1}) {
        bool same = diff.coeffs.size() == e->coeffs.size();
        for (const auto& [v, c] : e->coeffs)
          same = same && diff.coeffs.count(v) && diff.coeffs.at(v) == sign * c;
        if (!same) continue;
        // sign * (idx - e.constant) + diff.constant op 0  =>  idx op' t
        te::BinaryOp op = guard->binaryOp;
        if (sign < 0)
          op = op == te::BinaryOp::Lt   ? te::BinaryOp::Gt
               : op == te::BinaryOp::Le ? te::BinaryOp::Ge
               : op == te::BinaryOp::Gt ? te::BinaryOp::Lt
               : op == te::BinaryOp::Ge ? te::BinaryOp::Le
                                        : op;
        int64_t t = e->constant - sign * diff.constant;
        if (op == te::BinaryOp::Ge && t == 0)
          bounds[d].first = 0;
        else if (op == te::BinaryOp::Gt && t == -1)
          bounds[d].first = 0;
        else if (op == te::BinaryOp::Lt && t == dims[d + 2])
          bounds[d].second = dims[d + 2];
        else if (op == te::BinaryOp::Le && t == dims[d + 2] - 1)
          bounds[d].second = dims[d + 2];
        else
          throw Mismatch("the guard checks something other than the input's bounds");
        return;
      }
    }
    throw Mismatch("the guard checks something other than the input's spatial indices");
  }

  // One spatial dimension: index = out * stride + k - padBefore, the reads
  // the guard's checks exclude being exactly those out of bounds.
  static WindowDim window(const te::Stage& s, const te::Expr& index, const std::string& outVar,
                          const std::string& kVar, int64_t in, int64_t out,
                          std::pair<int64_t, int64_t> checked) {
    auto a = te::toAffine(index);
    auto range = te::int32Range(index, s.ranges);
    if (!a || !range || a->coeffs.size() != 2 || !a->coeffs.count(outVar) || !a->coeffs.count(kVar) ||
        a->coeffs.at(kVar) != 1 || a->coeffs.at(outVar) < 1)
      throw Mismatch("a spatial index is not out * stride + window - padding");
    const te::Range& ko = s.ranges.at(kVar);
    const te::Range& oo = s.ranges.at(outVar);
    if (ko.lo != 0 || oo.lo != 0 || oo.extent() != out) throw Mismatch("the window or the output is offset");
    if ((range->first < 0 && checked.first < 0) || (range->second >= in && checked.second < 0))
      throw Mismatch("a read out of the input's bounds is not guarded");
    WindowDim w{in, out, ko.extent(), a->coeffs.at(outVar), -a->constant, 0};
    if (w.padBefore < 0) throw Mismatch("the window starts inside the input (negative padding)");
    w.padAfter = std::max<int64_t>(0, range->second - (in - 1));
    if ((in + w.padBefore + w.padAfter - w.kernel) / w.stride + 1 != out)
      throw Mismatch("the output does not cover the padded input the way oneDNN's does");
    return w;
  }

  // O = reduce over some indices of X (or of X * X, a sum of squares), the
  // kept indices in X's order; a constant factor of a sum as a post-op.
  void reduce(const te::Stage& s) {
    auto [e, scale] = s.reduction == te::Reduction::Sum ? unscaled(s.rhs) : std::pair{s.rhs, 1.0};
    float power = 0;
    algorithm alg = s.reduction == te::Reduction::Sum   ? algorithm::reduction_sum
                    : s.reduction == te::Reduction::Max ? algorithm::reduction_max
                    : s.reduction == te::Reduction::Min ? algorithm::reduction_min
                                                        : algorithm::reduction_mul;
    if (s.reduction == te::Reduction::Sum && e->kind == te::ExprKind::Binary &&
        e->binaryOp == te::BinaryOp::Mul && te::toString(e->operands[0]) == te::toString(e->operands[1])) {
      alg = algorithm::reduction_norm_lp_power_p_sum;
      power = 2;
      e = e->operands[0];
    }
    auto vars = plainVars(e);
    if (!vars) throw Mismatch("the right-hand side is not a read (or its square) at plain indices");
    std::vector<std::string> kept;
    for (const auto& v : *vars)
      if (std::count(s.indices.begin(), s.indices.end(), v)) kept.push_back(v);
    if (kept != s.indices)
      throw Mismatch("the output keeps the input's indices in another order, or adds some");
    if (kept.size() == vars->size() || vars->size() - kept.size() != s.reductionVars.size())
      throw Mismatch("it does not reduce over each of its reduction indices once");
    outputSpace(s);
    Group g;
    g.kind = Kind::Reduction;
    g.stage = s.output;
    g.out = s.output;
    g.srcs = {viewOf(s, e->name, *vars, *vars)};
    Dims dims = g.srcs[0].dims;
    for (size_t d = 0; d < vars->size(); ++d)
      if (!std::count(s.indices.begin(), s.indices.end(), (*vars)[d])) dims[d] = 1;
    g.dst = {s.output, dims, rowMajorStrides(dims), false, true};
    g.alg = alg;
    g.power = power;
    if (scale != 1) g.ops.push_back(eltwise(algorithm::eltwise_linear, static_cast<float>(scale), 0));
    add(std::move(g));
  }

  // ---- The softmax idiom ----

  // Mx = max_j S; E = exp((S - Mx) * c); Sum = sum_j E; P = E / Sum, with c >
  // 0: softmax(c * S) along j (the shift by c * max cancels). Mx, E and Sum
  // are temporaries nothing else reads.
  std::optional<SoftmaxIdiom> softmaxIdiom(size_t i) const {
    const te::Stage& mx = p_.stages[i];
    auto sVars = plainVars(mx.rhs);
    if (mx.reduction != te::Reduction::Max || !mx.init || mx.reductionVars.size() != 1 || !sVars ||
        !onlyReadBy(mx.output, 1))
      return std::nullopt;
    SoftmaxIdiom idiom;
    idiom.mx = i;
    idiom.src = mx.rhs->name;
    idiom.axis =
        static_cast<int>(std::find(sVars->begin(), sVars->end(), mx.reductionVars[0]) - sVars->begin());
    if (static_cast<size_t>(idiom.axis) == sVars->size() || !readsAlong(mx, mx.rhs, mx.indices, idiom.axis))
      return std::nullopt;
    // E = exp((S - Mx) * c)
    idiom.e = readers_.at(mx.output)[0];
    const te::Stage& e = p_.stages[idiom.e];
    if (e.reduction != te::Reduction::None || e.rhs->kind != te::ExprKind::Unary ||
        e.rhs->unaryOp != te::UnaryOp::Exp || !onlyReadBy(e.output, 2))
      return std::nullopt;
    auto [shifted, scale] = unscaled(e.rhs->operands[0]);
    idiom.scale = scale;
    if (scale <= 0 || shifted->kind != te::ExprKind::Binary || shifted->binaryOp != te::BinaryOp::Sub ||
        !isRead(e, shifted->operands[0], idiom.src, -1) ||
        !isRead(e, shifted->operands[1], mx.output, idiom.axis))
      return std::nullopt;
    // Sum = sum_j E and P = E / Sum, in either order.
    std::vector<size_t> users = readers_.at(e.output);
    if (users.size() != 2) return std::nullopt;
    for (size_t sumAt : users) {
      const te::Stage& sum = p_.stages[sumAt];
      size_t pAt = users[0] == sumAt ? users[1] : users[0];
      const te::Stage& p = p_.stages[pAt];
      if (sum.reduction != te::Reduction::Sum || !sum.init || sum.reductionVars.size() != 1 ||
          !readsAlong(sum, sum.rhs, sum.indices, idiom.axis) || sum.rhs->name != e.output ||
          plainVars(sum.rhs)->at(idiom.axis) != sum.reductionVars[0] || !onlyReadBy(sum.output, 1) ||
          p.reduction != te::Reduction::None || p.rhs->kind != te::ExprKind::Binary ||
          p.rhs->binaryOp != te::BinaryOp::Div || !isRead(p, p.rhs->operands[0], e.output, -1) ||
          !isRead(p, p.rhs->operands[1], sum.output, idiom.axis) ||
          tensors_.at(p.output).dims != tensors_.at(idiom.src).dims ||
          tensors_.at(p.output).dtype != te::DType::F32)
        continue;
      idiom.sum = sumAt;
      idiom.p = pAt;
      return idiom;
    }
    return std::nullopt;
  }

  // An f32 temporary read `n` times in all.
  bool onlyReadBy(const std::string& t, int n) const {
    auto it = reads_.find(t);
    const TensorInfo& info = tensors_.at(t);
    return info.role == te::TensorRole::Temporary && info.dtype == te::DType::F32 && it != reads_.end() &&
           it->second == n;
  }

  // `read` reads all of f32 `tensor` along the stage's indices in order, with
  // the index at `axis` left out of the read when axis >= 0.
  bool isRead(const te::Stage& s, const te::Expr& read, const std::string& tensor, int axis) const {
    auto vars = plainVars(read);
    if (!vars || read->name != tensor || tensors_.at(tensor).dtype != te::DType::F32) return false;
    std::vector<std::string> want = s.indices;
    if (axis >= 0) want.erase(want.begin() + axis);
    const Dims& dims = tensors_.at(tensor).dims;
    const Dims& outDims = tensors_.at(s.output).dims;
    Dims expected = outDims;
    if (axis >= 0) expected.erase(expected.begin() + axis);
    if (expected.empty()) expected = {1};
    return *vars == want && dims == expected && outputCovered(s);
  }

  // A reduction's read: all of `read`'s tensor, the output keeping every
  // index but the one at `axis`, in order.
  bool readsAlong(const te::Stage& s, const te::Expr& read, const std::vector<std::string>& kept,
                  int axis) const {
    auto vars = plainVars(read);
    if (!vars || static_cast<size_t>(axis) >= vars->size() ||
        tensors_.at(read->name).dtype != te::DType::F32 || !outputCovered(s))
      return false;
    std::vector<std::string> rest = *vars;
    rest.erase(rest.begin() + axis);
    const te::Range& r = s.ranges.at((*vars)[axis]);
    return rest == kept && r.lo == 0 && r.extent() == tensors_.at(read->name).dims[axis];
  }

  bool outputCovered(const te::Stage& s) const {
    try {
      outputSpace(s);
      return true;
    } catch (const PeerError&) {
      return false;
    }
  }

  void addSoftmax(const SoftmaxIdiom& idiom) {
    const te::Stage& p = p_.stages[idiom.p];
    reads_[idiom.src] -= 1;  // read once by the softmax instead of by Mx and E
    View src = wholeView(idiom.src);
    if (idiom.scale != 1) {
      Op scale = eltwise(algorithm::eltwise_linear, static_cast<float>(idiom.scale), 0);
      if (auto gi = fusableProducer(src)) {
        groups[*gi].ops.push_back(scale);
      } else {
        std::string name = p.output + "~" + std::to_string(++subexpressions_);
        tensors_[name] = {tensors_.at(idiom.src).dims, te::DType::F32, te::TensorRole::Temporary};
        reads_[name] = 1;
        Space sp{{}, tensors_.at(name).dims, {}};
        addChain(p.output, name, sp, src, {scale});
        src = wholeView(name);
      }
    }
    Group g;
    g.kind = Kind::Softmax;
    g.stage = p.output;
    g.out = p.output;
    g.dst = wholeView(p.output);
    g.srcs = {src};
    g.axis = idiom.axis;
    add(std::move(g));
  }

  const te::Program& p_;
  std::map<std::string, TensorInfo> tensors_;
  std::set<std::string> written_;
  std::map<std::string, int> reads_;  // tensor -> reads in all stages (the plan's, once planned)
  std::map<std::string, std::vector<size_t>> readers_;  // tensor -> stages reading it
  std::map<std::string, size_t> producer_;              // tensor -> group
  int subexpressions_ = 0;
};

std::string algName(algorithm a) {
  std::string s = dnnl_alg_kind2str(dnnl::convert_to_c(a));
  for (const char* prefix : {"eltwise_", "binary_", "reduction_"})
    if (s.rfind(prefix, 0) == 0) return s.substr(std::string(prefix).size());
  return s;
}

bool isReference(const dnnl::primitive_desc& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

// How many of ops[first..] one primitive may take as post-ops: oneDNN 2.6
// computes wrong results (binary, matmul alike) when two eltwise post-ops
// of one algorithm have different parameters, e.g. x * 0.5 then x + 1.
size_t postOpsAllowed(const std::vector<Op>& ops, size_t first) {
  for (size_t i = first; i < ops.size(); ++i)
    for (size_t j = first; j < i; ++j)
      if (!ops[i].binary && !ops[j].binary && ops[i].alg == ops[j].alg &&
          (ops[i].alpha != ops[j].alpha || ops[i].beta != ops[j].beta))
        return i - first;
  return ops.size() - first;
}

// `make(k)` with the most post-ops k (of ops[first..]) that oneDNN still
// runs with an optimized kernel (its reference code is slower than the
// extra pass a split costs), and that k.
template <typename Make>
std::pair<dnnl::primitive_desc, size_t> fitPostOps(const std::vector<Op>& ops, size_t first, Make make) {
  for (size_t k = postOpsAllowed(ops, first);; --k) {
    try {
      dnnl::primitive_desc pd = make(k);
      if (k == 0 || !isReference(pd)) return {pd, k};
    } catch (const dnnl::error&) {
      if (k == 0) throw;
    }
  }
}

// The strides of a plain (strided, unblocked) desc.
std::optional<Dims> stridesOf(const memory::desc& d) {
  const dnnl_memory_desc_t& c = d.data;
  if (c.format_kind != dnnl_blocked || c.format_desc.blocking.inner_nblks != 0 || c.offset0 != 0)
    return std::nullopt;
  return Dims(c.format_desc.blocking.strides, c.format_desc.blocking.strides + c.ndims);
}

// `descs` (plain, over `dims`, 1 where one broadcasts) with the dimensions
// of extent 1 dropped and neighbours every desc reads alike (broadcast in
// both, or contiguous across both) merged, behind a leading 1 if `leading`:
// oneDNN's optimized elementwise kernels take few broadcast patterns
// (per channel, i.e. along dimension 1, for post-ops), which this form
// fits more often. nullopt for a blocked desc.
std::optional<std::vector<memory::desc>> collapsed(const std::vector<memory::desc>& descs, const Dims& dims,
                                                   bool leading) {
  std::vector<Dims> strides;
  for (const auto& d : descs) {
    auto s = stridesOf(d);
    if (!s) return std::nullopt;
    strides.push_back(*s);
  }
  struct Axis {
    int64_t extent;
    std::vector<bool> broadcast;
    Dims strides;  // per desc, of its innermost merged dimension
  };
  std::vector<Axis> axes;
  for (size_t p = 0; p < dims.size(); ++p) {
    if (dims[p] == 1) continue;
    Axis a{dims[p], {}, {}};
    for (size_t j = 0; j < descs.size(); ++j) {
      a.broadcast.push_back(descs[j].dims()[p] == 1);
      a.strides.push_back(strides[j][p]);
    }
    bool alike = !axes.empty();
    for (size_t j = 0; alike && j < descs.size(); ++j)
      alike = axes.back().broadcast[j] == a.broadcast[j] &&
              (a.broadcast[j] || axes.back().strides[j] == a.strides[j] * a.extent);
    if (alike) {
      axes.back().extent *= a.extent;
      axes.back().strides = a.strides;
    } else {
      axes.push_back(a);
    }
  }
  if (axes.empty() || leading) {
    Axis one{1, std::vector<bool>(descs.size(), true), Dims(descs.size(), 0)};
    for (size_t j = 0; j < descs.size(); ++j)
      one.strides[j] = axes.empty() ? 1 : axes[0].strides[j] * (axes[0].broadcast[j] ? 1 : axes[0].extent);
    axes.insert(axes.begin(), one);
  }
  std::vector<memory::desc> out;
  for (size_t j = 0; j < descs.size(); ++j) {
    Dims d, s;
    for (const Axis& a : axes) {
      d.push_back(a.broadcast[j] ? 1 : a.extent);
      s.push_back(a.strides[j]);
    }
    out.emplace_back(d, descs[j].data_type(), s);
  }
  return out;
}

// Builds the primitives of a plan, in order, and the memory between them.
class Emitter {
 public:
  Emitter(OneDnnRun& r, const te::Program& p, const std::vector<runtime::Buffer>& in, const Planner& plan)
      : r_(r), plan_(plan) {
    auto ins = p.inputs();
    for (size_t i = 0; i < ins.size(); ++i)
      if (ins[i]->dtype == te::DType::F32)
        values_[ins[i]->name] = r.wrap(plainDesc(dimsOf(ins[i]->shape)), in[i]);
    for (const auto* t : p.outputs())
      outputs_[t->name] = r.newOutput(t->shape, plainDesc(dimsOf(t->shape), dataTypeOf(t->dtype)), t->dtype);
  }

  void emit() {
    // Convolutions first: their choice of blocked layout is the one the
    // elementwise groups producing their inputs then write.
    for (size_t gi : plan_.order)
      if (plan_.groups[gi].kind == Kind::Conv) guarded(plan_.groups[gi], [&] { prepareConv(gi); });
    for (size_t gi : plan_.order) guarded(plan_.groups[gi], [&] { emit(gi, plan_.groups[gi]); });
    r_.notes.push_back("op by op: " + steps_);
    if (blocked_)
      r_.notes.push_back(
          "convolutions in oneDNN's blocked layouts; reorders of the graph's inputs and outputs run outside "
          "the timed region");
  }

 private:
  template <typename F>
  static void guarded(const Group& g, F f) {
    try {
      f();
    } catch (const dnnl::error& e) {
      refuse(g.stage, std::string("oneDNN: ") + e.what());
    }
  }

  void emit(size_t gi, const Group& g) {
    switch (g.kind) {
      case Kind::Chain:
        return chain(g);
      case Kind::Matmul:
        return matmul(g);
      case Kind::Conv:
        return conv(gi, g);
      case Kind::Reduction:
        return reduction(g);
      case Kind::Softmax:
        return softmax(g);
    }
  }

  // A primitive of the timed region, listed in the notes under the tensor it computes.
  void timed(const std::string& out, const std::string& what, dnnl::primitive p,
             std::unordered_map<int, memory> args) {
    steps_ += (steps_.empty() ? "" : "; ") + out + ": " + what;
    r_.addTimed(std::move(p), std::move(args));
  }

  void timedReorder(const std::string& out, const std::string& what, const memory& from, const memory& to) {
    timed(out, what, dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
  }

  static std::string postOpNames(const std::vector<Op>& ops, size_t first, size_t count) {
    std::string names;
    for (size_t i = first; i < first + count; ++i) names += "+" + algName(ops[i].alg);
    return names;
  }

  const dnnl::engine& engine() const { return r_.engine(); }
  memory over(const memory& m, const memory::desc& d) const {
    return memory(d, engine(), m.get_data_handle());
  }

  // The memory holding `t` in row-major order.
  memory plain(const std::string& t) {
    return in(View{t, tensor(t).dims, rowMajorStrides(tensor(t).dims), true, true},
              plainDesc(tensor(t).dims));
  }

  const TensorInfo& tensor(const std::string& t) const { return plan_.tensor(t); }

  // `v` as memory of desc `wanted`: the tensor's own memory when it already
  // is, else a reorder into a copy: once, outside the timed region, for a
  // program input read densely (the edge of the graph); timed otherwise.
  memory in(const View& v, const memory::desc& wanted, bool weights = false) {
    const memory& held = values_.at(v.tensor);
    memory source = v.whole && held.get_desc().dims() == v.dims ? held : over(plain(v.tensor), v.desc());
    if (source.get_desc() == wanted) return source;
    for (const auto& c : converted_)
      if (c.tensor == v.tensor && c.from == source.get_desc() && c.to == wanted) return c.mem;
    memory copy;
    if (tensor(v.tensor).role == te::TensorRole::Input && v.dense) {
      copy = r_.toLayout(source, wanted, weights ? r_.weightReorders() : r_.inputReorders());
    } else {
      copy = r_.scratch(wanted);
      timedReorder(v.tensor, "reorder to another layout", source, copy);
    }
    converted_.push_back({v.tensor, source.get_desc(), wanted, copy});
    return copy;
  }

  // Where a group computing in `layout` (f32, the tensor's dims) writes `t`.
  memory target(const std::string& t, const memory::desc& layout) {
    const TensorInfo& info = tensor(t);
    if (info.dtype == te::DType::F32 && info.role == te::TensorRole::Output)
      return r_.fromLayout(outputs_.at(t), layout);
    return r_.scratch(layout);
  }

  // After the group: `t` is `written`, converted (timed) to its type when not f32.
  void finish(const std::string& t, const memory& written) {
    const TensorInfo& info = tensor(t);
    if (info.dtype == te::DType::F32) {
      values_[t] = written;
      return;
    }
    memory to = info.role == te::TensorRole::Output
                    ? outputs_.at(t)
                    : r_.scratch(plainDesc(info.dims, dataTypeOf(info.dtype)));
    timedReorder(t, std::string("reorder to ") + te::dtypeName(info.dtype), written, to);
    values_[t] = to;
  }

  // A binary operand: in the primitive's layout when it is a whole tensor
  // of the primitive's dims (and the layout is known), else its view.
  static memory::desc operandDesc(const View& v, const memory::desc& layout, const Dims& dims) {
    return layout != memory::desc() && v.whole && v.dims == dims ? layout : v.desc();
  }

  // Post-ops ops[first, first + count): eltwise ones, and binary ones
  // reading `operands` in turn; `scale` multiplies a binary's first operand.
  static dnnl::primitive_attr attrOf(const std::vector<Op>& ops, size_t first, size_t count,
                                     const std::vector<memory::desc>& operands, float scale = 1) {
    dnnl::post_ops po;
    size_t next = 0;
    for (size_t i = first; i < first + count; ++i) {
      if (ops[i].binary) {
        po.append_binary(ops[i].alg, operands[next++]);
      } else {
        po.append_eltwise(1.f, ops[i].alg, ops[i].alpha, ops[i].beta);
      }
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    if (scale != 1) attr.set_scales(DNNL_ARG_SRC_0, 0, {scale});
    return attr;
  }

  // The tensors the binary operations among ops[first..] read, as memory of
  // the descs a primitive computing in `layout` reads them in.
  std::vector<memory> operandsOf(const std::vector<Op>& ops, size_t first, const memory::desc& layout,
                                 const Dims& dims) {
    std::vector<memory> mems;
    for (size_t i = first; i < ops.size(); ++i)
      if (ops[i].binary) mems.push_back(in(ops[i].operand, operandDesc(ops[i].operand, layout, dims)));
    return mems;
  }

  static std::vector<memory::desc> descsOf(const std::vector<memory>& mems, size_t count) {
    std::vector<memory::desc> descs;
    for (size_t i = 0; i < count; ++i) descs.push_back(mems[i].get_desc());
    return descs;
  }

  static size_t binaryCount(const std::vector<Op>& ops, size_t first, size_t count) {
    return static_cast<size_t>(std::count_if(ops.begin() + static_cast<std::ptrdiff_t>(first),
                                             ops.begin() + static_cast<std::ptrdiff_t>(first + count),
                                             [](const Op& o) { return o.binary; }));
  }

  // The post-op operands of ops[first, first + count): `mems` seen as `descs`.
  void bindPostOps(const std::vector<Op>& ops, size_t first, size_t count, const std::vector<memory>& mems,
                   const std::vector<memory::desc>& descs, std::unordered_map<int, memory>& args) const {
    size_t next = 0;
    for (size_t i = first; i < first + count; ++i)
      if (ops[i].binary) {
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i - first)) | DNNL_ARG_SRC_1] =
            over(mems[next], descs[next]);
        ++next;
      }
  }

  // A broadcast add first applied to a matmul's (along its columns) or a
  // convolution's (along its channels) result: its bias argument.
  static std::optional<memory::desc> biasOf(const Group& g) {
    if ((g.kind != Kind::Matmul && g.kind != Kind::Conv) || g.ops.empty() || !g.ops[0].binary ||
        g.ops[0].alg != algorithm::binary_add)
      return std::nullopt;
    const View& b = g.ops[0].operand;
    size_t along = g.kind == Kind::Matmul ? b.dims.size() - 1 : 1;
    for (size_t d = 0; d < b.dims.size(); ++d)
      if (d != along && b.dims[d] != 1) return std::nullopt;
    if (g.kind == Kind::Matmul) return b.desc();
    return memory::desc({b.dims[1]}, kF32, Dims{b.strides[1]});
  }

  memory biasMemory(const Group& g, const memory::desc& bias) {
    const View& b = g.ops[0].operand;
    return g.kind == Kind::Matmul ? in(b, bias) : over(plain(b.tensor), bias);
  }

  // The layout an elementwise group computes in: the one a convolution wants
  // its result in, else its running value's (a convolution's result stays blocked).
  memory::desc chainLayout(const Group& g) const {
    if (auto w = wishes_.find(g.out); w != wishes_.end() && w->second.dims() == g.dst.dims) return w->second;
    const View& s = g.srcs[0];
    if (s.whole && s.dims == g.dst.dims) return values_.at(s.tensor).get_desc();
    return plainDesc(g.dst.dims);
  }

  void chain(const Group& g) {
    const View& spine = g.srcs[0];
    if (g.ops.empty()) {  // a copy (a transpose, a conversion): one reorder
      const TensorInfo& info = tensor(g.out);
      memory from = spine.whole ? values_.at(spine.tensor) : over(plain(spine.tensor), spine.desc());
      memory to = info.role == te::TensorRole::Output
                      ? outputs_.at(g.out)
                      : r_.scratch(plainDesc(info.dims, dataTypeOf(info.dtype)));
      timedReorder(g.out, "reorder", from, to);
      values_[g.out] = to;
      return;
    }
    memory::desc layout = chainLayout(g);
    runChain(g, in(spine, operandDesc(spine, layout, g.dst.dims)), 0, layout);
  }

  // ops[from..] of `g` applied to `running` (its dims, computed in `layout`):
  // a binary or eltwise primitive taking the next ones as post-ops, as many
  // as oneDNN runs with an optimized kernel, and so on; then `g` is done.
  void runChain(const Group& g, memory running, size_t from, const memory::desc& layout) {
    const Dims& dims = g.dst.dims;
    memory written = running;
    while (from < g.ops.size()) {
      Op main = g.ops[from];
      size_t next = from + 1;
      float scale = 1;
      if (!main.binary && main.alg == algorithm::eltwise_linear && main.beta == 0 && next < g.ops.size() &&
          g.ops[next].binary) {  // x * c, then a binary operation: c scales the binary's first operand
        scale = main.alpha;
        main = g.ops[next++];
      }
      if (!main.binary && running.get_desc() != layout) {  // an eltwise reads and writes one layout
        memory copy = r_.scratch(layout);
        timedReorder(g.out, "reorder to another layout", running, copy);
        running = copy;
      }
      // src0, [src1], then the post-op operands
      std::vector<memory> mems = operandsOf(g.ops, next, layout, dims);
      if (main.binary) mems.insert(mems.begin(), in(main.operand, operandDesc(main.operand, layout, dims)));
      mems.insert(mems.begin(), running);
      size_t head = main.binary ? 2 : 1;
      std::vector<memory::desc> descs;  // the chosen primitive's: src0, [src1], post-op operands, dst
      auto [pd, k] = fitPostOps(g.ops, next, [&](size_t count) {
        std::vector<memory::desc> all = descsOf(mems, head + binaryCount(g.ops, next, count));
        all.push_back(layout);
        std::optional<dnnl::primitive_desc> chosen;
        for (int shape : {0, 1, 2}) {  // dimensions merged, merged after a leading 1, as they are
          auto ds = shape == 2 ? std::optional(all) : collapsed(all, dims, shape == 1);
          if (!ds) continue;
          try {
            dnnl::primitive_attr attr =
                attrOf(g.ops, next, count, {ds->begin() + head, ds->end() - 1}, scale);
            dnnl::primitive_desc pd =
                main.binary
                    ? dnnl::primitive_desc(dnnl::binary::primitive_desc(
                          dnnl::binary::desc(main.alg, (*ds)[0], (*ds)[1], ds->back()), attr, engine()))
                    : dnnl::primitive_desc(dnnl::eltwise_forward::primitive_desc(
                          dnnl::eltwise_forward::desc(kInference, main.alg, (*ds)[0], main.alpha, main.beta),
                          attr, engine()));
            if (!chosen || (isReference(*chosen) && !isReference(pd))) {
              chosen = pd;
              descs = *ds;
            }
            if (!isReference(pd)) break;
          } catch (const dnnl::error&) {
          }
        }
        if (!chosen) throw dnnl::error(dnnl_unimplemented, "no binary or eltwise primitive fits");
        return *chosen;
      });
      bool last = next + k == g.ops.size();
      memory dst = running;
      if (last) {
        std::tie(written, dst) = dstOf(g, layout);
      } else {
        written = dst = r_.scratch(layout);
      }
      std::unordered_map<int, memory> args = {
          {main.binary ? DNNL_ARG_SRC_0 : DNNL_ARG_SRC, over(mems[0], descs[0])},
          {DNNL_ARG_DST, over(dst, descs.back())}};
      if (main.binary) args[DNNL_ARG_SRC_1] = over(mems[1], descs[1]);
      bindPostOps(g.ops, next, k, {mems.begin() + static_cast<std::ptrdiff_t>(head), mems.end()},
                  {descs.begin() + static_cast<std::ptrdiff_t>(head), descs.end() - 1}, args);
      timed(g.out, (scale != 1 ? "scaled " : "") + algName(main.alg) + postOpNames(g.ops, next, k),
            dnnl::primitive(pd), std::move(args));
      running = dst;
      from = next + k;
    }
    finish(g.out, written);
  }

  // Written through `g.dst`: the tensor itself, or a view of its row-major
  // storage (a matmul's dims in the output's order, a reduction's 1s).
  std::pair<memory, memory> dstOf(const Group& g, const memory::desc& layout) {
    memory written = target(g.out, g.dst.whole ? layout : plainDesc(tensor(g.out).dims));
    return {written, g.dst.whole ? written : over(written, g.dst.desc())};
  }

  // A primitive taking post-ops from `g.ops[first..]` (as many as fit) into
  // `dst`'s layout, the rest as a chain after it.
  void withPostOps(const Group& g, const std::string& what, size_t first, const memory::desc& layout,
                   const dnnl::primitive_desc& pd, size_t k, std::unordered_map<int, memory> args,
                   const std::vector<memory>& operands) {
    auto [written, dst] =
        first + k == g.ops.size() ? dstOf(g, layout) : std::pair{r_.scratch(layout), memory()};
    if (!dst) dst = written;
    args[DNNL_ARG_DST] = dst;
    bindPostOps(g.ops, first, k, operands, descsOf(operands, operands.size()), args);
    timed(g.out, what + postOpNames(g.ops, first, k), dnnl::primitive(pd), std::move(args));
    if (first + k == g.ops.size()) return finish(g.out, written);
    runChain(g, dst, first + k, layout);
  }

  void matmul(const Group& g) {
    memory a = in(g.srcs[0], g.srcs[0].desc()), b = in(g.srcs[1], g.srcs[1].desc());
    std::optional<memory::desc> bias = biasOf(g);
    size_t first = bias ? 1 : 0;
    memory::desc dstDesc = g.dst.desc();
    std::vector<memory> operands = operandsOf(g.ops, first, dstDesc, g.dst.dims);
    auto [pd, k] = fitPostOps(g.ops, first, [&](size_t count) {
      dnnl::matmul::desc d = bias ? dnnl::matmul::desc(a.get_desc(), b.get_desc(), *bias, dstDesc)
                                  : dnnl::matmul::desc(a.get_desc(), b.get_desc(), dstDesc);
      return dnnl::primitive_desc(dnnl::matmul::primitive_desc(
          d, attrOf(g.ops, first, count, descsOf(operands, operands.size())), engine()));
    });
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}};
    if (bias) args[DNNL_ARG_BIAS] = biasMemory(g, *bias);
    withPostOps(g, bias ? "matmul+bias" : "matmul", first, dstDesc, pd, k, std::move(args), operands);
  }

  // Post-op operands of a convolution keep their own (plain) layout: its
  // blocked one is only known once the primitive is chosen.
  void prepareConv(size_t gi) {
    const Group& g = plan_.groups[gi];
    std::optional<memory::desc> bias = biasOf(g);
    size_t first = bias ? 1 : 0;
    std::vector<memory::desc> operands;
    for (size_t i = first; i < g.ops.size(); ++i)
      if (g.ops[i].binary) operands.push_back(g.ops[i].operand.desc());
    convs_[gi] = fitPostOps(g.ops, first, [&](size_t count) {
      return dnnl::primitive_desc(convPrimitive(engine(), g.conv, g.depthwise, bias.value_or(memory::desc()),
                                                attrOf(g.ops, first, count, operands)));
    });
    wishes_[g.srcs[0].tensor] = convs_[gi].first.src_desc(0);
  }

  void conv(size_t gi, const Group& g) {
    const auto& [pd, k] = convs_.at(gi);
    std::optional<memory::desc> bias = biasOf(g);
    size_t first = bias ? 1 : 0;
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, in(g.srcs[0], pd.src_desc(0))},
                                            {DNNL_ARG_WEIGHTS, in(g.srcs[1], pd.weights_desc(0), true)}};
    if (bias) args[DNNL_ARG_BIAS] = biasMemory(g, *bias);
    blocked_ =
        blocked_ || pd.src_desc(0) != plainDesc(g.srcs[0].dims) || pd.dst_desc(0) != plainDesc(g.dst.dims);
    withPostOps(g, bias ? "convolution+bias" : "convolution", first, pd.dst_desc(0), pd, k, std::move(args),
                operandsOf(g.ops, first, {}, g.dst.dims));
  }

  void reduction(const Group& g) {
    memory src = in(g.srcs[0], g.srcs[0].desc());
    memory::desc dstDesc = g.dst.desc();
    std::vector<memory> operands = operandsOf(g.ops, 0, {}, g.dst.dims);
    auto [pd, k] = fitPostOps(g.ops, 0, [&](size_t count) {
      return dnnl::primitive_desc(dnnl::reduction::primitive_desc(
          dnnl::reduction::desc(g.alg, src.get_desc(), dstDesc, g.power, 0.f),
          attrOf(g.ops, 0, count, descsOf(operands, operands.size())), engine()));
    });
    withPostOps(g, "reduction_" + algName(g.alg), 0, dstDesc, pd, k, {{DNNL_ARG_SRC, src}}, operands);
  }

  void softmax(const Group& g) {
    memory src = in(g.srcs[0], g.srcs[0].desc());
    auto [written, dst] = dstOf(g, g.dst.desc());
    dnnl::softmax_forward::primitive_desc pd(dnnl::softmax_forward::desc(kInference, src.get_desc(), g.axis),
                                             engine());
    timed(g.out, "softmax", dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    finish(g.out, written);
  }

  struct Converted {
    std::string tensor;
    memory::desc from, to;
    memory mem;
  };

  OneDnnRun& r_;
  const Planner& plan_;
  std::map<std::string, memory> values_;        // where each tensor computed so far is
  std::map<std::string, memory> outputs_;       // the program's outputs, row-major
  std::vector<Converted> converted_;            // copies in other layouts, made once
  std::map<std::string, memory::desc> wishes_;  // tensor -> the layout a convolution reads it in
  std::map<size_t, std::pair<dnnl::primitive_desc, size_t>> convs_;  // with the post-ops it takes
  bool blocked_ = false;
  std::string steps_;  // the primitives, for the notes
};

}  // namespace

void prepareGraph(OneDnnRun& run, const te::Program& program, const std::vector<runtime::Buffer>& inputs) {
  Planner plan(program);
  plan.plan();
  Emitter(run, program, inputs, plan).emit();
}

}  // namespace tessel::bench::onednn

#endif
