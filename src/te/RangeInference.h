// Range inference (TC semantics, static sizes) and program checks, in a form
// that can run stage by stage: a front end that needs a shape fixed by an
// earlier stage (TC's `T.1`) infers each stage as soon as it is built.
// te::inferRangesAndCheck runs every stage and then finish().
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "tessel/te.h"

namespace tessel::te {

class RangeInference {
 public:
  explicit RangeInference(Program& p);
  // Infers and checks stage `i`; stages go in order, each exactly once.
  void inferStage(size_t i);
  // Whole-program checks once every stage is inferred (outputs written).
  void finish();

 private:
  Program& p_;
  std::set<std::string> written_;  // outputs and temporaries written so far
  size_t next_ = 0;
};

}  // namespace tessel::te
