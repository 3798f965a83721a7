#include "lir/Lir.h"

#include <algorithm>
#include <sstream>

namespace tessel::lir {

namespace {
std::shared_ptr<ExprNode> node(ExprKind k, te::DType t, bool index) {
  auto n = std::make_shared<ExprNode>();
  n->kind = k;
  n->type = t;
  n->index = index;
  return n;
}
std::shared_ptr<StmtNode> stmt(StmtKind k) {
  auto n = std::make_shared<StmtNode>();
  n->kind = k;
  return n;
}
}  // namespace

Expr indexImm(int64_t v) {
  auto n = node(ExprKind::IntImm, te::DType::I32, true);
  n->intValue = v;
  return n;
}
Expr indexVar(const std::string& name) {
  auto n = node(ExprKind::Var, te::DType::I32, true);
  n->name = name;
  return n;
}
Expr indexBinary(te::BinaryOp op, Expr a, Expr b) {
  bool boolean = te::isComparison(op) || te::isLogical(op);
  auto n = node(ExprKind::Binary, boolean ? te::DType::Bool : te::DType::I32, !boolean);
  n->binaryOp = op;
  n->operands = {std::move(a), std::move(b)};
  return n;
}
Expr indexFloorDiv(Expr a, Expr b) {
  auto n = node(ExprKind::FloorDiv, te::DType::I32, true);
  n->operands = {std::move(a), std::move(b)};
  return n;
}
Expr indexSelect(Expr cond, Expr a, Expr b) {
  auto n = node(ExprKind::Select, te::DType::I32, true);
  n->operands = {std::move(cond), std::move(a), std::move(b)};
  return n;
}
Expr indexNeg(Expr a) {
  auto n = node(ExprKind::Unary, te::DType::I32, true);
  n->unaryOp = te::UnaryOp::Neg;
  n->operands = {std::move(a)};
  return n;
}
Expr checkedIndex(Expr x, int64_t extent) {
  auto n = node(ExprKind::CheckedIndex, te::DType::I32, true);
  n->intValue = extent;
  n->operands = {std::move(x)};
  return n;
}
Expr imm(double v, te::DType t) {
  auto n = node(te::isFloat(t) ? ExprKind::FloatImm : ExprKind::IntImm, t, false);
  n->floatValue = v;
  n->intValue = te::isFloat(t) ? 0 : static_cast<int64_t>(v);
  return n;
}
Expr load(const std::string& buffer, te::DType t, Expr index) {
  auto n = node(ExprKind::Load, t, false);
  n->name = buffer;
  n->operands = {std::move(index)};
  return n;
}
Expr unary(te::UnaryOp op, te::DType t, Expr x) {
  auto n = node(ExprKind::Unary, t, false);
  n->unaryOp = op;
  n->operands = {std::move(x)};
  return n;
}
Expr binary(te::BinaryOp op, te::DType t, Expr a, Expr b) {
  auto n = node(ExprKind::Binary, t, false);
  n->binaryOp = op;
  n->operands = {std::move(a), std::move(b)};
  return n;
}
Expr select(te::DType t, Expr c, Expr a, Expr b) {
  auto n = node(ExprKind::Select, t, false);
  n->operands = {std::move(c), std::move(a), std::move(b)};
  return n;
}
Expr cast(te::DType t, Expr x) {
  auto n = node(ExprKind::Cast, t, false);
  n->operands = {std::move(x)};
  return n;
}

Stmt block(std::vector<Stmt> stmts) {
  auto n = stmt(StmtKind::Block);
  n->body = std::move(stmts);
  return n;
}
Stmt forLoop(const std::string& var, Expr init, Expr cond, Expr step, Stmt body, bool parallel,
             VectorHint vector) {
  auto n = stmt(StmtKind::For);
  n->name = var;
  n->init = std::move(init);
  n->cond = std::move(cond);
  n->step = std::move(step);
  n->body = {std::move(body)};
  n->parallel = parallel;
  n->vector = vector;
  return n;
}
Stmt ifThenElse(Expr cond, Stmt thenCase, Stmt elseCase) {
  auto n = stmt(StmtKind::If);
  n->cond = std::move(cond);
  n->thenCase = std::move(thenCase);
  n->elseCase = std::move(elseCase);
  return n;
}
Stmt let(const std::string& name, Expr value) {
  auto n = stmt(StmtKind::Let);
  n->name = name;
  n->value = std::move(value);
  return n;
}
Stmt store(const std::string& buffer, Expr index, Expr value) {
  auto n = stmt(StmtKind::Store);
  n->name = buffer;
  n->index = std::move(index);
  n->value = std::move(value);
  return n;
}

Stmt alloc(const std::string& buffer) {
  auto n = stmt(StmtKind::Alloc);
  n->name = buffer;
  return n;
}

Stmt call(const std::string& function, std::vector<std::string> buffers) {
  auto n = stmt(StmtKind::Call);
  n->name = function;
  n->arguments = std::move(buffers);
  return n;
}

int64_t BufferDecl::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {
void printExpr(std::ostream& os, const Expr& e) {
  switch (e->kind) {
    case ExprKind::IntImm:
      os << e->intValue;
      return;
    case ExprKind::FloatImm:
      os << e->floatValue;
      return;
    case ExprKind::Var:
      os << e->name;
      return;
    case ExprKind::Load:
      os << e->name << "[";
      printExpr(os, e->operands[0]);
      os << "]";
      return;
    case ExprKind::Unary:
      os << te::unaryOpName(e->unaryOp) << "(";
      printExpr(os, e->operands[0]);
      os << ")";
      return;
    case ExprKind::Binary:
      os << "(";
      printExpr(os, e->operands[0]);
      os << " " << te::binaryOpName(e->binaryOp) << " ";
      printExpr(os, e->operands[1]);
      os << ")";
      return;
    case ExprKind::Select:
      os << "(";
      printExpr(os, e->operands[0]);
      os << " ? ";
      printExpr(os, e->operands[1]);
      os << " : ";
      printExpr(os, e->operands[2]);
      os << ")";
      return;
    case ExprKind::Cast:
      os << te::dtypeName(e->type) << "(";
      printExpr(os, e->operands[0]);
      os << ")";
      return;
    case ExprKind::FloorDiv:
      os << "floord(";
      printExpr(os, e->operands[0]);
      os << ", ";
      printExpr(os, e->operands[1]);
      os << ")";
      return;
    case ExprKind::CheckedIndex:
      os << "checked(";
      printExpr(os, e->operands[0]);
      os << ", " << e->intValue << ")";
      return;
  }
}

void printStmt(std::ostream& os, const Stmt& s, int depth) {
  std::string pad(2 * depth, ' ');
  switch (s->kind) {
    case StmtKind::Block:
      for (const auto& c : s->body) printStmt(os, c, depth);
      return;
    case StmtKind::For:
      os << pad << (s->parallel ? "parallel " : "") << (s->collapsible ? "collapsible " : "")
         << (s->unrollJam ? "unroll-jam " : "");
      if (s->transposeLanes > 0) os << "transpose-block<" << s->transposeLanes << "> ";
      if (s->vectorLanes > 0)
        os << "vector<" << s->vectorLanes << (s->vector == VectorHint::Reduction ? ", reduction" : "")
           << (s->accumulatesInRegisters ? ", registers" : "") << "> ";
      os << "for " << s->name << " = ";
      printExpr(os, s->init);
      os << "; ";
      printExpr(os, s->cond);
      os << "; += ";
      printExpr(os, s->step);
      os << "\n";
      printStmt(os, s->body[0], depth + 1);
      return;
    case StmtKind::If:
      os << pad << "if ";
      printExpr(os, s->cond);
      os << "\n";
      printStmt(os, s->thenCase, depth + 1);
      if (s->elseCase) {
        os << pad << "else\n";
        printStmt(os, s->elseCase, depth + 1);
      }
      return;
    case StmtKind::Let:
      os << pad << "let " << s->name << " = ";
      printExpr(os, s->value);
      os << "\n";
      return;
    case StmtKind::Store:
      if (!s->prefetchBuffer.empty()) {
        os << pad << "prefetch " << s->prefetchBuffer << "[";
        printExpr(os, s->prefetchIndex);
        os << "]\n";
      }
      os << pad << (s->streaming ? "stream " : "") << s->name << "[";
      printExpr(os, s->index);
      os << "] = ";
      printExpr(os, s->value);
      os << "\n";
      return;
    case StmtKind::Alloc:
      os << pad << "alloc " << s->name << "\n";
      return;
    case StmtKind::Call:
      os << pad << "call " << s->name << "(";
      for (size_t i = 0; i < s->arguments.size(); ++i) os << (i ? ", " : "") << s->arguments[i];
      os << ")\n";
      return;
  }
}

bool loads(const Expr& e, const std::string& buffer) {
  if (e->kind == ExprKind::Load && e->name == buffer) return true;
  return std::any_of(e->operands.begin(), e->operands.end(), [&](const Expr& o) { return loads(o, buffer); });
}

bool uses(const Stmt& s, const std::string& buffer, bool stores) {
  if (!s) return false;
  if (stores && s->kind == StmtKind::Store && s->name == buffer) return true;
  if (s->kind == StmtKind::Call)
    return std::find(s->arguments.begin(), s->arguments.end(), buffer) != s->arguments.end();
  for (const Expr* e : {&s->init, &s->cond, &s->step, &s->value, &s->index})
    if (*e && loads(*e, buffer)) return true;
  if (uses(s->thenCase, buffer, stores) || uses(s->elseCase, buffer, stores)) return true;
  return std::any_of(s->body.begin(), s->body.end(), [&](const Stmt& c) { return uses(c, buffer, stores); });
}

}  // namespace

bool hasStreamingStore(const Stmt& s) {
  if (!s) return false;
  if (s->kind == StmtKind::Store) return s->streaming;
  return hasStreamingStore(s->thenCase) || hasStreamingStore(s->elseCase) ||
         std::any_of(s->body.begin(), s->body.end(), [](const Stmt& c) { return hasStreamingStore(c); });
}

bool readsBuffer(const Stmt& s, const std::string& buffer) { return uses(s, buffer, false); }
bool usesBuffer(const Stmt& s, const std::string& buffer) { return uses(s, buffer, true); }

std::string toString(const Kernel& k) {
  std::ostringstream os;
  os << "kernel " << k.name << "\n";
  auto decls = [&](const char* what, const std::vector<BufferDecl>& v) {
    for (const auto& b : v) {
      os << "  " << what << " " << te::dtypeName(b.dtype) << " " << b.name << "[" << b.numElements() << "]\n";
    }
  };
  decls("in", k.inputs);
  decls("out", k.outputs);
  decls("temp", k.temporaries);
  decls("local", k.locals);
  for (const auto& p : k.preparedInputs)
    os << "  prepared " << p.buffer.name << "[" << p.buffer.numElements() << "] = " << p.function << "("
       << p.input << "), " << p.layout << "\n";
  printStmt(os, k.body, 1);
  return os.str();
}

}  // namespace tessel::lir
