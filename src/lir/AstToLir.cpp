#include "lir/AstToLir.h"

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/map.h>
#include <isl/schedule_node.h>

#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lir/LowerStatement.h"
#include "schedule/Marks.h"

namespace tessel::lir {

namespace {

// The loop a mark applies to is the one isl generates for the band right
// under it; isl names it c<d>, d the band's schedule depth. isl drops a loop
// of one iteration, and its mark would then fall on the next loop inside (a
// "parallel" mark on a reduction loop: a race): a mark with no piece of its
// loop left is dropped, and the translation applies a mark only to the
// pieces that are its loop (full tiles in a loop, a partial tile run once).
// Before the AST is built, every mark's id is replaced by one with the same
// name that carries d + 1 as its user pointer (ids are unique per name and
// pointer, so they print as before).
std::string loopOfMarkAtDepth(intptr_t depth) { return "c" + std::to_string(depth); }

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

// Whether a loop named `iterator` is right under `node` (through marks, ifs
// and blocks: isl splits a loop into pieces where the domain is a union, and
// drops the loop from a piece where it runs once).
bool hasLoopOf(isl_ast_node* node, const std::string& iterator) {
  auto anyOf = [&](isl_ast_node* child) {
    bool has = child && hasLoopOf(child, iterator);
    isl_ast_node_free(child);
    return has;
  };
  switch (isl_ast_node_get_type(node)) {
    case isl_ast_node_for: {
      isl_ast_expr* expr = isl_ast_node_for_get_iterator(node);
      isl_id* name = isl_ast_expr_get_id(expr);
      bool same = name && iterator == isl_id_get_name(name);
      isl_id_free(name);
      isl_ast_expr_free(expr);
      return same;
    }
    case isl_ast_node_mark:
      return anyOf(isl_ast_node_mark_get_node(node));
    case isl_ast_node_if:
      return anyOf(isl_ast_node_if_get_then_node(node)) ||
             (isl_ast_node_if_has_else_node(node) == isl_bool_true &&
              anyOf(isl_ast_node_if_get_else_node(node)));
    case isl_ast_node_block: {
      isl_ast_node_list* children = isl_ast_node_block_get_children(node);
      bool has = false;
      for (isl_size k = 0; !has && k < isl_ast_node_list_n_ast_node(children); ++k)
        has = anyOf(isl_ast_node_list_get_ast_node(children, k));
      isl_ast_node_list_free(children);
      return has;
    }
    default:  // a statement: its piece of the loop has one iteration
      return false;
  }
}

isl_ast_node* dropMarksOfRemovedLoops(isl_ast_node* mark, isl_ast_build*, void*) {
  isl_id* id = isl_ast_node_mark_get_id(mark);
  intptr_t depth = reinterpret_cast<intptr_t>(isl_id_get_user(id)) - 1;
  // A grafted micro-kernel replaces its whole subtree, loops or not.
  bool grafted = schedule::isMicroKernelMark(isl_id_get_name(id));
  isl_id_free(id);
  if (depth < 0 || grafted) return mark;
  isl_ast_node* child = isl_ast_node_mark_get_node(mark);
  if (hasLoopOf(child, loopOfMarkAtDepth(depth))) {
    isl_ast_node_free(child);
    return mark;
  }
  isl_ast_node_free(mark);
  return child;
}

// What the AST generation callbacks share: the promotion instances found so
// far, and the first exception a callback caught (C++ exceptions must not
// unwind through isl's C code; it is rethrown once isl returns).
struct AstGeneration {
  const poly::Scop& scop;
  const target::PromotionPlan& plan;
  std::vector<PromotionInstance> promotions;
  std::exception_ptr failure;
};

// The least element of a footprint per dimension, where each tile's footprint
// spans at most `box` from it. isl drops from the build's schedule the loops
// it generates as one iteration, and where such a loop's value is a
// quasi-affine function of the loops around it (a tile of one level inside a
// tile of another, in a piece where they meet once) the simple box hull finds
// no affine offset and spans the whole tensor. The piecewise minimum is exact.
std::optional<std::vector<isl::pw_aff>> leastElements(const isl::map& footprint,
                                                      const std::vector<int64_t>& box) {
  std::vector<isl::pw_aff> starts;
  auto dims = static_cast<unsigned>(box.size());
  for (unsigned d = 0; d < dims; ++d) {
    isl_map* along = target::alongRangeDimension(footprint, d).release();
    isl::pw_aff least = isl::manage(isl_map_dim_min(isl_map_copy(along), 0));
    // least -> element, over every tile; their differences bound the span.
    isl_map* fromLeast = isl_map_apply_domain(along, isl_map_from_pw_aff(least.copy()));
    fromLeast = isl_map_reset_tuple_id(fromLeast, isl_dim_out);
    isl::val span = isl::manage(isl_map_deltas(fromLeast)).dim_max_val(0);
    if (!span.is_int() || span.get_num_si() + 1 > box[d]) return std::nullopt;
    starts.push_back(least);
  }
  return starts;
}

// Where the boxes of the site's tensors lie in the tiles the build is at.
// A tensor whose box isl cannot place stays unpromoted here (its reads go to
// the tensor, which is always right), and so does a contracted temporary
// whose values cross into another piece of the site's subtree.
PromotionInstance placePromotion(const AstGeneration& g, size_t site, isl_ast_build* build) {
  PromotionInstance instance;
  instance.site = site;
  isl::union_map tileToInstances = isl::manage(isl_ast_build_get_schedule(build)).reverse();
  for (const auto& tensor : g.plan.sites[site].tensors) {
    std::optional<std::vector<isl::ast_expr>> offsets;
    bool accessed = true;  // until shown otherwise
    isl::union_set instances = tileToInstances.range();
    isl::union_map accesses = target::readsOf(g.scop, instances, tensor.tensor);
    bool selfContained = true;
    if (tensor.contracted) {
      accesses = accesses.unite(target::writesOf(g.scop, instances, tensor.tensor));
      TESSEL_CHECK(tensor.flow.has_value(), "ast", "contracted " + tensor.tensor + " without its dataflow");
      if (tensor.recomputed) {
        // Each iteration runs its own copies of the writers: every value
        // read here must be written here in the same iteration, and values
        // of writers that run once must not leave.
        isl::union_map needed = tileToInstances.apply_range(tensor.flow->reverse());
        isl::union_map leaving =
            tensor.flow->intersect_domain(instances.subtract(*tensor.recomputed)).subtract_range(instances);
        selfContained = needed.is_subset(tileToInstances) && leaving.is_empty();
      } else {
        isl::union_map touching =
            tensor.flow->intersect_domain(instances).unite(tensor.flow->intersect_range(instances));
        selfContained = touching.is_subset(touching.intersect_domain(instances).intersect_range(instances));
      }
    }
    isl::union_map footprint = tileToInstances.apply_range(accesses);
    accessed = !footprint.is_empty();
    // One map: the build's schedule space to the tensor's.
    if (selfContained && accessed && footprint.isa_map()) {
      isl::fixed_box box = footprint.as_map().range_simple_fixed_box_hull();
      bool fits = box.is_valid();
      isl::multi_val size = fits ? box.size() : isl::multi_val();
      for (unsigned d = 0; fits && d < tensor.box.size(); ++d)
        fits = size.at(static_cast<int>(d)).num_si() <= tensor.box[d];
      std::optional<std::vector<isl::pw_aff>> starts;
      if (fits) {
        isl::multi_aff offset = box.offset();
        starts.emplace();
        for (unsigned d = 0; d < tensor.box.size(); ++d)
          starts->push_back(isl::pw_aff(offset.at(static_cast<int>(d))));
      } else if (tensor.contracted) {
        // A contracted temporary has no copies in or out, which would
        // need an offset in tiles that access nothing.
        starts = leastElements(footprint.as_map(), tensor.box);
      }
      if (starts) {
        offsets.emplace();
        for (const isl::pw_aff& start : *starts)
          offsets->push_back(isl::manage(isl_ast_build_expr_from_pw_aff(build, start.copy())));
      }
    }
    // The array would miss the values that the other pieces keep in their
    // buffers, and recomputing tiles may share it across threads.
    TESSEL_CHECK(
        offsets || !tensor.recomputed || !accessed, "ast",
        "recomputed " + tensor.tensor + " has no per-iteration buffer in a piece of its contraction site");
    instance.offsets.push_back(offsets);
  }
  return instance;
}

// The build at a mark is the one its subtree was generated with, so a
// promotion is placed here, after the subtree (isl calls no after_each_mark
// for a mark whose subtree generated nothing).
isl_ast_node* afterEachMark(isl_ast_node* mark, isl_ast_build* build, void* user) {
  auto& g = *static_cast<AstGeneration*>(user);
  try {
    isl::id id = isl::manage(isl_ast_node_mark_get_id(mark));
    std::optional<size_t> site = g.plan.siteOfMark(id.name());
    if (!site) return dropMarksOfRemovedLoops(mark, build, nullptr);
    g.promotions.push_back(placePromotion(g, *site, build));
    // The annotation names the instance: its user pointer is the index + 1.
    auto index = static_cast<intptr_t>(g.promotions.size());
    isl_id* annotation =
        isl_id_alloc(isl_ast_node_get_ctx(mark), "promotion", reinterpret_cast<void*>(index));
    return isl_ast_node_set_annotation(mark, annotation);
  } catch (...) {
    if (!g.failure) g.failure = std::current_exception();
    isl_ast_node_free(mark);
    return nullptr;
  }
}

}  // namespace

GeneratedAst buildAst(const isl::schedule& schedule, const poly::Scop& scop,
                      const target::PromotionPlan& plan) {
  isl::ctx ctx = schedule.ctx();
  AstGeneration g{scop, plan, {}, nullptr};
  isl::ast_build build = isl::ast_build::from_context(isl::set(ctx, "{ : }"));
  build = isl::manage(isl_ast_build_set_after_each_mark(build.release(), afterEachMark, &g));
  isl::ast_node root;
  try {
    root = build.node_from(marksWithDepths(schedule));
  } catch (const isl::exception&) {
    if (!g.failure) throw;
  }
  if (g.failure) std::rethrow_exception(g.failure);
  return {root, std::move(g.promotions)};
}

namespace {

// Software prefetch in packing copies (copyIn): rows this far apart are on
// different pages; a copy starts the read of the row this many bytes ahead.
constexpr int64_t kPageBytes = 4096;
constexpr int64_t kPrefetchAheadBytes = 2048;

// What the marks above a loop say about it.
struct LoopMarks {
  std::string loop;  // the loop they apply to (isl's iterator name); empty: the first
  bool parallel = false;
  VectorHint vector = VectorHint::None;
  bool unrollJam = false;
  bool transposeBlock = false;
  bool collapsible = false;
  bool parallelFallback = false;
};

class AstTranslator {
 public:
  AstTranslator(const poly::Scop& s, const GeneratedAst& ast, const target::PromotionPlan& plan,
                const target::MicroKernelPlan& microKernels)
      : scop_(s), ast_(ast), plan_(plan), microKernels_(microKernels) {}

