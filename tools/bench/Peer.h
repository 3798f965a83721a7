// A peer: another library that computes the same operator as a Tessel
// program, run side by side with Tessel by `tessel bench`. A peer family
// (oneDNN, OpenBLAS, XNNPACK) offers named operators ("onednn.matmul"); the
// harness prepares one for a case from the program (its tensors' shapes and
// stages tell the operator's sizes) and the very input buffers Tessel gets,
// checks its outputs against Tessel's, then times it.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/Buffer.h"
#include "tessel/te.h"

namespace tessel::bench {

// The operator cannot compute this program (wrong number or rank of tensors,
// a shape it does not support) or the library refused it. The harness reports
// the reason in the peer's column; it is neither a user error nor a crash.
class PeerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PeerOperator {
  std::string name;         // "matmul", without the family prefix
  std::string computation;  // what it computes, in TC-like notation, for --help and docs
};

// Work a peer does outside its timed region that is still worth a figure,
// e.g. oneDNN's reorders into and out of its blocked layouts.
struct SideStep {
  std::string name;  // "activation reorders"
  std::function<void()> run;
};

// One operator instance, ready to run on the case's inputs.
class PreparedPeer {
 public:
  virtual ~PreparedPeer() = default;
  // The timed region: the library call(s), nothing else.
  virtual void run() = 0;
  // The results of the last run() in the program's layout, one per program
  // output in return order (converted back outside the timed region).
  virtual std::vector<runtime::Buffer> outputs() = 0;
  // Extra work timed separately and reported next to the peer's time.
  virtual std::vector<SideStep> sideSteps() { return {}; }
  // What the peer did differently from Tessel, said once in the report
  // ("inputs converted NCHW -> NHWC outside the timed region").
  std::vector<std::string> notes;
};

class PeerFamily {
 public:
  virtual ~PeerFamily() = default;
  virtual std::string name() const = 0;  // "onednn"
  // Known whether or not the library was found, so a suite naming an
  // unknown operator is an error everywhere, and a missing library is not.
  virtual std::vector<PeerOperator> operators() const = 0;
  virtual bool available() const = 0;
  virtual std::string version() const = 0;  // "" when unavailable
  // Threads the library uses from now on (>= 1).
  virtual void setThreads(int threads) = 0;
  // `inputs` are the program's inputs in signature order; the peer must not
  // write them. Throws PeerError when the operator does not fit the program.
  virtual std::unique_ptr<PreparedPeer> prepare(const std::string& op, const te::Program& program,
                                                const std::vector<runtime::Buffer>& inputs) = 0;
};

}  // namespace tessel::bench
