// The random programs of the differential fuzzer, as a small structured model
// (sizes, tensors, statements) that renders to TC text. Keeping the structure
// lets the minimizer drop statements and shrink sizes, then render again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::fuzz {

struct SizeVar {
  std::string name;
  int64_t value = 1;
};

struct TensorModel {
  std::string name;
  std::string type = "float";  // TC type name
  std::vector<int> dims;       // indices into ProgramModel::sizes
  bool input = false;
  bool output = false;  // in the return list; other non-inputs are temporaries
};

struct StatementModel {
  int target = 0;                  // index into ProgramModel::tensors
  std::vector<std::string> lhs;    // one index variable per target dimension
  std::string op = "=";            // "=", "+=!", "max=!", "+=", ...
  std::string rhs;                 // TC expression text
  std::vector<std::string> where;  // "i0 in 0:N1", "r0 in 0:N2 - N1 + 1"
  std::vector<int> reads;          // tensors the rhs reads (for dependency-aware minimization)
};

struct ProgramModel {
  std::string name = "fuzz";
  std::vector<SizeVar> sizes;
  std::vector<TensorModel> tensors;
  std::vector<StatementModel> statements;
};

// TC source with a `# sizes:` line.
std::string render(const ProgramModel& program);

// A random program, deterministic for `seed`: 1-8 statements mixing
// contractions (plain products of two reads summed over reductions),
// elementwise math, broadcasts, the four reductions, transposes, strided,
// reversed and windowed (stencil/convolution-like) reads, quotient reads
// (`i / 2`, `i % 3`, negative numerators truncating toward zero), guarded reads,
// several consumers of one producer, several outputs and indirect reads
// (int32 index inputs), in float, double, half or int32, over awkward sizes.
ProgramModel generateProgram(uint64_t seed);

}  // namespace tessel::fuzz
