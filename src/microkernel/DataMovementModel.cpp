#include "microkernel/DataMovementModel.h"

namespace tessel::microkernel {

namespace {

DataMovement estimateFor(const BoundScheme& b, const std::vector<CacheLevel>& levels,
                         const Bindings& bindings) {
  const Contraction& c = *b.contraction;
  size_t positions = b.registerTileStart;  // loop levels 0..positions-1, then the register tile
  std::vector<Extents> extents;
  std::vector<double> trips;
  for (size_t j = 0; j <= positions; ++j) extents.push_back(b.extentsFrom(j, bindings));
  for (size_t j = 0; j < positions; ++j) {
    const Specifier& s = b.scheme.specs[j];
    double t = 0;
    if (s.kind == SpecKind::Seq)
      for (const auto& branch : s.branches) t += static_cast<double>(branch.first);
    else
      t = static_cast<double>(b.trips(j, bindings));
    trips.push_back(t);
  }
  struct Operand {
    const TensorAccess* access;
    double weight;
  };
  const std::vector<Operand> operands = {{&c.output, 2}, {&c.lhs, 1}, {&c.rhs, 1}};
  const double elementBytes = 4;
  DataMovement m;
  for (const auto& level : levels) {
    size_t fit = positions;
    for (size_t j = 0; j <= positions; ++j) {
      double bytes = 0;
      for (const auto& o : operands) bytes += footprintElements(*o.access, extents[j]) * elementBytes;
      if (bytes <= level.bytes) {
        fit = j;
        break;
      }
    }
    double volume = 0;
    for (const auto& o : operands) {
      double fetches = 1;
      bool moved = false;  // a loop above that indexes the tensor has been met
      for (size_t i = fit; i-- > 0;) {
        const Specifier& s = b.scheme.specs[i];
        moved = moved || o.access->stride(s.dim) != 0;
        if (moved) fetches *= trips[i];
      }
      volume += o.weight * footprintElements(*o.access, extents[fit]) * elementBytes * fetches;
    }
    // An output written laid out is copied back whole on every call: read and written once more.
    if (b.outputLaidOut()) volume += 2 * static_cast<double>(c.output.elements()) * elementBytes;
    m.bytesPerLevel.push_back(volume);
    m.cost += volume * level.costPerByte;
  }
  for (size_t j = positions; j-- > 0;) {
    const Specifier& s = b.scheme.specs[j];
    if (s.kind == SpecKind::Seq || !c.dim(s.dim)->reduction) break;
    m.accumulationLength *= trips[j];
  }
  return m;
}

}  // namespace

DataMovement estimateDataMovement(const BoundScheme& scheme, const std::vector<CacheLevel>& levels) {
  std::vector<Bindings> all = scheme.allBindings();
  DataMovement total;
  total.bytesPerLevel.assign(levels.size(), 0);
  total.accumulationLength = 0;
  // Each binding runs part of the domain; averaged with equal weights.
  for (const auto& bindings : all) {
    DataMovement m = estimateFor(scheme, levels, bindings);
    for (size_t l = 0; l < levels.size(); ++l)
      total.bytesPerLevel[l] += m.bytesPerLevel[l] / static_cast<double>(all.size());
    total.cost += m.cost / static_cast<double>(all.size());
    total.accumulationLength += m.accumulationLength / static_cast<double>(all.size());
  }
  return total;
}

}  // namespace tessel::microkernel
