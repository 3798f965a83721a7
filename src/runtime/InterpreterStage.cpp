#include "runtime/InterpreterStage.h"

#include "runtime/StagePlan.h"

namespace tessel::runtime {

void runStage(const te::Stage& stage, std::vector<TensorData>& tensors) {
  interp::StagePlan(stage, tensors).run();
}

}  // namespace tessel::runtime
