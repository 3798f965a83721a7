// The te::Program a suite case benchmarks: its file parsed, its entry picked,
// its sizes bound (the file's `# sizes:` defaults, then the case's), through
// the same loader as `tessel run` (cli/LoadProgram). Mistakes in the case (a
// size the program lacks, an unknown or missing entry) are UserErrors at the
// suite line; mistakes in the program at the .tc file.
#pragma once

#include "bench/Suite.h"
#include "front/LoadProgram.h"

namespace tessel::bench {

using CaseProgram = front::LoadedProgram;  // the program and every size of its entry, as bound

CaseProgram loadCaseProgram(const SuiteCase& c);

}  // namespace tessel::bench
