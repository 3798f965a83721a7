// Schedule tree -> isl AST -> loop IR kernel. Loops under a "parallel" mark
// (schedule/MarkParallel.h) become parallel loops; under a promotion mark
// (target/Promotion.h), the footprints of the promoted tensors are copied into
// local buffers that the statements below then read. A grafted micro-kernel's
// mark (target/MicroKernelPlan.h) becomes a call of its function.
#pragma once

#include <isl/cpp.h>

#include <optional>
#include <vector>

#include "lir/Lir.h"
#include "poly/Scop.h"
#include "target/MicroKernelPlan.h"
#include "target/Promotion.h"

namespace tessel::lir {

// One place where AST generation put the subtree of a promotion site: where
// the box of each of the site's tensors starts in the current tile, as
// expressions of the enclosing loops. A tensor has none when this part of the
// subtree does not read it or its box here does not fit the buffer; its reads
// then stay on the tensor.
struct PromotionInstance {
  size_t site = 0;
  std::vector<std::optional<std::vector<isl::ast_expr>>> offsets;  // [tensor of the site][dimension]
};

struct GeneratedAst {
  isl::ast_node root;
  std::vector<PromotionInstance> promotions;  // the mark nodes of sites carry an index into it
};

GeneratedAst buildAst(const isl::schedule& schedule, const poly::Scop& scop,
                      const target::PromotionPlan& plan);
Kernel astToLir(const te::Program& program, const poly::Scop& scop, const GeneratedAst& ast,
                const target::PromotionPlan& plan, const target::MicroKernelPlan& microKernels = {});

}  // namespace tessel::lir
