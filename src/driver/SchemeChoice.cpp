#include "driver/SchemeChoice.h"

#include <optional>

#include "microkernel/Contraction.h"
#include "microkernel/SchemeRanking.h"

namespace tessel::driver {

namespace {

std::string trimmed(const std::string& text) {
  size_t first = text.find_first_not_of(" \t"), last = text.find_last_not_of(" \t");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

}  // namespace

bool asksForSearch(const std::string& schemeText) {
  auto [tensor, start] = microkernel::splitSelection(schemeText);
  return trimmed(schemeText.substr(start)) == "search";
}

bool asksForModelChoice(const std::string& schemeText) { return trimmed(schemeText) == "auto"; }
bool asksForNoScheme(const std::string& schemeText) { return trimmed(schemeText) == "none"; }

CompileOptions resolveModelChoice(const te::Program& program, CompileOptions options, const Machine& machine,
                                  Remarks& remarks) {
  if (asksForNoScheme(options.scheme.text)) options.scheme.text.clear();
  if (!asksForModelChoice(options.scheme.text)) return options;
  options.scheme.text.clear();
  std::optional<microkernel::Contraction> contraction = microkernel::largestContraction(program);
  if (!contraction || !microkernel::isConvolution(*contraction)) return options;
  std::string prefix = "scheme auto: " + contraction->output.tensor + " (" + contraction->dimNames() + "): ";
  std::string why;
  if (!options.vectorize)
    why = "vectorization is off";
  else if (options.schedule)
    why = "--schedule gives the tree";
  else if (options.scheduleConstraints)
    why = "--schedule-constraints steer the scheduler";
  const std::string& tensor = contraction->output.tensor;
  if (!why.empty()) {
    remarks.missed(tensor, prefix + "no scheme (" + why + ")", {{"reason", why}});
    return options;
  }
  const target::Hardware& host = machine.hardware;
  std::string classesUsed;
  std::vector<microkernel::SchemeCandidate> ranked =
      microkernel::rankedSchemes(*contraction, host, machine.microKernels, why, &classesUsed);
  if (ranked.empty()) {
    remarks.missed(tensor, prefix + "no scheme (" + why + ")", {{"reason", why}});
    return options;
  }
  microkernel::preferParallel(ranked, *contraction, host,
                              options.schemeThreads > 0 ? options.schemeThreads : host.cores);
  options.scheme.text = contraction->output.tensor + ": " + ranked.front().scheme;
  options.scheme.origin = "--scheme auto";
  options.scheme.chosenByModel = true;
  remarks.applied(
      tensor,
      prefix + "the best-modelled of " + std::to_string(ranked.size()) + " schemes from " + classesUsed +
          ", unmeasured: [" + ranked.front().scheme + "]",
      {{"scheme", ranked.front().scheme}, {"candidates", ranked.size()}, {"classes", classesUsed}});
  return options;
}

}  // namespace tessel::driver
