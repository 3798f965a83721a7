// How an access moves through its array when one statement variable advances:
// what the CPU passes that choose the innermost loop (vector loop) ask.
#pragma once

#include <isl/cpp.h>

#include <cstdint>
#include <vector>

#include "poly/Scop.h"

namespace tessel::target::cpu {

// f32 lanes of the widest vectors (AVX-512): a loop with fewer iterations
// makes partial vectors.
inline constexpr int64_t kVectorLanesF32 = 16;

// How variable `dim` of an access's statement moves through the array:
// +1 unit stride in the last array dimension only, -1 in any other array
// dimension (a large stride), 0 when the access does not depend on it
// (a broadcast), is not affine or moves through a quotient (w / 2).
int contiguity(const isl::map& access, int dim);
// Whether a vector loop over variable `dim` could not load or store the
// access's lanes as vectors: in the array laid out row-major with extents
// `shape`, consecutive iterations are not 1 or 2 elements apart (the
// backend's deinterleaving loads take 2). Such a loop stays scalar.
bool gathersAlong(const isl::map& access, int dim, const std::vector<int64_t>& shape);
// Whether the element an access reads or writes moves with variable `dim` of
// its statement (true when the access is not an affine function).
bool movesWith(const isl::map& access, int dim);
// Whether every write of `statement` is contiguous along its variable `lane`
// (a vector loop over it stores whole vectors).
bool writesContiguouslyAlong(const poly::Statement& statement, int lane);
// Whether a read is transposed through registers between variable `lane`
// (the vector loop) and `row` (the loop right above it): strided along the
// first, contiguous along the second.
bool transposesBetween(const isl::map& read, int lane, int row);

}  // namespace tessel::target::cpu
