// Which micro-kernels run well on a machine (paper 002 §1.2, step 1): the
// measured register tiles of the four convolution families and the classes
// the scheme search composes from, those within 85% of their family's best,
// as intervals of the unrolled output dimension. Stored per machine as JSON
// (`tessel microbench` writes it); without a file, classes follow from the
// register budget alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "microkernel/BoundScheme.h"
#include "target/Hardware.h"

namespace tessel::microkernel {

// A family fixes which window loops of extent 3 are unrolled: A none, B s,
// C r, D both (matmuls use A). Its kernels differ in alpha (vectors along the
// vector dimension) and beta (unrolled along an output dimension).
struct MicroKernelFamily {
  std::string name;  // "A", "B", "C", "D"
  bool unrollsR = false, unrollsS = false;
  int steps() const { return (unrollsR ? 3 : 1) * (unrollsS ? 3 : 1); }
};
const std::vector<MicroKernelFamily>& microKernelFamilies();
const MicroKernelFamily* microKernelFamily(const std::string& name);

struct MeasuredMicroKernel {
  std::string family;
  int alpha = 0, beta = 0;
  double gflops = 0;
  double peakShare = 0;  // of one core's f32 peak
};

struct MicroKernelClass {
  std::string family;
  int alpha = 0;
  int betaMin = 0, betaMax = 0;
  double bestShare = 0;  // the best kernel's share of its family's best (1: the best)
};

struct MicroKernelTable {
  std::string machine;
  std::string isa;
  std::string source;  // "measured" or "register model"
  std::vector<MeasuredMicroKernel> kernels;
  std::vector<MicroKernelClass> classes;
};

// Per family, the kernels within `threshold` of the family's best, grouped
// per alpha into maximal runs of consecutive betas.
std::vector<MicroKernelClass> classesFrom(const std::vector<MeasuredMicroKernel>& kernels,
                                          double threshold = 0.85);
// Without measurements: per family and alpha, the betas whose tile fits the
// register file and keeps at least 8 FMAs independent (two FMA ports of
// four cycles' latency).
MicroKernelTable modelledTable(const VectorIsa& isa);

std::string toJson(const MicroKernelTable& table);
// UserError located in `text` for bad JSON or missing fields.
MicroKernelTable tableFromJson(const std::string& text, const std::string& origin);
// `stored` with the families that `fresh` measured replaced by fresh's
// kernels and classes (a table measured family by family accumulates).
MicroKernelTable mergedTable(const MicroKernelTable& stored, const MicroKernelTable& fresh);
// The families of `wanted` that `table` has no measured kernel of.
std::vector<std::string> unmeasuredFamilies(const MicroKernelTable& table,
                                            const std::vector<std::string>& wanted);

}  // namespace tessel::microkernel
