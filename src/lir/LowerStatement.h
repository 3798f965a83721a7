// One instance of a Scop statement as loop IR: binds the statement's index
// variables to the given values and stores the stage's value (init, update or
// plain assignment) into the output tensor.
#pragma once

#include "lir/Lir.h"
#include "poly/Scop.h"

namespace tessel::lir {

// Name of the lir variable holding te index variable `v`.
std::string indexVarName(const std::string& v);

// `checksIndices` is set when the instance reads through an index checked at
// run time (indirect, or not provable in range under its guard).
Stmt lowerStatementInstance(const poly::Scop& scop, const poly::Statement& statement,
                            const std::vector<Expr>& dimValues, bool& checksIndices);

}  // namespace tessel::lir
