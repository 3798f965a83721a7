// JSON text read from a user's file: syntax errors become UserErrors located
// at the line and column where the parser stopped.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tessel {

// Keeps the file's order of fields, and ours when printing.
nlohmann::ordered_json parseJsonText(const std::string& text, const std::string& origin);

}  // namespace tessel
