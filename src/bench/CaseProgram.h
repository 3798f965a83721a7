// The te::Program a suite case benchmarks: its file parsed, its entry picked,
// its sizes bound (the file's `# sizes:` defaults, then the case's). Mistakes
// in the case (a size the program lacks, an unknown or missing entry) are
// UserErrors at the suite line; mistakes in the program at the .tc file.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "bench/Suite.h"
#include "tessel/te.h"

namespace tessel::bench {

struct CaseProgram {
  te::Program program;
  std::map<std::string, int64_t> sizes;  // every size of the entry, as bound
};

CaseProgram loadCaseProgram(const SuiteCase& c);

}  // namespace tessel::bench
