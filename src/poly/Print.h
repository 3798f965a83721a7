// Text forms of isl objects used in dumps and golden tests.
#pragma once

#include <isl/cpp.h>

#include <string>

namespace tessel::poly {

// The schedule tree as isl block-style YAML (what `--emit schedule` prints).
std::string scheduleToYaml(const isl::schedule& schedule);

}  // namespace tessel::poly
