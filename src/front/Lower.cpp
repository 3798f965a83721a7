#include "front/Lower.h"

#include <limits>
#include <set>

#include "front/Builtins.h"
#include "front/Parser.h"
#include "te/RangeInference.h"

namespace tessel::front {

namespace {

using ast::ExprKind;
using ast::ExprPtr;

[[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) { throw UserError(loc, msg); }

// TC scalar type -> Tessel dtype; widths Tessel has no dtype for are rejected.
te::DType dtypeOf(const std::string& tc, const SourceLoc& loc) {
  static const std::map<std::string, te::DType> kTypes = {
      {"float", te::DType::F32},     {"float32", te::DType::F32}, {"double", te::DType::F64},
      {"float64", te::DType::F64},   {"half", te::DType::F16},    {"float16", te::DType::F16},
      {"bfloat16", te::DType::BF16}, {"int32", te::DType::I32},   {"int8", te::DType::I8},
      {"uint8", te::DType::U8},      {"byte", te::DType::U8},     {"bool", te::DType::Bool},
  };
  auto it = kTypes.find(tc);
  if (it == kTypes.end())
    fail(loc, "unsupported type '" + tc +
                  "': Tessel supports bool, int8, uint8 (byte), int32, half (float16), bfloat16, "
                  "float (float32) and double (float64)");
  return it->second;
}

// `x` as a value of type `t` (constants are converted, not wrapped in a cast).
te::Expr convert(const te::Expr& x, te::DType t) {
  if (x->type == t) return x;
  if (x->kind == te::ExprKind::Const) return te::constant(x->value, t, x->loc);
  return te::cast(t, x, x->loc);
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

class DefLowering {
 public:
  DefLowering(const Module& m, const ast::Def& def, const std::map<std::string, int64_t>& sizes)
      : m_(m), def_(def), given_(sizes), inference_(prog_) {}

  te::Program run() {
    prog_.name = def_.name;
    bindSizes();
    declareTensors();
    for (const auto& st : def_.stmts) lowerStmt(st);
    inference_.finish();
    return std::move(prog_);
  }

 private:
  // ---- signature ----
  void bindSizes() {
    auto names = signatureSizes(def_);
    std::string list;
    for (const auto& [n, loc] : names) list += (list.empty() ? "" : ", ") + n;
    for (const auto& [n, v] : given_) {
      bool found = false;
      for (const auto& [m, loc] : names) found = found || m == n;
      if (!found)
        fail(def_.loc, "unknown size '" + n + "' for def '" + def_.name + "' (" +
                           (list.empty() ? "it has no sizes" : "its sizes are " + list) + ")");
    }
    for (const auto& [n, loc] : names) {
      auto it = given_.find(n);
      if (it == given_.end()) fail(loc, "no value given for size '" + n + "'");
      if (it->second <= 0) fail(loc, "size '" + n + "' must be positive, got " + std::to_string(it->second));
      if (it->second > std::numeric_limits<int32_t>::max())
        fail(loc, "size '" + n + "' = " + std::to_string(it->second) + " does not fit in int32");
      sizes_[n] = it->second;
    }
    prog_.sizes = sizes_;
  }

  void checkNewName(const std::string& n, const SourceLoc& loc) {
    if (sizes_.count(n)) fail(loc, "'" + n + "' is already a size name");
    if (prog_.findTensor(n)) fail(loc, "tensor '" + n + "' is declared twice");
    if (findBuiltin(n) || isUnsupportedTcBuiltin(n))
      fail(loc, "'" + n + "' is a builtin function and cannot name a tensor");
  }

  void declare(const ast::Param& p, te::TensorRole role) {
    checkNewName(p.name, p.loc);
    te::TensorDecl t;
    t.name = p.name;
    t.role = role;
    t.loc = p.loc;
    if (p.type) {
      t.dtype = dtypeOf(p.type->scalar, p.type->loc);
      for (const auto& d : p.type->dims) {
        int64_t v = d.name.empty() ? d.value : sizes_.at(d.name);
        if (v <= 0) fail(d.loc, "dimension sizes must be positive, got " + std::to_string(v));
        t.shape.push_back(v);
      }
      t.shapeKnown = true;
      typed_.insert(p.name);
    }
    prog_.tensors.push_back(std::move(t));
  }

  void declareTensors() {
    for (const auto& p : def_.params) declare(p, te::TensorRole::Input);
    for (const auto& r : def_.returns) {
      const te::TensorDecl* t = prog_.findTensor(r.name);
      if (t && t->role == te::TensorRole::Input)
        fail(r.loc, "'" + r.name + "' is both an input and an output; inputs are immutable");
      declare(r, te::TensorRole::Output);
    }
    // Tessel extension: a tensor written in the body but not returned is a temporary.
    for (const auto& st : def_.stmts) {
      if (prog_.findTensor(st.tensor)) continue;
      if (sizes_.count(st.tensor)) fail(st.loc, "'" + st.tensor + "' is a size, not a tensor");
      declare(ast::Param{st.tensor, st.loc, std::nullopt}, te::TensorRole::Temporary);
    }
  }

  // ---- statements ----
  void lowerStmt(const ast::Stmt& st) {
    te::Stage s;
    s.output = st.tensor;
    s.loc = st.loc;
    lhs_.clear();
    lets_.clear();
    for (const auto& idx : st.indices) {
      if (idx->kind != ExprKind::Ident)
        fail(idx->loc, "indices on the left-hand side must be plain index names, not expressions");
      checkIndexName(idx->name, idx->loc);
      if (lhs_.count(idx->name))
        fail(idx->loc,
             "index '" + idx->name + "' appears twice on the left-hand side of '" + st.tensor + "'");
      lhs_.insert(idx->name);
      s.indices.push_back(idx->name);
    }
    for (const auto& w : st.where) {
      if (w.kind != ast::WhereClause::Kind::Let) continue;
      checkIndexName(w.var, w.loc);
      if (lhs_.count(w.var) || lets_.count(w.var))
        fail(w.loc, "'" + w.var + "' is already defined in this statement");
      lets_[w.var] = &w;
    }
    for (const auto& w : st.where) {
      if (w.kind != ast::WhereClause::Kind::Range) continue;
      checkIndexName(w.var, w.loc);
      if (lets_.count(w.var)) fail(w.loc, "'" + w.var + "' is a where-bound value, not an index");
      if (s.whereRanges.count(w.var))
        fail(w.loc, "index '" + w.var + "' has two where ranges (TC ranges are rectangular: give one lo:hi)");
      te::Range r{evalSize(w.lo), evalSize(w.hi)};
      constexpr int64_t kMin = std::numeric_limits<int32_t>::min(),
                        kMax = std::numeric_limits<int32_t>::max();
      if (r.lo < kMin || r.hi > kMax) fail(w.loc, "the range of index '" + w.var + "' does not fit in int32");
      if (r.hi <= r.lo)
        fail(w.loc, "the range " + std::to_string(r.lo) + ":" + std::to_string(r.hi) + " of index '" + w.var +
                        "' is empty");
      s.whereRanges[w.var] = r;
    }
    for (const auto& w : st.where) {
      if (w.kind != ast::WhereClause::Kind::Exists) continue;
      te::Expr read = lowerExpr(w.value);
      if (read->kind != te::ExprKind::Access || read->operands.empty())
        fail(w.value->loc, "'where exists' takes one tensor read, such as 'where exists A(i)'");
      s.existsReads.push_back(read);
    }
    te::Expr rhs = lowerExpr(st.rhs);
    te::TensorDecl* out = prog_.findTensor(st.tensor);
    if (out->role != te::TensorRole::Input) {  // writing an input is reported by range inference
      if (typed_.count(st.tensor)) {
        if (te::promote(rhs->type, out->dtype) != out->dtype)
          fail(st.opLoc, std::string("cannot assign a ") + te::dtypeName(rhs->type) + " value to '" +
                             st.tensor + "' of type " + te::dtypeName(out->dtype) +
                             " without an explicit cast");
        rhs = convert(rhs, out->dtype);
      } else {
        out->dtype = rhs->type;  // TC: an untyped output takes the type of its first definition
        typed_.insert(st.tensor);
      }
    }
    s.rhs = rhs;
    s.init = st.init;
    switch (st.op) {
      case ast::AssignOp::Assign:
        s.reduction = te::Reduction::None;
        break;
      case ast::AssignOp::Sum:
        s.reduction = te::Reduction::Sum;
        break;
      case ast::AssignOp::Prod:
        s.reduction = te::Reduction::Prod;
        break;
      case ast::AssignOp::Min:
        s.reduction = te::Reduction::Min;
        break;
      case ast::AssignOp::Max:
        s.reduction = te::Reduction::Max;
        break;
    }
    prog_.stages.push_back(std::move(s));
    inference_.inferStage(prog_.stages.size() - 1);
  }

  void checkIndexName(const std::string& n, const SourceLoc& loc) {
    if (sizes_.count(n)) fail(loc, "'" + n + "' is a size and cannot be used as an index");
    if (prog_.findTensor(n)) fail(loc, "'" + n + "' is a tensor and cannot be used as an index");
  }

  // ---- expressions ----
  te::Expr lowerExpr(const ExprPtr& e) {
    switch (e->kind) {
      case ExprKind::Int:
        return te::constant(static_cast<double>(e->intValue), te::DType::I32, e->loc);
      case ExprKind::Float:
        return te::constant(e->floatValue, te::DType::F32, e->loc);
      case ExprKind::Ident:
        return lowerName(e);
      case ExprKind::Apply:
        return lowerApply(e);
      case ExprKind::Dim:
        return te::constant(static_cast<double>(dimSize(e)), te::DType::I32, e->loc);
      case ExprKind::Unary: {
        te::Expr x = lowerExpr(e->args[0]);
        if (e->op == "!") return te::unary(te::UnaryOp::Not, requireBool(x, e, "the operand of '!'"), e->loc);
        if (x->kind == te::ExprKind::Const) return te::constant(-x->value, x->type, e->loc);
        return te::unary(te::UnaryOp::Neg, x, e->loc);
      }
      case ExprKind::Binary:
        return lowerBinary(e);
      case ExprKind::Ternary: {
        te::Expr c = requireBool(lowerExpr(e->args[0]), e, "the condition of '?:'");
        return te::select(c, lowerExpr(e->args[1]), lowerExpr(e->args[2]), e->loc);
      }
      case ExprKind::MinMax:
        return te::binary(e->op == "min" ? te::BinaryOp::Min : te::BinaryOp::Max, lowerExpr(e->args[0]),
                          lowerExpr(e->args[1]), e->loc);
      case ExprKind::Cast:
        return te::cast(dtypeOf(e->name, e->loc), lowerExpr(e->args[0]), e->loc);
    }
    TESSEL_CHECK(false, "front", "unknown expression kind");
  }

  te::Expr requireBool(te::Expr x, const ExprPtr& at, const std::string& what) {
    if (x->type != te::DType::Bool)
      fail(at->loc, what + " must be a boolean (e.g. a comparison), not " + te::dtypeName(x->type));
    return x;
  }

  te::Expr lowerBinary(const ExprPtr& e) {
    static const std::map<std::string, te::BinaryOp> kOps = {
        {"+", te::BinaryOp::Add}, {"-", te::BinaryOp::Sub}, {"*", te::BinaryOp::Mul},
        {"/", te::BinaryOp::Div}, {"%", te::BinaryOp::Mod}, {"<", te::BinaryOp::Lt},
        {"<=", te::BinaryOp::Le}, {">", te::BinaryOp::Gt},  {">=", te::BinaryOp::Ge},
        {"==", te::BinaryOp::Eq}, {"!=", te::BinaryOp::Ne}, {"&&", te::BinaryOp::And},
        {"||", te::BinaryOp::Or},
    };
    te::BinaryOp op = kOps.at(e->op);
    te::Expr a = lowerExpr(e->args[0]), b = lowerExpr(e->args[1]);
    if (te::isLogical(op)) {
      requireBool(a, e, "each operand of '" + e->op + "'");
      requireBool(b, e, "each operand of '" + e->op + "'");
    }
    if (op == te::BinaryOp::Mod && (te::isFloat(a->type) || te::isFloat(b->type)))
      fail(e->loc, "'%' needs integer operands; the operands here are " +
                       std::string(te::dtypeName(a->type)) + " and " + te::dtypeName(b->type));
    return te::binary(op, a, b, e->loc);
  }

  te::Expr lowerName(const ExprPtr& e) {
    const std::string& n = e->name;
    if (auto it = lets_.find(n); it != lets_.end()) {
      if (expanding_.count(n)) fail(e->loc, "where-bound value '" + n + "' refers to itself");
      expanding_.insert(n);
      te::Expr v = lowerExpr(it->second->value);
      expanding_.erase(n);
      return v;
    }
    if (const te::TensorDecl* t = prog_.findTensor(n)) {
      if (t->shapeKnown && !t->shape.empty())
        fail(e->loc,
             "'" + n + "' has " + std::to_string(t->shape.size()) + " dimensions; read it with indices");
      return te::access(n, readType(n, e->loc), {}, e->loc);
    }
    if (auto it = sizes_.find(n); it != sizes_.end())
      return te::constant(static_cast<double>(it->second), te::DType::I32, e->loc);
    if (findBuiltin(n) || isUnsupportedTcBuiltin(n))
      fail(e->loc, "'" + n + "' is a builtin function; call it as " + n + "(...)");
    return te::var(n, e->loc);
  }

  te::DType readType(const std::string& n, const SourceLoc& loc) {
    if (!typed_.count(n)) fail(loc, "'" + n + "' is read before any statement writes it");
    return prog_.findTensor(n)->dtype;
  }

  te::Expr lowerApply(const ExprPtr& e) {
    const std::string& n = e->name;
    if (const te::TensorDecl* t = prog_.findTensor(n)) {
      if (t->shapeKnown && t->shape.size() != e->args.size())
        fail(e->loc, "'" + n + "' has " + std::to_string(t->shape.size()) + " dimensions but is read with " +
                         std::to_string(e->args.size()) + " indices");
      te::DType type = readType(n, e->loc);
      std::vector<te::Expr> idx;
      for (const auto& a : e->args) idx.push_back(lowerExpr(a));
      return te::access(n, type, std::move(idx), e->loc);
    }
    if (const Builtin* b = findBuiltin(n)) return lowerBuiltin(*b, e);
    if (isUnsupportedTcBuiltin(n))
      fail(e->loc, "unsupported builtin '" + n + "': Tessel implements " + supportedBuiltins() +
                       " (and their 'f' forms, e.g. expf)");
    if (m_.find(n))
      fail(e->loc, "unsupported: calling a def ('" + n + "'); Tessel compiles each def on its own");
    if (sizes_.count(n)) fail(e->loc, "'" + n + "' is a size, not a tensor");
    if (lets_.count(n)) fail(e->loc, "'" + n + "' is a where-bound value, not a tensor");
    fail(e->loc, "unknown tensor or function '" + n + "'");
  }

  // TC builtins are floating-point functions: integer arguments become f32.
  te::Expr lowerBuiltin(const Builtin& b, const ExprPtr& e) {
    if (static_cast<int>(e->args.size()) != b.arity)
      fail(e->loc, "'" + e->name + "' takes " + std::to_string(b.arity) + " argument" +
                       (b.arity > 1 ? "s" : "") + " but is given " + std::to_string(e->args.size()));
    std::vector<te::Expr> args;
    for (const auto& a : e->args) args.push_back(lowerExpr(a));
    te::DType common = args[0]->type;
    for (const auto& a : args) common = te::promote(common, a->type);
    if (!te::isFloat(common))
      for (auto& a : args) a = convert(a, te::DType::F32);
    switch (b.kind) {
      case Builtin::Kind::Unary:
        return te::unary(b.unaryOp, args[0], e->loc);
      case Builtin::Kind::Binary:
        return te::binary(b.binaryOp, args[0], args[1], e->loc);
      case Builtin::Kind::Fma:
        return te::binary(te::BinaryOp::Add, te::binary(te::BinaryOp::Mul, args[0], args[1], e->loc), args[2],
                          e->loc);
    }
    TESSEL_CHECK(false, "front", "unknown builtin kind");
  }

  int64_t dimSize(const ExprPtr& e) {
    const te::TensorDecl* t = prog_.findTensor(e->name);
    if (!t)
      fail(e->loc, "'" + e->name + "' in '" + e->name + "." + std::to_string(e->dim) + "' is not a tensor");
    if (!t->shapeKnown)
      fail(e->loc, "the shape of '" + e->name + "' is not known here: no earlier statement defines it");
    if (e->dim < 0 || e->dim >= static_cast<int>(t->shape.size()))
      fail(e->loc, "'" + e->name + "' has " + std::to_string(t->shape.size()) + " dimensions, so '" +
                       e->name + "." + std::to_string(e->dim) + "' does not exist");
    return t->shape[e->dim];
  }

  // Range bounds are size expressions: integers, sizes, T.d, + - * / % min max.
  int64_t evalSize(const ExprPtr& e) {
    const std::string kWhat = "range bounds must be size expressions (integers, sizes, T.d)";
    switch (e->kind) {
      case ExprKind::Int:
        return e->intValue;
      case ExprKind::Dim:
        return dimSize(e);
      case ExprKind::Ident:
        if (auto it = sizes_.find(e->name); it != sizes_.end()) return it->second;
        fail(e->loc, kWhat + ", but '" + e->name + "' is not a size");
      case ExprKind::Unary:
        if (e->op == "-") {
          int64_t r = 0;
          if (__builtin_sub_overflow(int64_t{0}, evalSize(e->args[0]), &r))
            fail(e->loc, "overflow in a range bound");
          return r;
        }
        break;
      case ExprKind::MinMax: {
        int64_t a = evalSize(e->args[0]), b = evalSize(e->args[1]);
        return e->op == "min" ? std::min(a, b) : std::max(a, b);
      }
      case ExprKind::Binary: {
        int64_t a = evalSize(e->args[0]), b = evalSize(e->args[1]);
        int64_t r = 0;
        bool overflow = (e->op == "+" && __builtin_add_overflow(a, b, &r)) ||
                        (e->op == "-" && __builtin_sub_overflow(a, b, &r)) ||
                        (e->op == "*" && __builtin_mul_overflow(a, b, &r));
        overflow |= (e->op == "/" || e->op == "%") && a == std::numeric_limits<int64_t>::min() && b == -1;
        if (overflow) fail(e->loc, "overflow in a range bound");
        if (e->op == "+" || e->op == "-" || e->op == "*") return r;
        if ((e->op == "/" || e->op == "%") && b == 0) fail(e->loc, "division by zero in a range bound");
        if (e->op == "/") return floorDiv(a, b);  // TC/Halide: rounds toward negative infinity
        if (e->op == "%") return a - b * floorDiv(a, b);
        break;
      }
      case ExprKind::Float:
        fail(e->loc, kWhat + "; found a floating-point number");
      default:
        break;
    }
    fail(e->loc, kWhat + "; this operation is not allowed in one");
  }

  const Module& m_;
  const ast::Def& def_;
  const std::map<std::string, int64_t>& given_;
  te::Program prog_;
  te::RangeInference inference_;
  std::map<std::string, int64_t> sizes_;
  std::set<std::string> typed_;  // tensors whose dtype is fixed (declared or defined so far)
  // per statement
  std::set<std::string> lhs_;
  std::map<std::string, const ast::WhereClause*> lets_;
  std::set<std::string> expanding_;
};

}  // namespace

std::vector<std::pair<std::string, SourceLoc>> signatureSizes(const ast::Def& def) {
  std::vector<std::pair<std::string, SourceLoc>> out;
  auto add = [&](const ast::Param& p) {
    if (!p.type) return;
    for (const auto& d : p.type->dims) {
      if (d.name.empty()) continue;
      bool seen = false;
      for (const auto& [n, loc] : out) seen = seen || n == d.name;
      if (!seen) out.emplace_back(d.name, d.loc);
    }
  };
  for (const auto& p : def.params) add(p);
  for (const auto& r : def.returns) add(r);
  return out;
}

te::Program lowerDef(const Module& m, const ast::Def& def, const std::map<std::string, int64_t>& sizes) {
  return DefLowering(m, def, sizes).run();
}

}  // namespace tessel::front
