// A hardware description as JSON: printed with its fields in declaration
// order (stable, diff-friendly), and read back with every mistake reported as
// a located UserError — a syntax error at file:line:col, a bad value with its
// JSON path (memory[2].capacityBytes) and where that value starts in the file.
#pragma once

#include <string>

#include "target/Hardware.h"

namespace tessel::target {

// Pretty JSON (2-space indent, no trailing newline); every field is written.
std::string toJson(const Hardware& hw);

// `origin` names the text in errors (a file path). Fields not written take
// the defaults of Hardware.h; required: name, cores, memory (each level
// with name and capacityBytes) and, per unit, name and vectorBits. Unknown
// fields are errors, so a misspelt field is never silently ignored.
Hardware hardwareFromJson(const std::string& text, const std::string& origin);

}  // namespace tessel::target
