// TTILE's optimization schemes (paper 002 §1.3) as plain text: a list of
// specifiers, outermost loop first, e.g.
//   R_k, T_{2,h}, lambda_h b.[(2,11),(1,12)], T_{256,c}, U_{b,h}, U_{2,k}, V_k
//   R_d        loop over the rest of d (its trip count is what the others leave)
//   T_{n,d}    loop of exactly n iterations along d
//   U_{n,d}    the same, fully unrolled (a register tile)
//   V_d        vectorized along d (the vector length); innermost, at most once
//   V_{n,d}    n lanes of a vector along d, the others masked off (AVX-512),
//              for a dimension no whole number of vectors covers
//   P_X        pack: copy what the specifiers inside read of operand X into a
//              contiguous per-thread buffer (its box, in X's dimension
//              order) and read the copy there (paper 002 §4's future work)
//   L_X(d0, d1/b, ..., d1%b)
//              lay operand X out in memory as listed, outermost first: each
//              of X's subscripts once whole, or split by b into its block
//              number (d/b) and its place in the block (d%b). A subscript is
//              named by the loop variable that alone makes it, or as #p (its
//              position). The kernel reads the laid-out copy, which a layout
//              transform makes outside the micro-kernel (oneDNN's reorder).
//   lambda_d p.[(r1,a1),(r2,a2),...]   (also written λseq_d)
//              a sequence of loops along d: loop i runs r_i times with the
//              parameter p, used by factors further in, bound to a_i
// Factors are integers or a parameter bound by an enclosing lambda. The
// brackets around the whole list are optional.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessel/error.h"

namespace tessel::microkernel {

enum class SpecKind { R, T, U, V, Seq, P, L };

struct Factor {
  int64_t value = 0;  // when param is empty
  std::string param;  // a lambda-bound name
};

// One dimension of an L specifier's layout.
struct LayoutItem {
  std::string dim;        // the loop variable naming the subscript, or "" with `position`
  int64_t position = -1;  // #p
  char split = 0;         // '/' (block number), '%' (place in the block) or 0 (whole)
  int64_t block = 0;
  size_t offset = 0;  // where it starts in the text
};

struct Specifier {
  SpecKind kind = SpecKind::T;
  std::string dim;  // P, L: the operand tensor
  Factor factor;    // T, U; V_{n,d} (0 and no parameter for a whole vector)
  // Seq: the bound parameter and its (repetitions, value) pairs.
  std::string param;
  std::vector<std::pair<int64_t, int64_t>> branches;
  std::vector<LayoutItem> layout;  // L
  size_t offset = 0;               // where it starts in the text, for messages
};

struct Scheme {
  std::string text;    // as given
  std::string origin;  // where it came from ("--scheme", a file), for messages
  std::vector<Specifier> specs;
};

// UserError located in `text` (origin:1:column) for anything malformed. The
// scheme starts at byte `start` of `text` (what comes before is the caller's).
Scheme parseScheme(const std::string& text, const std::string& origin, size_t start = 0);
// The canonical text (`lambda` spelled out, no brackets), which parses back.
std::string toString(const Scheme& scheme);
std::string toString(const Specifier& spec);

// A UserError pointing at the specifier `spec` of `scheme`: made, and thrown.
UserError schemeErrorAt(const Scheme& scheme, const Specifier& spec, const std::string& reason);
[[noreturn]] void schemeError(const Scheme& scheme, const Specifier& spec, const std::string& reason);

}  // namespace tessel::microkernel
