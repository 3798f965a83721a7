#include "driver/Pipeline.h"

#include <algorithm>

#include "tessel/error.h"

namespace tessel::driver {

const char* irName(Ir ir) {
  switch (ir) {
    case Ir::Program:
      return "te";
    case Ir::ScheduleTree:
      return "schedule tree";
    case Ir::Ast:
      return "isl AST";
    case Ir::LoopIr:
      return "loop IR";
    case Ir::C:
      return "C";
  }
  return "?";
}

Pipeline& Pipeline::add(StageInfo info, Ir input, Ir output, Run run, bool scheduler) {
  std::string where = "the " + target_ + " pipeline";
  Ir last = stages_.empty() ? Ir::Program : stages_.back().output;
  if (input != last)
    throw InternalError(where, "stage '" + info.name + "' reads " + irName(input) +
                                   " but the stage before it writes " + irName(last));
  if (has(info.name)) throw InternalError(where, "two stages are named '" + info.name + "'");
  for (const auto& required : info.after)
    if (!has(required))
      throw InternalError(where, "stage '" + info.name + "' requires '" + required + "' before it");
  if (scheduler && hasScheduler()) throw InternalError(where, "two stages are the scheduler");
  stages_.push_back({std::move(info), input, output, std::move(run), scheduler});
  return *this;
}

Pipeline& Pipeline::programPass(StageInfo info, ProgramPass run) {
  return add(std::move(info), Ir::Program, Ir::Program, std::move(run));
}
Pipeline& Pipeline::extract(StageInfo info, Extraction run) {
  return add(std::move(info), Ir::Program, Ir::ScheduleTree, std::move(run));
}
Pipeline& Pipeline::scheduler(StageInfo info, SchedulePass run) {
  return add(std::move(info), Ir::ScheduleTree, Ir::ScheduleTree, std::move(run), true);
}
Pipeline& Pipeline::schedulePass(StageInfo info, SchedulePass run) {
  return add(std::move(info), Ir::ScheduleTree, Ir::ScheduleTree, std::move(run));
}
Pipeline& Pipeline::generateAst(StageInfo info, AstGeneration run) {
  return add(std::move(info), Ir::ScheduleTree, Ir::Ast, std::move(run));
}
Pipeline& Pipeline::lowerToLoops(StageInfo info, LoopLowering run) {
  return add(std::move(info), Ir::Ast, Ir::LoopIr, std::move(run));
}
Pipeline& Pipeline::loopPass(StageInfo info, LoopPass run) {
  return add(std::move(info), Ir::LoopIr, Ir::LoopIr, std::move(run));
}
Pipeline& Pipeline::emit(StageInfo info, Emission run) {
  return add(std::move(info), Ir::LoopIr, Ir::C, std::move(run));
}

std::vector<std::string> Pipeline::names() const {
  std::vector<std::string> names;
  for (const auto& s : stages_) names.push_back(s.info.name);
  return names;
}

bool Pipeline::has(const std::string& name) const {
  return std::any_of(stages_.begin(), stages_.end(), [&](const Stage& s) { return s.info.name == name; });
}

bool Pipeline::hasScheduler() const {
  return std::any_of(stages_.begin(), stages_.end(), [](const Stage& s) { return s.scheduler; });
}

std::string Pipeline::describe() const {
  size_t width = 0;
  for (const auto& s : stages_) width = std::max(width, s.info.name.size());
  std::string text = "The " + target_ + " pipeline (" + std::to_string(stages_.size()) + " stages):\n";
  for (size_t i = 0; i < stages_.size(); ++i) {
    const Stage& s = stages_[i];
    std::string number = std::to_string(i + 1);
    text += std::string(number.size() < 2 ? 1 : 0, ' ') + number + ". " + s.info.name +
            std::string(width - s.info.name.size() + 2, ' ') + irName(s.input) + " -> " + irName(s.output) +
            ": " + s.info.summary;
    if (s.scheduler) text += " (replaced by the tree of --schedule)";
    if (!s.info.when.empty()) text += "; runs " + s.info.when;
    if (!s.info.after.empty()) {
      text += "; after ";
      for (size_t r = 0; r < s.info.after.size(); ++r) text += (r ? ", " : "") + s.info.after[r];
    }
    text += "\n";
  }
  return text;
}

}  // namespace tessel::driver
