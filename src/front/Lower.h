// Lowers one parsed def, with its sizes bound, to a te::Program: resolves
// names (sizes, tensors, index variables, where-lets, builtins, casts), types
// expressions, evaluates where ranges, and runs range inference stage by
// stage (so `T.1` can name a shape an earlier statement fixed).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "front/Ast.h"
#include "tessel/te.h"

namespace tessel::front {

// Size names of a def's signature (inputs, then typed outputs), first appearance first.
std::vector<std::pair<std::string, SourceLoc>> signatureSizes(const ast::Def& def);

// Throws UserError (without the source line; lower() adds it) on any mistake.
te::Program lowerDef(const Module& m, const ast::Def& def, const std::map<std::string, int64_t>& sizes);

}  // namespace tessel::front
