#include "driver/Options.h"

#include <algorithm>
#include <cctype>

namespace tessel::driver {

bool CompileOptions::ConstantInputs::has(const std::string& input) const {
  return all || std::find(names.begin(), names.end(), input) != names.end();
}

std::string CompileOptions::ConstantInputs::toString() const {
  if (all) return "all";
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : "+") + n;
  return s;
}

CompileOptions::ConstantInputs parseConstantInputs(const std::string& text) {
  CompileOptions::ConstantInputs inputs;
  if (text == "all") {
    inputs.all = true;
    return inputs;
  }
  std::string name;
  for (char c : text + ",") {
    if (c != ',' && c != '+') {
      name += c;
      continue;
    }
    bool identifier =
        !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
        std::all_of(name.begin(), name.end(),
                    [](char x) { return std::isalnum(static_cast<unsigned char>(x)) || x == '_'; });
    if (!identifier)
      userError("bad constant-inputs '" + text + "' (expected 'all' or input names, as in 'Wt,B')");
    inputs.names.push_back(name);
    name.clear();
  }
  return inputs;
}

void checkConstantInputs(const te::Program& program, const CompileOptions::ConstantInputs& inputs,
                         const std::string& origin) {
  std::string names;
  for (const auto* t : program.inputs()) names += (names.empty() ? "" : ", ") + t->name;
  for (const auto& n : inputs.names) {
    auto all = program.inputs();
    if (std::none_of(all.begin(), all.end(), [&](const te::TensorDecl* t) { return t->name == n; }))
      userError(origin + ": '" + n + "' is not an input of " + program.name + " (" + names + ")");
  }
}

const char* fusionName(Fusion f) {
  switch (f) {
    case Fusion::None:
      return "none";
    case Fusion::Min:
      return "min";
    case Fusion::Smart:
      return "smart";
    case Fusion::Max:
      return "max";
    case Fusion::Basteln:
      return "basteln";
  }
  return "?";
}

const char* schedulerName(CompileOptions::Scheduler s) {
  return s == CompileOptions::Scheduler::Tessel ? "tessel" : "isl";
}

schedule::FusionStrategy schedulerFusion(Fusion f) {
  switch (f) {
    case Fusion::None:
      return schedule::FusionStrategy::None;
    case Fusion::Min:
      return schedule::FusionStrategy::Min;
    case Fusion::Max:
      return schedule::FusionStrategy::Max;
    case Fusion::Basteln:  // Alg. 1 groups the nests (basteln-group)
      return schedule::FusionStrategy::Min;
    case Fusion::Smart:
      return schedule::FusionStrategy::Smart;
  }
  return schedule::FusionStrategy::Smart;
}

double parsePercent(const std::string& text, const std::string& what) {
  std::string digits = text;
  if (!digits.empty() && digits.back() == '%') digits.pop_back();
  size_t used = 0;
  double value = -1;
  try {
    value = std::stod(digits, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (digits.empty() || used != digits.size() || !(value >= 0 && value <= 100))
    userError("bad " + what + " '" + text + "' (expected a percentage from 0 to 100, such as 25%)");
  return value / 100;
}

std::string percentText(double share) {
  std::string s = std::to_string(share * 100);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s + "%";
}

}  // namespace tessel::driver
