// What --scheme asks of compilation: a given TTILE scheme, none ("none"),
// the model's choice ("auto", the default), or a search ("search", which
// measures kernels and so runs above compilation: tune/SchemeSearch.h).
#pragma once

#include <string>

#include "driver/Machine.h"
#include "driver/Options.h"
#include "support/Remarks.h"
#include "tessel/te.h"

namespace tessel::driver {

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
// measured), and none when the user steers the schedule (--schedule,
// --schedule-constraints) or turns vectorization off. The classes are the
// machine's. Adds what was decided to `remarks` (subject: the contraction's
// output tensor; "scheme" when one was chosen, "reason" when none was).
CompileOptions resolveModelChoice(const te::Program& program, CompileOptions options, const Machine& machine,
                                  Remarks& remarks);

// The name its remarks carry: it runs before the pipeline, not as a stage.
inline constexpr const char* kSchemeChoice = "scheme-auto";

}  // namespace tessel::driver
