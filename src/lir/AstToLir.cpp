#include "lir/AstToLir.h"

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/schedule_node.h>

#include <cstdint>
#include <string>

#include "lir/LowerStatement.h"
#include "schedule/MarkParallel.h"
#include "target/cpu/MarkUnrollJam.h"
#include "target/cpu/MarkVectorLoops.h"

namespace tessel::lir {

namespace {

// The loop a mark applies to is the one isl generates for the band right
// under it; isl names it c<d>, d the band's schedule depth. isl drops a loop
// of one iteration, and its mark would then fall on the next loop inside (a
// "parallel" mark on a reduction loop: a race), so such marks are dropped.
// Before the AST is built, every mark's id is replaced by one with the same
// name that carries d + 1 as its user pointer (ids are unique per name and
// pointer, so they print as before).
isl::schedule marksWithDepths(const isl::schedule& schedule) {
  auto visit = [](isl::schedule_node node) -> isl::schedule_node {
    if (!node.isa<isl::schedule_node_mark>()) return node;
    isl_id* id = isl_schedule_node_mark_get_id(node.get());
    std::string name = isl_id_get_name(id);
    isl_id_free(id);
    intptr_t depth = isl_schedule_node_get_schedule_depth(node.get());
    isl_id* tagged = isl_id_alloc(node.ctx().get(), name.c_str(), reinterpret_cast<void*>(depth + 1));
    node = isl::manage(isl_schedule_node_delete(node.release()));
    return isl::manage(isl_schedule_node_insert_mark(node.release(), tagged));
  };
  return schedule.root().map_descendant_bottom_up(visit).schedule();
}

isl_ast_node* dropMarksOfRemovedLoops(isl_ast_node* mark, isl_ast_build*, void*) {
  isl_id* id = isl_ast_node_mark_get_id(mark);
  intptr_t depth = reinterpret_cast<intptr_t>(isl_id_get_user(id)) - 1;
  isl_id_free(id);
  if (depth < 0) return mark;
  isl_ast_node* child = isl_ast_node_mark_get_node(mark);
  isl_ast_node* under = isl_ast_node_copy(child);
  while (under && isl_ast_node_get_type(under) == isl_ast_node_mark) {
    isl_ast_node* next = isl_ast_node_mark_get_node(under);
    isl_ast_node_free(under);
    under = next;
  }
  bool loopHere = false;
  if (under && isl_ast_node_get_type(under) == isl_ast_node_for) {
    isl_ast_expr* iterator = isl_ast_node_for_get_iterator(under);
    isl_id* name = isl_ast_expr_get_id(iterator);
    loopHere = name && std::string(isl_id_get_name(name)) == "c" + std::to_string(depth);
    isl_id_free(name);
    isl_ast_expr_free(iterator);
  }
  isl_ast_node_free(under);
  if (loopHere) {
    isl_ast_node_free(child);
    return mark;
  }
  isl_ast_node_free(mark);
  return child;
}

}  // namespace

isl::ast_node buildAst(const isl::schedule& schedule) {
  isl::ctx ctx = schedule.ctx();
  isl::ast_build build = isl::ast_build::from_context(isl::set(ctx, "{ : }"));
  build = isl::manage(isl_ast_build_set_after_each_mark(build.release(), dropMarksOfRemovedLoops, nullptr));
  return build.node_from(marksWithDepths(schedule));
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
