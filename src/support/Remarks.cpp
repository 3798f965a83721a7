#include "support/Remarks.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tessel {

const char* remarkKindName(RemarkKind kind) {
  switch (kind) {
    case RemarkKind::Applied:
      return "applied";
    case RemarkKind::Missed:
      return "missed";
    case RemarkKind::Analysis:
      return "analysis";
  }
  return "analysis";
}

RemarkValue::RemarkValue(std::string name, int64_t number)
    : name_(std::move(name)), text_(std::to_string(number)), kind_(Kind::Number) {}

RemarkValue::RemarkValue(std::string name, double number) : name_(std::move(name)) {
  std::ostringstream os;
  os.precision(6);
  os << number;
  text_ = os.str();
  // JSON has no infinity or NaN: those stay text ("inf", "nan").
  if (std::isfinite(number)) kind_ = Kind::Number;
}

std::string Remark::value(const std::string& name) const {
  for (const auto& v : values)
    if (v.name() == name) return v.text();
  return {};
}

bool Remark::has(const std::string& name) const {
  for (const auto& v : values)
    if (v.name() == name) return true;
  return false;
}

void Remarks::applied(std::string subject, std::string message, Values values) {
  add(Remark{{}, RemarkKind::Applied, std::move(subject), std::move(message), std::move(values)});
}

void Remarks::missed(std::string subject, std::string message, Values values) {
  add(Remark{{}, RemarkKind::Missed, std::move(subject), std::move(message), std::move(values)});
}

void Remarks::analysis(std::string subject, std::string message, Values values) {
  add(Remark{{}, RemarkKind::Analysis, std::move(subject), std::move(message), std::move(values)});
}

void Remarks::add(Remark remark) {
  if (remark.pass.empty()) remark.pass = pass_;
  // A message is lines; the text rendering adds the last newline.
  while (!remark.message.empty() && remark.message.back() == '\n') remark.message.pop_back();
  remarks_.push_back(std::move(remark));
}

void Remarks::prepend(const Remarks& before) {
  remarks_.insert(remarks_.begin(), before.remarks_.begin(), before.remarks_.end());
}

void Remarks::append(const Remarks& after) {
  remarks_.insert(remarks_.end(), after.remarks_.begin(), after.remarks_.end());
}

std::vector<Remark> Remarks::find(const std::string& pass, const std::string& subject) const {
  std::vector<Remark> out;
  for (const auto& r : remarks_)
    if ((pass.empty() || r.pass == pass) && (subject.empty() || r.subject == subject)) out.push_back(r);
  return out;
}

std::vector<Remark> Remarks::find(const std::string& pass, RemarkKind kind,
                                  const std::string& subject) const {
  std::vector<Remark> out;
  for (const auto& r : find(pass, subject))
    if (r.kind == kind) out.push_back(r);
  return out;
}

std::string Remarks::text() const {
  std::string out;
  for (const auto& r : remarks_)
    if (!r.message.empty()) out += r.message + "\n";
  return out;
}

std::string Remarks::json() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& r : remarks_) {
    nlohmann::ordered_json values = nlohmann::ordered_json::object();
    for (const auto& v : r.values) {
      if (v.isBool())
        values[v.name()] = v.text() == "true";
      else if (v.isNumber())
        values[v.name()] = nlohmann::ordered_json::parse(v.text());
      else
        values[v.name()] = v.text();
    }
    out.push_back({{"pass", r.pass},
                   {"kind", remarkKindName(r.kind)},
                   {"subject", r.subject},
                   {"message", r.message},
                   {"values", std::move(values)}});
  }
  return out.dump(2) + "\n";
}

}  // namespace tessel
