// `tessel microbench`: each micro-kernel of the four families measured alone
// on this machine (paper 002 §1.2: a c loop of 512 around the register tile,
// here over 8 output columns so that one call is not all overhead, in blocks
// of c whose weights stay in L1 across the columns, and rows of the input
// padded so that they do not share an L1 set), and the classes the scheme
// search composes from.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessel/te.h"
#include "tune/MicroKernelStore.h"

namespace tessel::tune {

struct MicroBenchOptions {
  std::vector<std::string> families = {"A", "B", "C", "D"};
  int maxAlpha = 0;  // 0: as many vectors as the register file allows
  int maxBeta = 15;
  int reduction = 512;       // the c loop's length
  double minSeconds = 0.05;  // timing per kernel
  // Called after each kernel is measured (progress output).
  std::function<void(const microkernel::MeasuredMicroKernel&)> progress;
};

// The NHWC convolution one micro-kernel of `family` is measured on (K =
// alpha vectors, H = beta rows, W = 8 columns, C = reduction), and its scheme.
struct MicroKernelProblem {
  te::Program program;
  std::string scheme;
  double flops = 0;
};
MicroKernelProblem microKernelProblem(const microkernel::MicroKernelFamily& family, int alpha, int beta,
                                      int lanes, int reduction);

microkernel::MicroKernelTable measureMicroKernels(const target::Hardware& hardware,
                                                  const MicroBenchOptions& options);

// The machine's stored table with every family of `families` measured: those
// it lacks (all of them without a stored table) are measured now with
// `options` and the table is stored again at its default path. Returns the
// table and, in `measuredNow`, the families measured by this call.
microkernel::MicroKernelTable tableWithFamilies(const target::Hardware& hardware,
                                                const std::vector<std::string>& families,
                                                MicroBenchOptions options,
                                                std::vector<std::string>& measuredNow);

}  // namespace tessel::tune
