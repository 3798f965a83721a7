// The polyhedral view of a te::Program: one statement per (stage, role) with
// its iteration domain and access relations, the dependences, and the initial
// schedule tree in source order. Reductions are split into an init statement
// and an update statement, as AKG does.
#pragma once

#include <isl/cpp.h>

#include <set>
#include <string>
#include <vector>

#include "tessel/te.h"

namespace tessel::poly {

enum class StatementKind {
  Assign,  // T(i) = rhs
  Init,    // T(i) = identity of the reduction
  Update,  // T(i) = T(i) op rhs, over the stage's reduction variables too
};

struct Statement {
  std::string name;  // isl tuple name, "S0", "S1", ...
  int stage = 0;     // index into Program::stages
  StatementKind kind = StatementKind::Assign;
  std::vector<std::string> dims;  // te index variables, in domain order (LHS then reduction vars)
  isl::set domain;
  isl::union_map reads;   // may-reads (over-approximated for indirect and guarded reads)
  isl::union_map writes;  // must-writes
};

struct Dependences {
  isl::union_map flow;    // read after write
  isl::union_map anti;    // write after read
  isl::union_map output;  // write after write
  isl::union_map validity() const { return flow.unite(anti).unite(output); }
};

struct Scop {
  const te::Program* program = nullptr;
  std::vector<Statement> statements;
  isl::union_set domain;
  isl::union_map reads;
  isl::union_map writes;
  isl::schedule initialSchedule;
  Dependences deps;
  // Reads that cannot be proven in bounds where they are evaluated: an index
  // that is not affine or quasi-affine (data-dependent, or one whose int32
  // evaluation might wrap), or a padded read whose guard is data-dependent or
  // does not exclude every out-of-range point. The kernel checks them at run
  // time; every other read has an exact relation and proven indices.
  std::set<const te::ExprNode*> checkedReads;

  const Statement& statement(const std::string& name) const;  // InternalError if absent
  // Every element of the program's outputs (one universe set per output).
  isl::union_set outputElements() const;
};

// A rough measure of a kernel's work, in statement instances, an update of
// a reduction (a contraction's multiply-add, which vector and register-tiled
// code runs several per cycle) counted as an eighth of an instance of any
// other statement (whose loads and stores bound its speed): what decides
// whether sharing it among threads can pay for OpenMP's fork and join.
// Statements whose instances isl cannot count count none.
double estimatedWork(const Scop& scop);

}  // namespace tessel::poly
