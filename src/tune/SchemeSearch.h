// TTILE's search for one contraction (paper 002 §2): the micro-kernel
// classes of this machine, compositions covering the unrolled dimension
// exactly, a few loop orders over two tiling levels, each candidate scheme
// ranked by the data-movement model (the 40% with the longest accumulation
// loop above the register tile, then the least modelled movement), the best
// `budget` measured, and the compiler's own code measured too: a scheme is
// kept only if it is faster. Results are cached per program, options and
// machine, so a second compile measures nothing.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "driver/Compile.h"
#include "microkernel/DataMovementModel.h"
#include "tune/MicroBench.h"
#include "tune/MicroKernelTable.h"

namespace tessel::tune {

struct SchemeCandidate {
  std::string scheme;
  microkernel::DataMovement model;
  // The share of the vector lanes the register tile computes with: below 1
  // when partial vectors (AVX-512 masks) cover the vector dimension, e.g.
  // 56 = 28 vectors of 2 lanes computes at 1/8 of the machine's rate.
  double laneShare = 1;
  // The share of the register tile's issue slots that are FMAs rather than
  // operand loads beyond one per FMA (1 when it loads no more than it
  // multiplies: 14 rows x 2 vectors loads 16 values for 28 FMAs).
  double fmaShare = 1;
  // Above 1 when the vector operand's panel is read in place from long rows
  // (tune/SchemeSearch.cpp: kStridedPanelPenalty).
  double panelPenalty = 1;
  // The output's stride (elements) along the register tile's unrolled
  // dimension: what breaks a tie of the model, which does not see pages (on
  // yolo_0, tiles down h wrote 14 rows 69 KiB apart, each in its own page, at
  // 7.4 ms; tiles along w, the same modelled movement, 4.9 ms).
  int64_t unrolledOutputStride = 0;
  double measuredMs = 0;  // 0: not measured
  // What the ranking sorts by: the modelled movement, scaled up by the
  // lanes wasted (a scheme moving half the data on 1/8 of the lanes loses)
  // by the loads and latency that hold the FMAs back, and by a panel read
  // from rows far apart.
  double rankCost() const { return model.cost * panelPenalty / (laneShare * fmaShare); }
};

// The ranking's order: the lower rankCost, then the shorter output stride
// along the unrolled dimension.
bool rankedBefore(const SchemeCandidate& a, const SchemeCandidate& b);

// Every scheme the search considers for `contraction`, best modelled first
// (after the accumulation-length cut). Empty, with `whyNone`, when no
// dimension can be vectorized or no class fits. A measured table's classes
// may cover none of an awkward extent (7 rows from classes of 5 and 6 rows):
// then the measured kernels within a lower share of their family's best
// make the classes; `classesUsed`, if given, says which.
std::vector<SchemeCandidate> rankedSchemes(const microkernel::Contraction& contraction,
                                           const target::Hardware& hardware, const MicroKernelTable& table,
                                           std::string& whyNone, std::string* classesUsed = nullptr);

// The micro-kernel families a contraction's schemes can use: A, and those
// unrolling its window loops of extent 3 (B and C with one, D with two).
std::vector<std::string> familiesFor(const microkernel::Contraction& contraction);

struct SchemeSearchOptions {
  int budget = 200;          // schemes measured
  int threads = 0;           // threads the kernels are timed on (0: the OpenMP default)
  double minSeconds = 0.05;  // timing per candidate
  // Measuring stops once the search has run this long (the bound is
  // two minutes per layer); what was measured by then decides.
  double timeLimitSeconds = 110;
  bool useCache = true;
  // Families of micro-kernels the contraction uses and the machine's table
  // lacks are measured first (`microbench`'s settings) and stored; false:
  // the stored table as it is, else the register model. Never for a
  // described machine (CompileOptions::hardware) other than this one.
  bool measureMicroKernels = false;
  MicroBenchOptions microbench;
  std::function<void(const std::string&)> progress;  // one line per step
};

struct SchemeSearchResult {
  std::string scheme;  // "" when the compiler's own code was faster, or no scheme applies
  std::string why;     // what was decided, for --explain
  double baselineMs = 0, bestMs = 0;
  size_t enumerated = 0, measured = 0;
  bool fromCache = false;
  std::vector<std::string> familiesMeasured;  // micro-kernel families measured first by this search
};

// `options.scheme.text` is "search" or "TENSOR: search" (microkernel/Scheme.h).
// Unnamed, the search takes the program's contraction with the most work, and
// a program without one keeps the compiler's own code.
SchemeSearchResult searchScheme(const te::Program& program, const driver::CompileOptions& options,
                                const SchemeSearchOptions& search);

// Whether the scheme text asks for a search ("search", "C: search").
bool asksForSearch(const std::string& schemeText);
// Whether the scheme text is "auto" (the default) or "none".
bool asksForModelChoice(const std::string& schemeText);
bool asksForNoScheme(const std::string& schemeText);
// Scheme "auto": the best-modelled scheme, unmeasured, for the program's
// largest contraction when that is a convolution sliding a window of extent
// 3 (the loops the micro-kernel families unroll) over input channels, or a
// 1x1 convolution, where the model's first choice beat the compiler's own
// code on every 3x3 layer measured and on 7 of 8 1x1 layers; none otherwise
// (matmuls, a 7x7 window, one-channel stencils, where it did not or was not
// measured), and none when
// the user steers the schedule (--schedule, --schedule-constraints) or turns
// vectorization off. Appends what was decided to `explain`.
driver::CompileOptions resolveModelChoice(const te::Program& program, driver::CompileOptions options,
                                          std::string& explain);
// The options with the searched scheme in place of "search" (or none, if the
// compiler's own code won); appends what was decided to `explain`.
driver::CompileOptions resolveSchemeSearch(const te::Program& program, driver::CompileOptions options,
                                           const SchemeSearchOptions& search, std::string& explain);

}  // namespace tessel::tune
