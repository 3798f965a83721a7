#include "driver/Machine.h"

#include <utility>

namespace tessel::driver {

Machine modelledMachine(target::Hardware hardware) {
  Machine m;
  m.microKernels = microkernel::modelledTable(microkernel::vectorIsaNamed(target::vectorIsa(hardware)));
  m.microKernels.machine = hardware.name;
  m.hardware = std::move(hardware);
  return m;
}

}  // namespace tessel::driver
