#include "tessel/error.h"

namespace tessel {

namespace {
std::string prefix(const SourceLoc& loc) {
  std::string s;
  if (!loc.file.empty()) s += loc.file + ":";
  if (loc.known()) s += std::to_string(loc.line) + ":" + std::to_string(loc.col) + ":";
  if (!s.empty()) s += " ";
  return s;
}
}  // namespace

UserError::UserError(SourceLoc loc, const std::string& reason, std::string sourceLine)
    : std::runtime_error(prefix(loc) + "error: " + reason),
      loc_(std::move(loc)),
      reason_(reason),
      sourceLine_(std::move(sourceLine)) {}

std::string UserError::render() const {
  std::string s = what();
  if (!sourceLine_.empty()) {
    s += "\n  " + sourceLine_ + "\n  ";
    // Keep tabs so the caret lines up with the source line as printed.
    for (int i = 1; i < loc_.col && i <= static_cast<int>(sourceLine_.size()); ++i)
      s += sourceLine_[i - 1] == '\t' ? '\t' : ' ';
    s += "^";
  }
  return s;
}

InternalError::InternalError(const std::string& pass, const std::string& what)
    : std::logic_error("internal error in " + pass + ": " + what) {}

void userError(const std::string& reason) { throw UserError({}, reason); }
void userError(const SourceLoc& loc, const std::string& reason) { throw UserError(loc, reason); }

}  // namespace tessel
