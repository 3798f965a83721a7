// Structured remarks: what a pass decided, as data. Each remark names the
// pass that made it, whether it applied a transformation, missed one (and
// why) or reports an analysis (a model's numbers), the subject it concerns
// (statements, a tensor, a band, a loop), the line --explain prints, and
// named values (a reason, sizes, costs) that tests and tools read without
// parsing prose. --explain prints the lines; --explain=json prints it all
// (as LLVM's optimization remarks, -fsave-optimization-record).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessel {

enum class RemarkKind {
  Applied,   // the pass transformed the subject
  Missed,    // the pass considered the subject and left it; "reason" says why
  Analysis,  // what a model computed or the pass found, no decision of its own
};
const char* remarkKindName(RemarkKind kind);  // "applied", "missed", "analysis"

// A named value of a remark: text, an integer or a real, kept as written so
// that JSON prints numbers as numbers.
class RemarkValue {
 public:
  RemarkValue(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {}
  RemarkValue(std::string name, const char* text) : name_(std::move(name)), text_(text) {}
  RemarkValue(std::string name, int64_t number);
  RemarkValue(std::string name, int number) : RemarkValue(std::move(name), static_cast<int64_t>(number)) {}
  RemarkValue(std::string name, size_t number) : RemarkValue(std::move(name), static_cast<int64_t>(number)) {}
  RemarkValue(std::string name, double number);
  RemarkValue(std::string name, bool flag)
      : name_(std::move(name)), text_(flag ? "true" : "false"), kind_(Kind::Bool) {}

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }  // numbers as printed
  bool isNumber() const { return kind_ == Kind::Number; }
  bool isBool() const { return kind_ == Kind::Bool; }

 private:
  enum class Kind { Text, Number, Bool };
  std::string name_, text_;
  Kind kind_ = Kind::Text;
};

struct Remark {
  std::string pass;  // the pipeline stage (driver/Pipeline.h) that made it
  RemarkKind kind = RemarkKind::Analysis;
  std::string subject;  // what it concerns, as the message names it ("S0 S1", "T"); may be ""
  std::string message;  // what --explain prints: one or more lines, without the last newline
  std::vector<RemarkValue> values;

  // The value named `name` as text, "" when the remark has none.
  std::string value(const std::string& name) const;
  bool has(const std::string& name) const;
};

// The remarks of one compilation, in the order they were made. Passes add to
// it; the pipeline's runner says which pass is running.
class Remarks {
 public:
  using Values = std::vector<RemarkValue>;

  void applied(std::string subject, std::string message, Values values = {});
  void missed(std::string subject, std::string message, Values values = {});
  void analysis(std::string subject, std::string message, Values values = {});
  void add(Remark remark);  // keeps its pass when it names one

  // The pass that remarks added from now on belong to.
  void setPass(std::string pass) { pass_ = std::move(pass); }
  const std::string& pass() const { return pass_; }

  // Another log's remarks before ours (a decision made before the pipeline ran).
  void prepend(const Remarks& before);
  void append(const Remarks& after);

  const std::vector<Remark>& all() const { return remarks_; }
  bool empty() const { return remarks_.empty(); }

  // The remarks matching every non-empty criterion, in order.
  std::vector<Remark> find(const std::string& pass, const std::string& subject = {}) const;
  std::vector<Remark> find(const std::string& pass, RemarkKind kind, const std::string& subject = {}) const;

  std::string text() const;  // --explain: each message on its own line(s)
  std::string json() const;  // --explain=json: an array of {pass, kind, subject, message, values}

 private:
  std::string pass_;
  std::vector<Remark> remarks_;
};

}  // namespace tessel
