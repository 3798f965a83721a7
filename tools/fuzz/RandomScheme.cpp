#include "fuzz/RandomScheme.h"

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "microkernel/BoundScheme.h"
#include "microkernel/Composition.h"

namespace tessel::fuzz {

namespace {

using microkernel::Contraction;

constexpr int kAttempts = 12;

int64_t randomDivisor(int64_t n, int64_t atMost, std::mt19937_64& rng) {
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= std::min(n, atMost); ++d)
    if (n % d == 0) divisors.push_back(d);
  return divisors[std::uniform_int_distribution<size_t>(0, divisors.size() - 1)(rng)];
}

std::string loop(const char* kind, int64_t n, const std::string& dim) {
  return std::string(kind) + "_{" + std::to_string(n) + "," + dim + "}";
}

// "L_X(...)": X's subscripts shuffled, one that is a lone variable perhaps
// split into blocks (which may overhang the extent), its place in the block
// anywhere after its block number. bindScheme rejects blocks that cut a
// register tile.
std::string randomLayout(const microkernel::TensorAccess& x, std::mt19937_64& rng) {
  std::vector<std::string> items;
  std::vector<size_t> splittable;
  for (size_t k = 0; k < x.subscripts.size(); ++k) {
    std::string lone = microkernel::loneVariable(x.subscripts[k]);
    items.push_back(lone.empty() ? "#" + std::to_string(k) : lone);
    if (!lone.empty()) splittable.push_back(k);
  }
  std::shuffle(items.begin(), items.end(), rng);
  if (!splittable.empty() && rng() % 2 == 0) {
    size_t k = splittable[rng() % splittable.size()];
    std::string name = x.subscripts[k].coeffs.begin()->first;
    int64_t block = std::uniform_int_distribution<int64_t>(1, std::max<int64_t>(1, x.shape[k]))(rng);
    auto at = std::find(items.begin(), items.end(), name);
    *at = name + "/" + std::to_string(block);
    size_t after = static_cast<size_t>(at - items.begin()) + 1;
    size_t place = after + rng() % (items.size() - after + 1);
    items.insert(items.begin() + static_cast<std::ptrdiff_t>(place), name + "%" + std::to_string(block));
  }
  std::string text = "L_" + x.tensor + "(";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
  return text + ")";
}

// One attempt: each dimension's extent split into an outer R, an inner T,
// an unroll factor and the vector lanes.
std::string attempt(const Contraction& c, const microkernel::VectorIsa& isa, std::mt19937_64& rng) {
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  std::string vectorDim;
  int64_t vectorLanes = isa.lanes;
  if (!isa.name.empty() && chance(0.7)) {
    // AVX-512 masks allow vectors of fewer lanes: any extent will do.
    std::vector<std::string> candidates = c.vectorizableDims(isa.name == "avx512" ? 1 : isa.lanes);
    if (!candidates.empty()) vectorDim = candidates[rng() % candidates.size()];
    if (!vectorDim.empty() && c.dim(vectorDim)->extent % isa.lanes != 0)
      vectorLanes = randomDivisor(c.dim(vectorDim)->extent, isa.lanes, rng);
  }
  std::vector<std::string> outer, inner, tile;
  std::string composition;
  for (const auto& d : c.dims) {
    int64_t rest = d.extent / (d.name == vectorDim ? vectorLanes : 1);
    int64_t unroll = chance(0.4) ? randomDivisor(rest, 4, rng) : 1;
    rest /= unroll;
    // A composition of two tile sizes along one output dimension, unrolled.
    if (composition.empty() && unroll == 1 && !d.reduction && d.name != vectorDim && rest >= 3 &&
        chance(0.3)) {
      std::vector<microkernel::Covering> covers = microkernel::coverings(rest, 1, 3, 8);
      std::vector<microkernel::Covering> composed;
      for (const auto& cv : covers)
        if (cv.composed()) composed.push_back(cv);
      if (!composed.empty()) {
        const microkernel::Covering& cv = composed[rng() % composed.size()];
        composition = microkernel::coveringScheme(cv, d.name, "p");
        tile.push_back("U_{p," + d.name + "}");
        continue;
      }
    }
    int64_t innerTrips = chance(0.5) ? randomDivisor(rest, rest, rng) : 1;
    outer.push_back("R_" + d.name);
    if (innerTrips > 1) inner.push_back(loop("T", innerTrips, d.name));
    if (unroll > 1) tile.push_back(loop("U", unroll, d.name));
  }
  std::shuffle(outer.begin(), outer.end(), rng);
  std::shuffle(inner.begin(), inner.end(), rng);
  std::shuffle(tile.begin(), tile.end(), rng);
  std::vector<std::string> specs = outer;
  if (!composition.empty()) specs.push_back(composition);
  specs.insert(specs.end(), inner.begin(), inner.end());
  // A packed operand somewhere above the micro-kernel (bindScheme rejects a
  // bad place), or an operand in another layout.
  double roll = std::uniform_real_distribution<double>(0, 1)(rng);
  if (roll < 0.25) {
    size_t at = rng() % (specs.size() + 1);
    specs.insert(specs.begin() + static_cast<std::ptrdiff_t>(at),
                 "P_" + (chance(0.5) ? c.lhs.tensor : c.rhs.tensor));
  } else if (roll < 0.5) {
    const microkernel::TensorAccess& x = chance(0.5) ? c.lhs : c.rhs;
    if (!x.subscripts.empty()) specs.insert(specs.begin(), randomLayout(x, rng));  // a scalar has none
  }
  // The output written in another layout and copied back; bindScheme rejects
  // one that moves the vector dimension from last. A scalar has no layout.
  if (chance(0.2) && !c.output.subscripts.empty()) specs.insert(specs.begin(), randomLayout(c.output, rng));
  specs.insert(specs.end(), tile.begin(), tile.end());
  if (!vectorDim.empty())
    specs.push_back(vectorLanes == isa.lanes ? "V_" + vectorDim
                                             : "V_{" + std::to_string(vectorLanes) + "," + vectorDim + "}");
  std::string text;
  for (const auto& s : specs) text += (text.empty() ? "" : ", ") + s;
  return text;
}

}  // namespace

std::string randomScheme(const te::Program& program, uint64_t seed, const std::string& vectorIsa) {
  std::optional<Contraction> chosen = microkernel::largestContraction(program);
  if (!chosen) return "";
  microkernel::VectorIsa isa = microkernel::vectorIsaNamed(vectorIsa);
  std::mt19937_64 rng(seed);
  std::string prefix = chosen->output.tensor + ": ";
  for (int i = 0; i < kAttempts; ++i) {
    std::string text = attempt(*chosen, isa, rng);
    // Registers, divisibility of a lambda's branches, a packing's place: else try again.
    if (std::holds_alternative<microkernel::BoundScheme>(
            microkernel::tryBindScheme(*chosen, microkernel::parseScheme(text, "fuzz"), isa)))
      return prefix + text;
  }
  std::string plain;
  for (const auto& d : chosen->dims) plain += (plain.empty() ? "R_" : ", R_") + d.name;
  return prefix + plain;
}

}  // namespace tessel::fuzz
