#include "driver/Strategy.h"

#include "tessel/error.h"

namespace tessel::driver {

std::vector<const TargetStrategy*> targetStrategies() { return {&cpuStrategy()}; }

const TargetStrategy& targetStrategy(const std::string& name) {
  std::string names;
  for (const TargetStrategy* s : targetStrategies()) {
    if (name == s->name()) return *s;
    names += (names.empty() ? "" : ", ") + std::string(s->name());
  }
  userError("unknown target '" + name + "' (targets: " + names + ")");
}

}  // namespace tessel::driver
