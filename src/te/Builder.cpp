#include "tessel/builder.h"

#include <cctype>

namespace tessel::te::builder {

namespace {
SourceLoc toLoc(const CallSite& l) {
  return SourceLoc{l.file_name(), static_cast<int>(l.line()), static_cast<int>(l.column())};
}

Value un(UnaryOp op, const Value& x) { return te::unary(op, x.expr()); }
Value bin(BinaryOp op, const Value& a, const Value& b) { return te::binary(op, a.expr(), b.expr()); }
}  // namespace

Value::Value(Expr e) : e_(std::move(e)) {
  if (e_ == nullptr) userError("empty expression given to the program builder");
}

IndexVar::IndexVar(const std::string& name) : Value(te::var(name)), name_(name) {}

Value Tensor::at(const std::vector<Value>& indices) const {
  if (rank_ >= 0 && static_cast<int>(indices.size()) != rank_)
    userError("tensor '" + name_ + "' has rank " + std::to_string(rank_) + " but is indexed with " +
              std::to_string(indices.size()) + " indices");
  std::vector<Expr> idx;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (isFloat(indices[i].type()))
      userError("index " + std::to_string(i) + " of tensor '" + name_ + "' is " +
                toString(indices[i].expr()) + ", of type " + dtypeName(indices[i].type()) +
                "; indices must be integers");
    idx.push_back(indices[i].expr());
  }
  return te::access(name_, dtype_, std::move(idx));
}

StageRef& StageRef::where(const IndexVar& v, int64_t lo, int64_t hi) {
  Stage& s = builder_->program_.stages[stage_];
  if (lo > hi)
    userError(s.loc,
              "empty range " + std::to_string(lo) + ":" + std::to_string(hi) + " for '" + v.name() + "'");
  if (!s.whereRanges.emplace(v.name(), Range{lo, hi}).second)
    userError(s.loc, "'" + v.name() + "' is constrained twice in the definition of '" + s.output + "'");
  return *this;
}

namespace {
// Names travel into isl text and C code: only C identifiers are accepted.
void requireIdentifier(const std::string& name, const char* what) {
  bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok)
    userError(std::string(what) + " name '" + name + "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
}
}  // namespace

ProgramBuilder::ProgramBuilder(std::string name) {
  requireIdentifier(name, "program");
  program_.name = std::move(name);
}

Tensor ProgramBuilder::declare(const std::string& name, DType dtype, TensorRole role,
                               const std::vector<int64_t>* shape) {
  requireIdentifier(name, "tensor");
  if (program_.findTensor(name)) userError("tensor '" + name + "' is declared twice");
  TensorDecl d;
  d.name = name;
  d.dtype = dtype;
  d.role = role;
  if (shape) {
    for (int64_t n : *shape)
      if (n < 0) userError("tensor '" + name + "' has a negative size");
    d.shape = *shape;
    d.shapeKnown = true;
  }
  program_.tensors.push_back(d);
  return Tensor(name, dtype, shape ? static_cast<int>(shape->size()) : -1);
}

Tensor ProgramBuilder::input(const std::string& name, DType dtype, std::vector<int64_t> shape) {
  return declare(name, dtype, TensorRole::Input, &shape);
}
Tensor ProgramBuilder::output(const std::string& name, DType dtype) {
  return declare(name, dtype, TensorRole::Output, nullptr);
}
Tensor ProgramBuilder::output(const std::string& name, DType dtype, std::vector<int64_t> shape) {
  return declare(name, dtype, TensorRole::Output, &shape);
}
Tensor ProgramBuilder::temporary(const std::string& name, DType dtype) {
  return declare(name, dtype, TensorRole::Temporary, nullptr);
}
Tensor ProgramBuilder::temporary(const std::string& name, DType dtype, std::vector<int64_t> shape) {
  return declare(name, dtype, TensorRole::Temporary, &shape);
}

IndexVar ProgramBuilder::index(const std::string& name) {
  requireIdentifier(name, "index variable");
  if (program_.findTensor(name)) userError("index variable '" + name + "' has the name of a tensor");
  return IndexVar(name);
}

ProgramBuilder& ProgramBuilder::size(const std::string& name, int64_t value) {
  program_.sizes[name] = value;
  return *this;
}

int ProgramBuilder::rankOf(const std::string& tensor) const {
  const TensorDecl* d = program_.findTensor(tensor);
  if (d && d->shapeKnown) return static_cast<int>(d->shape.size());
  auto it = definedRanks_.find(tensor);
  return it == definedRanks_.end() ? -1 : it->second;
}

// Reads must name tensors of this builder, with the rank they are known to have.
void ProgramBuilder::checkReads(const Expr& e, const SourceLoc& loc) const {
  if (e->kind == ExprKind::Access) {
    if (!program_.findTensor(e->name))
      userError(loc, "tensor '" + e->name + "' is not declared in program '" + program_.name + "'");
    int rank = rankOf(e->name);
    if (rank >= 0 && rank != static_cast<int>(e->operands.size()))
      userError(loc, "tensor '" + e->name + "' has rank " + std::to_string(rank) + " but is read as " +
                         toString(e));
  }
  for (const auto& o : e->operands) checkReads(o, loc);
}

