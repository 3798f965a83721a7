#include "bench/CaseProgram.h"

namespace tessel::bench {

CaseProgram loadCaseProgram(const SuiteCase& c) {
  front::ProgramRequest request;
  request.file = c.program;
  request.entry = c.entry;
  for (const SuiteSize& s : c.sizes) request.sizes.push_back({s.name, s.value, s.loc});
  request.fileLoc = c.programLoc;
  request.entryLoc = c.entryLoc;
  request.lineText = c.lineText;
  request.entrySyntax = "entry=NAME";
  request.sizePrefix = "";
  return front::loadProgram(request);
}

}  // namespace tessel::bench
