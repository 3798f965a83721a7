// Schedule tree -> isl AST -> loop IR kernel. Loops under a "parallel" mark
// (schedule/MarkParallel.h) become parallel loops.
#pragma once

#include <isl/cpp.h>

#include "lir/Lir.h"
#include "poly/Scop.h"

namespace tessel::lir {

isl::ast_node buildAst(const isl::schedule& schedule);
Kernel astToLir(const te::Program& program, const poly::Scop& scop, const isl::ast_node& ast);

}  // namespace tessel::lir