  bool checksIndices = false;
  std::map<std::string, BufferDecl> locals;   // the promotion buffers, by name
  std::vector<std::string> helpers;           // the grafted micro-kernels' C functions
  std::vector<PreparedInput> preparedInputs;  // inputs the micro-kernels read laid out
  std::vector<BufferDecl> layoutTemporaries;  // temporaries they read laid out

  // Marks apply to the loop right under them.
  Stmt node(const isl::ast_node& n, LoopMarks marks = LoopMarks()) {
    if (n.isa<isl::ast_node_for>()) {
      auto f = n.as<isl::ast_node_for>();
      std::string var = f.iterator().as<isl::ast_expr_id>().id().name();
      // A piece where the marked loop runs once: the loop here is another.
      if (!marks.loop.empty() && var != marks.loop) marks = LoopMarks();
      // Where the parallel loop above has one iteration here (a partial
      // tile), the loop marked to stand in for it runs in parallel.
      bool parallel = marks.parallel || (marks.parallelFallback && !insideParallelLoop_);
      bool outerInside = insideParallelLoop_;
      insideParallelLoop_ = insideParallelLoop_ || parallel;
      Stmt body = node(f.body());
      insideParallelLoop_ = outerInside;
      Stmt loop = forLoop(var, expr(f.init()), expr(f.cond()), expr(f.inc()), body, parallel, marks.vector);
      if (!marks.unrollJam && !marks.transposeBlock && !marks.collapsible) return loop;
      auto copy = std::make_shared<StmtNode>(*loop);
      copy->unrollJam = marks.unrollJam;
      copy->transposeBlock = marks.transposeBlock;
      copy->collapsible = marks.collapsible;
      return copy;
    }
    // A mark kept over ifs and blocks applies to each piece that is its
    // loop; pieces that run it once drop it at the next loop or mark.
    if (n.isa<isl::ast_node_if>()) {
      auto i = n.as<isl::ast_node_if>();
      return ifThenElse(expr(i.cond()), node(i.then_node(), marks),
                        i.has_else_node() ? node(i.else_node(), marks) : nullptr);
    }
    if (n.isa<isl::ast_node_block>()) {
      auto list = n.as<isl::ast_node_block>().children();
      std::vector<Stmt> stmts;
      for (unsigned k = 0; k < list.size(); ++k) stmts.push_back(node(list.at(static_cast<int>(k)), marks));
      return block(std::move(stmts));
    }
    if (n.isa<isl::ast_node_mark>()) {
      auto m = n.as<isl::ast_node_mark>();
      // A mark over a loop that the AST generator removed (one iteration)
      // simply has nothing to parallelize or vectorize.
      std::string name = m.id().name();
      if (auto site = plan_.siteOfMark(name)) return promotion(m, *site, marks);
      if (const target::GraftedMicroKernel* k = microKernels_.ofMark(name)) {
        std::vector<Stmt> calls, after;
        for (const auto& laid : k->layouts) {
          helpers.push_back(laid.source);
          BufferDecl buffer{laid.buffer, te::DType::F32, laid.shape};
          if (laid.output) {
            layoutTemporaries.push_back(buffer);
            if (laid.copiedIn) calls.push_back(call(laid.function, {laid.buffer, laid.tensor}));
            after.push_back(call(laid.backFunction, {laid.tensor, laid.buffer}));
            continue;
          }
          if (laid.input) {
            preparedInputs.push_back({laid.tensor, buffer, laid.function, laid.layout});
            continue;
          }
          // Computed by the kernel itself: laid out right before use.
          layoutTemporaries.push_back(buffer);
          calls.push_back(call(laid.function, {laid.buffer, laid.tensor}));
        }
        helpers.push_back(k->source);
        calls.push_back(call(k->function, k->arguments));
        calls.insert(calls.end(), after.begin(), after.end());
        return calls.size() == 1 ? calls.front() : block(std::move(calls));
      }
      if (auto depth = reinterpret_cast<intptr_t>(isl_id_get_user(m.id().get())) - 1; depth >= 0) {
        std::string loop = loopOfMarkAtDepth(depth);
        // The marks above were for a loop this piece runs once: they do not
        // pass on to the loop of this one (a parallel mark onto a vector
        // reduction: a race).
        if (!marks.loop.empty() && marks.loop != loop) marks = LoopMarks();
        marks.loop = loop;
      }
      if (name == schedule::kVectorMark) marks.vector = VectorHint::Independent;
      if (name == schedule::kVectorReductionMark) marks.vector = VectorHint::Reduction;
      if (name == schedule::kUnrollJamMark) marks.unrollJam = true;
      if (name == schedule::kTransposeBlockMark) marks.transposeBlock = true;
      if (name == schedule::kParallelMark) marks.parallel = true;
      if (name == schedule::kCollapsibleMark) marks.collapsible = true;
      if (name == schedule::kParallelFallbackMark) marks.parallelFallback = true;
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
    return lowerStatementInstance(scop_, s, values, promoted_, checksIndices);
  }

  // The site's copies, then its subtree reading them.
  Stmt promotion(const isl::ast_node_mark& mark, size_t site, LoopMarks marks) {
    isl_id* annotation = isl_ast_node_get_annotation(mark.get());
    if (!annotation) return node(mark.node(), marks);
    auto index = reinterpret_cast<intptr_t>(isl_id_get_user(annotation)) - 1;
    isl_id_free(annotation);
    const PromotionInstance& instance = ast_.promotions.at(static_cast<size_t>(index));
    RedirectedTensors outer = promoted_;
    std::vector<Stmt> stmts;
    for (size_t k = 0; k < instance.offsets.size(); ++k) {
      if (!instance.offsets[k]) continue;
      const target::PromotedTensor& p = plan_.sites[site].tensors[k];
      const te::TensorDecl& t = scop_.program->tensor(p.tensor);
      std::vector<int64_t> shape;
      for (size_t d : bufferDims(p.layout, p.box.size())) shape.push_back(p.box[d]);
      locals.emplace(p.buffer, BufferDecl{p.buffer, t.dtype, shape});
      stmts.push_back(alloc(p.buffer));
      std::vector<Expr> offsets;
      for (size_t d = 0; d < p.box.size(); ++d) {
        std::string name = p.buffer + "_o" + std::to_string(d);
        stmts.push_back(let(name, expr((*instance.offsets[k])[d])));
        offsets.push_back(indexVar(name));
      }
      if (!p.contracted) stmts.push_back(copyIn(p, t, offsets));
      promoted_[p.tensor] = RedirectedTensor{p.buffer, offsets, p.box, p.contracted, p.layout};
    }
    stmts.push_back(node(mark.node(), marks));
    promoted_ = outer;
    return block(std::move(stmts));
  }

  // buffer[l] = tensor[offsets + l] over the box, clipped to the tensor: the
  // box may reach past its edges, where nothing is read. The loops run in the
  // buffer's order, so a transposing copy writes its rows contiguously.
  static Stmt copyIn(const target::PromotedTensor& p, const te::TensorDecl& t,
                     const std::vector<Expr>& offsets) {
    using B = te::BinaryOp;
    std::vector<std::string> vars;
    for (size_t d = 0; d < p.box.size(); ++d) vars.push_back(p.buffer + "_" + std::to_string(d));
    // The loops' bounds: the box, clipped to the tensor.
    auto lower = [&](size_t d) { return indexBinary(B::Max, indexImm(0), indexNeg(offsets[d])); };
    auto upper = [&](size_t d) {
      return indexBinary(B::Min, indexImm(p.box[d]), indexBinary(B::Sub, indexImm(t.shape[d]), offsets[d]));
    };
    // The tensor's element at the loops' point, dimension `moved` at `at` instead.
    auto sourceAt = [&](size_t moved, const Expr& at) {
      Expr source = indexImm(0);
      for (size_t d = 0; d < p.box.size(); ++d) {
        Expr element = indexBinary(B::Add, offsets[d], d == moved ? at : indexVar(vars[d]));
        source = d == 0 ? element
                        : indexBinary(B::Add, indexBinary(B::Mul, source, indexImm(t.shape[d])), element);
      }
      return source;
    };
    Expr source = sourceAt(p.box.size(), indexImm(0)), target = indexImm(0);
    std::vector<size_t> order = bufferDims(p.layout, p.box.size());
    for (size_t k = 0; k < order.size(); ++k) {
      Expr l = indexVar(vars[order[k]]);
      target = k == 0 ? l : indexBinary(B::Add, indexBinary(B::Mul, target, indexImm(p.box[order[k]])), l);
    }
    Stmt body = store(p.buffer, target, load(t.name, t.dtype, source));
    size_t last = p.box.size() - 1;
    if (order.size() >= 2 && order.back() == last) {
      // Rows a page or more apart in the tensor: the hardware prefetchers,
      // which follow streams within a page, start each row cold (B's
      // 1024 x 64 panel of a 35 x 8457 x 2048 matmul reads 256 bytes from
      // rows 34 KB apart: 19.1 ms, 17.1 with the reads started 8 rows
      // ahead). Each store starts the read of its row's element that many
      // rows on, kPrefetchAheadBytes of rows ahead, within the box.
      size_t rows = order[order.size() - 2];
      int64_t elementBytes = te::dtypeBytes(t.dtype), rowStride = 1;
      for (size_t d = rows + 1; d < p.box.size(); ++d) rowStride *= t.shape[d];
      int64_t rowBytes = p.box[last] * elementBytes;
      if (rowStride * elementBytes >= kPageBytes && rowBytes < kPrefetchAheadBytes) {
        int64_t ahead = (kPrefetchAheadBytes + rowBytes - 1) / rowBytes;
        Expr row = indexBinary(B::Min, indexBinary(B::Add, indexVar(vars[rows]), indexImm(ahead)),
                               indexBinary(B::Sub, upper(rows), indexImm(1)));
        auto prefetching = std::make_shared<StmtNode>(*body);
        prefetching->prefetchBuffer = t.name;
        prefetching->prefetchIndex = sourceAt(rows, row);
        body = prefetching;
      }
    }
    // A transposing copy (the tensor's contiguous dimension is the buffer's
    // second-innermost) reads strided along its innermost loop: the loop
    // above it runs in blocks transposed through registers, where the
    // vectorizer can (8x8 on AVX2), instead of one scalar element at a time.
    bool transposes = order.size() >= 2 && order.back() != last && order[order.size() - 2] == last;
    for (size_t k = order.size(); k-- > 0;) {
      size_t d = order[k];
      bool innermost = k + 1 == order.size();
      body = forLoop(vars[d], lower(d), indexBinary(B::Lt, indexVar(vars[d]), upper(d)), indexImm(1), body,
                     false, innermost ? VectorHint::Independent : VectorHint::None);
      if (transposes && k + 2 == order.size()) {
        auto blocked = std::make_shared<StmtNode>(*body);
        blocked->transposeBlock = true;
        body = blocked;
      }
    }
    return body;
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
  const GeneratedAst& ast_;
  const target::PromotionPlan& plan_;
  const target::MicroKernelPlan& microKernels_;
  RedirectedTensors promoted_;       // the accesses redirected by the promotion marks above
  bool insideParallelLoop_ = false;  // translating the body of a parallel loop
};

std::vector<BufferDecl> decls(const std::vector<const te::TensorDecl*>& ts) {
  std::vector<BufferDecl> out;
  for (const auto* t : ts) out.push_back({t->name, t->dtype, t->shape});
  return out;
}

}  // namespace

Kernel astToLir(const te::Program& program, const poly::Scop& scop, const GeneratedAst& ast,
                const target::PromotionPlan& plan, const target::MicroKernelPlan& microKernels) {
  AstTranslator t(scop, ast, plan, microKernels);
  Kernel k;
  k.name = program.name;
  k.inputs = decls(program.inputs());
  k.outputs = decls(program.outputs());
  k.body = t.node(ast.root);
  k.work = poly::estimatedWork(scop);
  // A temporary contracted everywhere needs no array of its own.
  for (const auto& decl : decls(program.temporaries()))
    if (usesBuffer(k.body, decl.name)) k.temporaries.push_back(decl);
  k.checksIndices = t.checksIndices;
  k.helpers = t.helpers;
  k.preparedInputs = t.preparedInputs;
  k.temporaries.insert(k.temporaries.end(), t.layoutTemporaries.begin(), t.layoutTemporaries.end());
  for (const auto& [name, decl] : t.locals) k.locals.push_back(decl);
  return k;
}

}  // namespace tessel::lir
