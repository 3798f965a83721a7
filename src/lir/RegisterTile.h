// The register tiler (TTILE's micro-kernels, paper 002; the register level of
// AKG's tiling): a loop marked unroll-jam whose body ends in a nest of
// sequential loops around vector loops that accumulate into elements the nest
// does not move (C[m, n] += A[m, k] * B[k, n] under m, k, n) is unrolled by R
// and jammed, and the vector loops are moved outside the nest:
//   for m: for k: vector for n: C[m,n] += ...
//   -> for m step R: vector for n (registers): for k: C[m+0,n] += ...; ...; C[m+R-1,n] += ...
// The C backend then keeps the R x (vectors per row) accumulators in registers
// across the whole nest (loaded before it, stored after it), and the operands
// shared by the R rows (B[k, n]) are loaded once. R divides the loop's trip
// count (full tiles) and the accumulators fit the vector register file. A
// vector loop of a partial tile (bound min(N - 1, c + 63)) is tiled for its
// most iterations; the backend picks a version per vector count at run time.
// Over a vector reduction loop (C[m, n] += A[m, k] * B[n, k] along k) R
// iterations are jammed into that loop instead, one accumulator each.
#pragma once

#include <string>

#include "lir/Lir.h"
#include "support/Remarks.h"

namespace tessel::lir {

// `isa`: the kernel's vector ISA ("avx512": 32 registers, "avx2": 16).
Kernel registerTile(const Kernel& kernel, const std::string& isa, Remarks& remarks);

// The longest vector loop (in elements) whose accumulators a register tile
// keeps: 4 vectors of 16 f32 lanes, 8 of 8.
inline constexpr int64_t kMaxRegisterTileVectorElements = 64;

// The most rows a register tile of `vectorsPerRow` accumulator vectors per
// row takes with `lanes`-wide vectors (8: AVX2, 16: AVX-512) when the loop's
// trip count allows it (0 when even one row does not fit): what the tiler
// shapes a contraction's innermost tiles for.
int maxRegisterTileRows(int lanes, int vectorsPerRow);

}  // namespace tessel::lir
