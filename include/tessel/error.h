// Error types shared by every stage. Two kinds of failure are kept apart:
// UserError (the user's program, options or files are wrong; carries a source
// location and is printed with the offending line and a caret) and
// InternalError (the compiler broke an invariant; names the pass).
#pragma once

#include <stdexcept>
#include <string>

namespace tessel {

struct SourceLoc {
  std::string file;  // empty when the input has no file (API, command line)
  int line = 0;      // 1-based; 0 = unknown
  int col = 0;       // 1-based; 0 = unknown
  bool known() const { return line > 0; }
};

// The 1-based line and column of byte `offset` of `text` (clamped to its end),
// for errors found in text that is not a TC source (JSON, option strings).
SourceLoc locationInText(const std::string& file, const std::string& text, size_t offset);

class UserError : public std::runtime_error {
 public:
  UserError(SourceLoc loc, const std::string& reason, std::string sourceLine = {});
  const SourceLoc& loc() const { return loc_; }
  const std::string& reason() const { return reason_; }
  bool hasSourceLine() const { return !sourceLine_.empty(); }
  // The same error showing `line` (the text of loc().line) under the message.
  UserError withSourceLine(std::string line) const { return UserError(loc_, reason_, std::move(line)); }
  // "file:line:col: error: reason\n  <source line>\n  ^" (location parts omitted when unknown).
  std::string render() const;

 private:
  SourceLoc loc_;
  std::string reason_;
  std::string sourceLine_;
};

class InternalError : public std::logic_error {
 public:
  InternalError(const std::string& pass, const std::string& what);
};

// Throws a UserError without a source location.
[[noreturn]] void userError(const std::string& reason);
[[noreturn]] void userError(const SourceLoc& loc, const std::string& reason);

}  // namespace tessel

// Internal invariant check: throws InternalError naming the pass and condition.
#define TESSEL_CHECK(cond, pass, msg)                                                                 \
  do {                                                                                                \
    if (!(cond)) throw ::tessel::InternalError((pass), std::string(#cond) + ": " + std::string(msg)); \
  } while (0)
