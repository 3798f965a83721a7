// Recursive-descent parser for Tensor Comprehensions (grammar and operator
// precedence of TC: ?: < || < && < comparisons < + - < * / % < unary - !).
#pragma once

#include <memory>

#include "front/Ast.h"

namespace tessel::front {

// Throws UserError (with the source line) on syntax errors.
std::shared_ptr<const Module> parseModule(const Source& src);

// Scalar type names the language reserves (TC's set plus `half`, `byte`,
// `bfloat16`); whether Tessel supports one is decided when lowering.
bool isTypeName(const std::string& s);

}  // namespace tessel::front
