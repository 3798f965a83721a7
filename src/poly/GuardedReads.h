// Read safety under guards. A read inside a `?:` branch, or after `&&`/`||`,
// is evaluated only where its condition allows (padding: `h - 1 >= 0 ? I(h -
// 1) : 0`). For every read of a statement, isl proves that its affine and
// quasi-affine indices (h / 2) stay inside the tensor where the read is
// evaluated. A read that provably leaves its tensor under a guard isl fully
// understands is the program's error (reported with the first bad point);
// one that cannot be proven (data-dependent guard or index, or one whose
// int32 evaluation might wrap) is recorded in `checkedReads` and checked by
// the kernel at run time.
#pragma once

#include <set>

#include "poly/IslText.h"
#include "poly/Scop.h"

namespace tessel::poly {

void analyzeGuardedReads(isl::ctx ctx, const te::Program& program, const Statement& statement,
                         const StatementText& text, const std::string& domainConstraints,
                         std::set<const te::ExprNode*>& checkedReads);

}  // namespace tessel::poly
