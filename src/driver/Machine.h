// The machine a compilation targets, as data: its hardware description and
// the micro-kernel classes its TTILE schemes compose from. Compilation reads
// nothing else about the machine; the edge (the CLI, the benchmark harness,
// tune::machineFor) detects the host and loads the stored table once.
#pragma once

#include "microkernel/MicroKernelTable.h"
#include "target/Hardware.h"

namespace tessel::driver {

struct Machine {
  target::Hardware hardware;
  microkernel::MicroKernelTable microKernels;
};

// `hardware` with the classes of the register model (no measured table).
Machine modelledMachine(target::Hardware hardware);

}  // namespace tessel::driver
