// A scheme checked against one contraction (paper 002 §1.3's rules): every
// dimension covered exactly (divisibility, lambda sums), at most one V and
// innermost, the register tile (U, V) innermost, vector accesses contiguous
// or invariant along V, and the register tile within the register file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "microkernel/Contraction.h"
#include "microkernel/Scheme.h"

namespace tessel::microkernel {

// The vector instruction set a scheme is generated for.
struct VectorIsa {
  std::string name;  // "avx512", "avx2", "" (scalar)
  int lanes = 1;     // f32 lanes of one register
  int registers = 0;
};
VectorIsa vectorIsaNamed(const std::string& name);  // "" or unknown names: scalar

using Bindings = std::map<std::string, int64_t>;  // lambda parameter -> value
using Extents = std::map<std::string, int64_t>;   // dimension -> extent or offset

// The points of the register tile under one binding of the parameters:
// offsets from its base along the dimensions its U and V specifiers cover.
struct RegisterTileShape {
  std::vector<Extents> accumulators;  // along output dimensions (V: the first lane's)
  std::vector<Extents> steps;         // along reduction dimensions (unrolled U)
  std::string vectorDim;              // "" when scalar
  int lanes = 1;
};

// Distinct element offsets of `access` over the accumulators at `step`, in first-use order.
std::vector<int64_t> distinctOffsets(const TensorAccess& access, const RegisterTileShape& tile,
                                     const Extents& step);
// Whether the tile keeps the left operand's values in registers (the operand
// with fewer distinct values per step) and streams the right one.
bool keepsLeftOperand(const Contraction& contraction, const RegisterTileShape& tile);
// Vector registers the tile needs: accumulators, one step's kept values, the
// streamed values several unrolled steps share, and one for the streamed
// value where it cannot be the FMA's memory operand.
int registersNeeded(const Contraction& contraction, const RegisterTileShape& tile, const VectorIsa& isa);
struct RegisterNeeds {
  int accumulators = 0;
  int kept = 0;            // one step's values of the kept operand
  int sharedStreamed = 0;  // streamed values read by several unrolled steps
  int streamed = 0;        // streamedRegisters
  int total() const { return accumulators + kept + sharedStreamed + streamed; }
};
RegisterNeeds registerNeeds(const Contraction& contraction, const RegisterTileShape& tile,
                            const VectorIsa& isa);
// Registers for the streamed operand's value: 0 on AVX-512, whose FMA reads a
// broadcast or a vector from memory, when the value feeds one FMA; 1 when it
// feeds several (`uses`: compilers load it once into a register, so a 15 x 2
// tile of 30 accumulators and 2 kept vectors spilled an accumulator) and on
// AVX2.
int streamedRegisters(const VectorIsa& isa, int uses);

// A P_X specifier: operand X is packed right before loop specifier `before`
// (an index into BoundScheme::scheme.specs, which holds no P).
struct Packing {
  std::string tensor;
  size_t before = 0;
};

struct BoundScheme {
  // The contraction as the kernel reads it: the one given, or with the L
  // specifiers' layouts on its operands (then owned by `laidOut`).
  const Contraction* contraction = nullptr;
  std::shared_ptr<const Contraction> laidOut;
  Scheme original;  // as given, P and L specifiers included
  Scheme scheme;    // the loop specifiers (no P, no L)
  std::vector<Packing> packings;
  // Tensors laid out by the L specifiers (the output among them when an L
  // names it), then the operands read through a zero-padded copy.
  std::vector<std::string> layouts;
  VectorIsa isa;
  size_t registerTileStart = 0;  // index of the first U or V (specs.size() if none)

  // What the specifiers from `first` on cover along each dimension, with the
  // parameters bound as given (1 along dimensions they do not mention).
  Extents extentsFrom(size_t first, const Bindings& bindings) const;
  // Trip count of specifier `index` (T, U: its factor; R: what it leaves; V: lanes).
  int64_t trips(size_t index, const Bindings& bindings) const;
  RegisterTileShape registerTile(const Bindings& bindings) const;
  // Every binding the parameters take at the register tile (one empty
  // binding when the scheme has no lambda).
  std::vector<Bindings> allBindings() const;
  // Whether the kernel writes the output in a layout of its own (L_O).
  bool outputLaidOut() const;
  // Index of the first of the reduction loops right above the register tile
  // (which run inside the micro-kernel, on its accumulators), not above `first`.
  size_t accumulationStart(size_t first = 0) const;
};

// Where each register tile starts along `dim` and how far it reaches, over the whole domain (each pair once).
std::vector<std::pair<int64_t, int64_t>> registerTileSpans(const BoundScheme& scheme, const std::string& dim);

// Elements of the box `access` reads over the given extents (a span per subscript).
double footprintElements(const TensorAccess& access, const Extents& extents);

// The scheme bound to the contraction, or the first rule it breaks (a
// UserError located in the scheme's text), for callers that try schemes.
std::variant<BoundScheme, UserError> tryBindScheme(const Contraction& contraction, const Scheme& scheme,
                                                   const VectorIsa& isa);
// The same, throwing the UserError: for a scheme the user wrote.
BoundScheme bindScheme(const Contraction& contraction, const Scheme& scheme, const VectorIsa& isa);

}  // namespace tessel::microkernel
