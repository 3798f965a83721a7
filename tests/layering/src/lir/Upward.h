// A fixture of the layering test (tests/CMakeLists.txt): loop IR may not depend on the driver.
#pragma once

#include "driver/Compile.h"
