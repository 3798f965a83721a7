#include "lir/AstToLir.h"

#include "lir/LowerStatement.h"
#include "schedule/MarkParallel.h"
#include "target/cpu/MarkUnrollJam.h"
#include "target/cpu/MarkVectorLoops.h"

namespace tessel::lir {

isl::ast_node buildAst(const isl::schedule& schedule) {
  isl::ctx ctx = schedule.ctx();
  isl::ast_build build = isl::ast_build::from_context(isl::set(ctx, "{ : }"));
  return build.node_from(schedule);
}

namespace {

// What the marks above a loop say about it.
struct LoopMarks {
  bool parallel = false;
  VectorHint vector = VectorHint::None;
  bool unrollJam = false;
};

class AstTranslator {
 public:
  explicit AstTranslator(const poly::Scop& s) : scop_(s) {}

  bool checksIndices = false;

  // Marks apply to the loop right under them.
  Stmt node(const isl::ast_node& n, LoopMarks marks = LoopMarks()) {
    if (n.isa<isl::ast_node_for>()) {
      auto f = n.as<isl::ast_node_for>();
      std::string var = f.iterator().as<isl::ast_expr_id>().id().name();
      Stmt loop = forLoop(var, expr(f.init()), expr(f.cond()), expr(f.inc()), node(f.body()), marks.parallel,
                          marks.vector);
      if (!marks.unrollJam) return loop;
      auto copy = std::make_shared<StmtNode>(*loop);
      copy->unrollJam = true;
      return copy;
    }
    if (n.isa<isl::ast_node_if>()) {
      auto i = n.as<isl::ast_node_if>();
      return ifThenElse(expr(i.cond()), node(i.then_node()),
                        i.has_else_node() ? node(i.else_node()) : nullptr);
    }
    if (n.isa<isl::ast_node_block>()) {
      auto list = n.as<isl::ast_node_block>().children();
      std::vector<Stmt> stmts;
      for (unsigned k = 0; k < list.size(); ++k) stmts.push_back(node(list.at(static_cast<int>(k))));
      return block(std::move(stmts));
    }
    if (n.isa<isl::ast_node_mark>()) {
      auto m = n.as<isl::ast_node_mark>();
      // A mark over a loop that the AST generator removed (one iteration)
      // simply has nothing to parallelize or vectorize.
      std::string name = m.id().name();
      if (name == target::cpu::kVectorMark) marks.vector = VectorHint::Independent;
      if (name == target::cpu::kVectorReductionMark) marks.vector = VectorHint::Reduction;
      if (name == target::cpu::kUnrollJamMark) marks.unrollJam = true;
      if (name == schedule::kParallelMark) marks.parallel = true;
      return node(m.node(), marks);
    }
    if (n.isa<isl::ast_node_user>()) return user(n.as<isl::ast_node_user>().expr().as<isl::ast_expr_op>());
    throw InternalError("ast-to-lir", "unexpected AST node");
  }

 private:
  Stmt user(const isl::ast_expr_op& call) {
    TESSEL_CHECK(call.isa<isl::ast_expr_op_call>(), "ast-to-lir", "user node is not a call");
    std::string name = call.arg(0).as<isl::ast_expr_id>().id().name();
    const poly::Statement& s = scop_.statement(name);
    std::vector<Expr> values;
    for (unsigned k = 1; k < call.n_arg(); ++k) values.push_back(expr(call.arg(static_cast<int>(k))));
    return lowerStatementInstance(scop_, s, values, checksIndices);
  }

  Expr expr(const isl::ast_expr& e) {
    if (e.isa<isl::ast_expr_id>()) return indexVar(e.as<isl::ast_expr_id>().id().name());
    if (e.isa<isl::ast_expr_int>()) return indexImm(e.as<isl::ast_expr_int>().val().num_si());
    auto op = e.as<isl::ast_expr_op>();
    auto a = [&](int k) { return expr(op.arg(k)); };
    using B = te::BinaryOp;
    if (op.isa<isl::ast_expr_op_add>()) return indexBinary(B::Add, a(0), a(1));
    if (op.isa<isl::ast_expr_op_sub>()) return indexBinary(B::Sub, a(0), a(1));
    if (op.isa<isl::ast_expr_op_mul>()) return indexBinary(B::Mul, a(0), a(1));
    if (op.isa<isl::ast_expr_op_minus>()) return indexNeg(a(0));
    // pdiv_q: exact or non-negative division; pdiv_r/zdiv_r: remainders that
    // isl only uses with a non-negative dividend or a test against zero, where
    // C's truncating operators agree with the mathematical ones.
    if (op.isa<isl::ast_expr_op_pdiv_q>() || op.isa<isl::ast_expr_op_div>())
      return indexBinary(B::Div, a(0), a(1));
    if (op.isa<isl::ast_expr_op_pdiv_r>() || op.isa<isl::ast_expr_op_zdiv_r>())
      return indexBinary(B::Mod, a(0), a(1));
    if (op.isa<isl::ast_expr_op_fdiv_q>()) return indexFloorDiv(a(0), a(1));
    if (op.isa<isl::ast_expr_op_min>() || op.isa<isl::ast_expr_op_max>()) {
      B b = op.isa<isl::ast_expr_op_min>() ? B::Min : B::Max;
      Expr r = a(0);
      for (unsigned k = 1; k < op.n_arg(); ++k) r = indexBinary(b, r, a(static_cast<int>(k)));
      return r;
    }
    if (op.isa<isl::ast_expr_op_and>() || op.isa<isl::ast_expr_op_and_then>())
      return indexBinary(B::And, a(0), a(1));
    if (op.isa<isl::ast_expr_op_or>() || op.isa<isl::ast_expr_op_or_else>())
      return indexBinary(B::Or, a(0), a(1));
    if (op.isa<isl::ast_expr_op_eq>()) return indexBinary(B::Eq, a(0), a(1));
    if (op.isa<isl::ast_expr_op_le>()) return indexBinary(B::Le, a(0), a(1));
    if (op.isa<isl::ast_expr_op_lt>()) return indexBinary(B::Lt, a(0), a(1));
    if (op.isa<isl::ast_expr_op_ge>()) return indexBinary(B::Ge, a(0), a(1));
    if (op.isa<isl::ast_expr_op_gt>()) return indexBinary(B::Gt, a(0), a(1));
    if (op.isa<isl::ast_expr_op_cond>() || op.isa<isl::ast_expr_op_select>())
      return indexSelect(a(0), a(1), a(2));
    throw InternalError("ast-to-lir", "unsupported isl AST expression");
  }

  const poly::Scop& scop_;
};

std::vector<BufferDecl> decls(const std::vector<const te::TensorDecl*>& ts) {
  std::vector<BufferDecl> out;
  for (const auto* t : ts) out.push_back({t->name, t->dtype, t->shape});
  return out;
}

}  // namespace

Kernel astToLir(const te::Program& program, const poly::Scop& scop, const isl::ast_node& ast) {
  AstTranslator t(scop);
  Kernel k;
  k.name = program.name;
  k.inputs = decls(program.inputs());
  k.outputs = decls(program.outputs());
  k.temporaries = decls(program.temporaries());
  k.body = t.node(ast);
  k.checksIndices = t.checksIndices;
  return k;
}

}  // namespace tessel::lir
