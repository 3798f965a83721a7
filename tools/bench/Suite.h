// Benchmark suites: text files listing the cases `tessel bench` runs, one a line:
//
//   # comment (also after a case)
//   matmul_1024  examples/matmul.tc  M=1024 N=1024 K=1024  peers=onednn.matmul,openblas.sgemm
//   softmax_big  bench/programs/nn.tc  entry=softmax  N=4096 D=1024  peers=onednn.softmax
//   mm_k256_1009 examples/matmul.tc  M=1009 N=1009 K=256  sweep=mm_k256:1009  peers=onednn.matmul
//
// NAME PROGRAM, then in any order: SIZE=VALUE (over the program's `# sizes:`
// defaults), entry=DEF (for a file with several defs), peers=FAMILY.OP,...,
// sweep=FAMILY:X (the case is the point X, a positive integer, usually the
// swept size, of the size sweep FAMILY: letters, digits and _ - .; the report
// summarizes each family and scripts/plot-sweep.py draws it).
// A relative PROGRAM is looked up next to the suite file, then in each folder
// above it (so both "programs/x.tc" and a repository path "examples/x.tc" work),
// then in the working folder.
// Every mistake is a UserError at the suite's file:line:col.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/PeerRegistry.h"
#include "tessel/error.h"

namespace tessel::bench {

struct SuiteSize {
  std::string name;
  int64_t value = 0;
  SourceLoc loc;
};

struct SuitePeer {
  std::string family;  // "onednn"
  std::string op;      // "matmul"
  SourceLoc loc;
  std::string qualified() const { return family + "." + op; }
};

struct SuiteCase {
  std::string name;
  SourceLoc loc;         // the case's first column
  std::string lineText;  // the suite line, for errors found later (sizes the program lacks)
  std::string program;   // path of the .tc file, resolved
  SourceLoc programLoc;
  std::string entry;  // "" = the file's only def
  SourceLoc entryLoc;
  std::vector<SuiteSize> sizes;
  std::vector<SuitePeer> peers;
  std::string sweep;   // the size sweep the case is a point of; "" = none
  int64_t sweepX = 0;  // its position on the sweep's x axis (> 0 when `sweep` is given)
  SourceLoc sweepLoc;
};

struct Suite {
  std::string file;
  std::vector<SuiteCase> cases;
};

// `file` names the suite in messages and anchors relative program paths.
Suite parseSuite(const std::string& file, const std::string& text, const PeerCatalog& catalog);
// Reads and parses `file`; UserError when it cannot be read.
Suite loadSuite(const std::string& file, const PeerCatalog& catalog);

}  // namespace tessel::bench