StageRef ProgramBuilder::define(const Value& lhs, const Value& rhs, CallSite loc) {
  return define(lhs, Reduction::None, false, rhs, loc);
}

StageRef ProgramBuilder::define(const Value& lhs, Reduction reduction, bool init, const Value& rhs,
                                CallSite where) {
  SourceLoc loc = toLoc(where);
  const Expr& l = lhs.expr();
  if (l->kind != ExprKind::Access)
    userError(loc, "the left-hand side " + toString(l) + " is not a tensor indexed by index variables");
  const TensorDecl* d = program_.findTensor(l->name);
  if (!d) userError(loc, "tensor '" + l->name + "' is not declared in program '" + program_.name + "'");
  if (d->role == TensorRole::Input) userError(loc, "input '" + l->name + "' cannot be defined");
  if (reduction == Reduction::None && init) userError(loc, "'=' takes no '!' (init is only for reductions)");
  Stage s;
  s.output = l->name;
  for (const auto& i : l->operands) {
    if (i->kind != ExprKind::Var)
      userError(loc, "the left-hand side " + toString(l) + " must be indexed by index variables only");
    s.indices.push_back(i->name);
  }
  checkReads(l, loc);
  checkReads(rhs.expr(), loc);
  definedRanks_.emplace(l->name, static_cast<int>(s.indices.size()));
  s.reduction = reduction;
  s.init = init;
  s.rhs = rhs.expr();
  s.loc = loc;
  program_.stages.push_back(std::move(s));
  return StageRef(this, program_.stages.size() - 1);
}

Program ProgramBuilder::build() const {
  Program p = program_;
  inferRangesAndCheck(p);
  return p;
}

Value literal(double v, DType dtype) {
  if (!isFloat(dtype) && roundToDType(v, dtype) != v)
    userError("constant " + std::to_string(v) + " does not fit in " + dtypeName(dtype));
  return te::constant(v, dtype);
}
std::string toString(const Value& v) { return te::toString(v.expr()); }

Value operator+(const Value& a, const Value& b) { return bin(BinaryOp::Add, a, b); }
Value operator-(const Value& a, const Value& b) { return bin(BinaryOp::Sub, a, b); }
Value operator*(const Value& a, const Value& b) { return bin(BinaryOp::Mul, a, b); }
Value operator/(const Value& a, const Value& b) { return bin(BinaryOp::Div, a, b); }
Value operator%(const Value& a, const Value& b) { return bin(BinaryOp::Mod, a, b); }
Value operator<(const Value& a, const Value& b) { return bin(BinaryOp::Lt, a, b); }
Value operator<=(const Value& a, const Value& b) { return bin(BinaryOp::Le, a, b); }
Value operator>(const Value& a, const Value& b) { return bin(BinaryOp::Gt, a, b); }
Value operator>=(const Value& a, const Value& b) { return bin(BinaryOp::Ge, a, b); }
Value operator==(const Value& a, const Value& b) { return bin(BinaryOp::Eq, a, b); }
Value operator!=(const Value& a, const Value& b) { return bin(BinaryOp::Ne, a, b); }
Value operator&&(const Value& a, const Value& b) { return bin(BinaryOp::And, a, b); }
Value operator||(const Value& a, const Value& b) { return bin(BinaryOp::Or, a, b); }
Value operator!(const Value& a) { return un(UnaryOp::Not, a); }
Value operator-(const Value& a) { return un(UnaryOp::Neg, a); }

Value exp(const Value& x) { return un(UnaryOp::Exp, x); }
Value log(const Value& x) { return un(UnaryOp::Log, x); }
Value sqrt(const Value& x) { return un(UnaryOp::Sqrt, x); }
Value rsqrt(const Value& x) { return un(UnaryOp::Rsqrt, x); }
Value tanh(const Value& x) { return un(UnaryOp::Tanh, x); }
Value sigmoid(const Value& x) { return un(UnaryOp::Sigmoid, x); }
Value erf(const Value& x) { return un(UnaryOp::Erf, x); }
Value abs(const Value& x) { return un(UnaryOp::Abs, x); }
Value floor(const Value& x) { return un(UnaryOp::Floor, x); }
Value ceil(const Value& x) { return un(UnaryOp::Ceil, x); }
Value min(const Value& a, const Value& b) { return bin(BinaryOp::Min, a, b); }
Value max(const Value& a, const Value& b) { return bin(BinaryOp::Max, a, b); }
Value pow(const Value& a, const Value& b) { return bin(BinaryOp::Pow, a, b); }
Value sin(const Value& x) { return un(UnaryOp::Sin, x); }
Value cos(const Value& x) { return un(UnaryOp::Cos, x); }
Value apply(UnaryOp op, const Value& x) { return un(op, x); }
Value apply(BinaryOp op, const Value& a, const Value& b) { return bin(op, a, b); }
Value select(const Value& cond, const Value& a, const Value& b) {
  return te::select(cond.expr(), a.expr(), b.expr());
}
Value cast(DType dtype, const Value& x) { return te::cast(dtype, x.expr()); }

}  // namespace tessel::te::builder
