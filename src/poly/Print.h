// Text forms of isl objects used in dumps and golden tests.
#pragma once

#include <isl/cpp.h>

#include <string>

namespace tessel::poly {

// The schedule tree as isl block-style YAML (what `--emit schedule` prints).
std::string scheduleToYaml(const isl::schedule& schedule);

// The tree in a short indented form for --explain: one line per band (its
// members per statement, `parallel` on coincident members), sequence, set,
// mark and extension; filters by the statements they keep.
std::string scheduleOutline(const isl::schedule& schedule, const std::string& indent = "  ");

}  // namespace tessel::poly
