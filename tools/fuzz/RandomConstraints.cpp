#include "fuzz/RandomConstraints.h"

#include <random>
#include <set>
#include <vector>

namespace tessel::fuzz {

namespace {

struct NamedStatement {
  std::string name;  // as the constraint file names it: TENSOR or TENSOR.init
  std::vector<std::string> iterators;
};

std::vector<NamedStatement> statementsOf(const te::Program& program) {
  std::vector<NamedStatement> out;
  std::set<std::string> seen;
  for (const auto& stage : program.stages) {
    if (!seen.insert(stage.output).second) continue;  // the file names a tensor's first statement
    if (stage.reduction != te::Reduction::None && stage.init)
      out.push_back({stage.output + ".init", stage.indices});
    std::vector<std::string> all = stage.indices;
    all.insert(all.end(), stage.reductionVars.begin(), stage.reductionVars.end());
    out.push_back({stage.output, all});
  }
  return out;
}

class TreeWriter {
 public:
  TreeWriter(std::vector<NamedStatement> statements, uint64_t seed)
      : statements_(std::move(statements)), rng_(seed) {}

  std::string tree() {
    std::string text;
    int roots = 1 + pick(2);
    for (int r = 0; r < roots; ++r) text += node(0, 0);
    return text;
  }

 private:
  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  const NamedStatement& anyStatement() {
    return statements_[static_cast<size_t>(pick(static_cast<int>(statements_.size())))];
  }
  // STATEMENT.ITERATOR or STATEMENT.1, at this row or (sometimes) one above.
  std::string coefficient(const NamedStatement& s, int depth) {
    std::string c = s.name + ".";
    if (s.iterators.empty() || pick(5) == 0)
      c += "1";
    else
      c += s.iterators[static_cast<size_t>(pick(static_cast<int>(s.iterators.size())))];
    if (depth > 0 && pick(4) == 0) c += "@" + std::to_string(pick(depth));
    return c;
  }
  std::string constraint(int depth) {
    const NamedStatement& s = anyStatement();
    switch (pick(4)) {
      case 0:  // fixed: a chosen loop order
        return coefficient(s, depth) + " = " + std::to_string(pick(2));
      case 1:  // equated with another statement's: fusion
        return coefficient(s, depth) + " = " + coefficient(anyStatement(), depth);
      case 2:
        return coefficient(s, depth) + " >= " + coefficient(anyStatement(), depth);
      default:
        return coefficient(s, depth) + " + " + coefficient(s, depth) + " <= 1";
    }
  }
  std::string node(int depth, int indent) {
    std::string pad(static_cast<size_t>(indent), ' ');
    std::string text = pad + "row {\n";
    int constraints = pick(3);
    for (int c = 0; c < constraints; ++c) text += pad + "  " + constraint(depth) + "\n";
    if (pick(5) == 0) text += pad + "  coincident\n";
    if (pick(8) == 0) text += pad + "  permutable\n";
    int children = depth < 3 ? pick(3) : 0;
    for (int c = 0; c < children; ++c) text += node(depth + 1, indent + 2);
    return text + pad + "}\n";
  }

  std::vector<NamedStatement> statements_;
  std::mt19937_64 rng_;
};

}  // namespace

std::string randomConstraintTree(const te::Program& program, uint64_t seed) {
  auto statements = statementsOf(program);
  if (statements.empty()) return "";
  return TreeWriter(statements, seed).tree();
}

}  // namespace tessel::fuzz
