// TTILE's model side of the scheme search (paper 002 §2): the schemes one
// contraction can take on a machine, composed from its micro-kernel classes
// to cover the unrolled dimension exactly, ranked by the data-movement model.
// No measurement: tune/SchemeSearch.h measures the best of them, and
// driver/SchemeChoice.h takes the first for --scheme auto.
#pragma once

#include <string>
#include <vector>

#include "microkernel/Contraction.h"
#include "microkernel/DataMovementModel.h"
#include "microkernel/MicroKernelTable.h"
#include "target/Hardware.h"

namespace tessel::microkernel {

struct SchemeCandidate {
  std::string scheme;
  DataMovement model;
  // The share of the vector lanes the register tile computes with: below 1
  // when partial vectors (AVX-512 masks) cover the vector dimension, e.g.
  // 56 = 28 vectors of 2 lanes computes at 1/8 of the machine's rate.
  double laneShare = 1;
  // The share of the register tile's issue slots that are FMAs rather than
  // operand loads beyond one per FMA (1 when it loads no more than it
  // multiplies: 14 rows x 2 vectors loads 16 values for 28 FMAs).
  double fmaShare = 1;
  // Above 1 when the vector operand's panel is read in place from long rows
  // (SchemeRanking.cpp: kStridedPanelPenalty).
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
std::vector<SchemeCandidate> rankedSchemes(const Contraction& contraction, const target::Hardware& hardware,
                                           const MicroKernelTable& table, std::string& whyNone,
                                           std::string* classesUsed = nullptr);

// The micro-kernel families a contraction's schemes can use: A, and those
// unrolling its window loops of extent 3 (B and C with one, D with two).
std::vector<std::string> familiesFor(const Contraction& contraction);

// On several threads, the schemes whose parallel loop gives each thread
// work come first (the model counts one core's data movement).
void preferParallel(std::vector<SchemeCandidate>& ranked, const Contraction& contraction,
                    const target::Hardware& hardware, int threads);

// Whether `contraction` is a convolution as TTILE's micro-kernels take it:
// a window of extent 3 sliding over input channels, or a 1x1 convolution
// (microkernel/SchemeRanking.cpp says which forms exactly).
bool isConvolution(const Contraction& contraction);

}  // namespace tessel::microkernel
