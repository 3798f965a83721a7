// The class of statements TTILE's micro-kernels implement (paper 002 §1.1):
// `O(lhs vars) += A(...) * B(...)` in f32 over a rectangular domain, every
// subscript affine in the loop variables, no variable twice in one access,
// no guard but zero padding. Convolutions (strided and padded too), matmuls
// and batched contractions are in it; the micro-kernel path reads this
// description, not the te::Stage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/te.h"

namespace tessel::microkernel {

struct ContractionDim {
  std::string name;  // the TC index variable
  int64_t extent = 0;
  bool reduction = false;  // a right-hand-side-only variable
};

// One dimension of a tensor's layout in memory (outermost first): subscript
// `subscript` whole, or split by `block` into its block number (Outer) and
// its position inside the block (Inner), as in blocked layouts (NCHWc16).
struct LayoutDim {
  enum class Part { Whole, Outer, Inner };
  size_t subscript = 0;
  Part part = Part::Whole;
  int64_t block = 0;  // Outer, Inner
};

// The loop variable that alone makes subscript `e` (coefficient 1, no
// constant), or "": the subscripts a layout (L_X) may name and split.
std::string loneVariable(const te::AffineExpr& e);

// One tensor access: subscript k is sum(coeffs[dim] * dim) + constant.
struct TensorAccess {
  std::string tensor;
  std::vector<int64_t> shape;  // the tensor's extents, subscript by subscript
  std::vector<te::AffineExpr> subscripts;
  // How the elements lie in memory; empty: dense row-major over `shape`.
  std::vector<LayoutDim> layout;
  // Zeros around the tensor, subscript by subscript (empty: none). A read
  // guarded by exactly its tensor's bounds (`h + r - 1 >= 0 && ... ? X(n, h
  // + r - 1, ...) : 0`) reads, unguarded, a copy of X with this border.
  std::vector<int64_t> padBefore, padAfter;

  // Elements moved in memory by one step of `dim` (0: the access does not
  // depend on it); along a split subscript, the step inside a block.
  int64_t stride(const std::string& dim) const;
  // Element offset of the point where each dim has the value `index(dim)`.
  int64_t offset(const std::vector<std::pair<std::string, int64_t>>& point) const;
  bool padded() const { return !padBefore.empty(); }
  // Subscript k's extent in memory: the tensor's, and its zero border.
  int64_t paddedExtent(size_t k) const;
  // The layout's extents (a split subscript's block count rounded up) and its element count.
  std::vector<int64_t> layoutShape() const;
  int64_t elements() const;
  // The layout dimensions, outermost first (row-major over `shape` when `layout` is empty).
  std::vector<LayoutDim> layoutDims() const;
  // Memory stride of each layout dimension.
  std::vector<int64_t> layoutStrides() const;
  // Subscript k's block when the layout splits it, else 0.
  int64_t blockOf(size_t k) const;
};

struct Contraction {
  int stage = 0;
  std::vector<ContractionDim> dims;  // the stage's lhs variables, then its reduction variables
  TensorAccess output;
  TensorAccess lhs, rhs;  // output += lhs * rhs
  SourceLoc loc;

  const ContractionDim* dim(const std::string& name) const;
  std::string dimNames() const;  // "k, h, w, c, r, s"
  double flops() const;          // 2 per multiply-add
  // Output dimensions a register tile can vectorize with `lanes` lanes: the
  // output contiguous along them, each operand contiguous or invariant, the
  // extent a multiple of the lanes.
  std::vector<std::string> vectorizableDims(int lanes) const;
};

// The stage as a contraction, or why it is none (a phrase: "its right-hand
// side is not a product of two tensor reads").
struct Recognition {
  std::optional<Contraction> contraction;
  std::string whyNot;
};
Recognition recognizeContraction(const te::Program& program, int stage);

// The program's contraction with the most work, if it has one.
std::optional<Contraction> largestContraction(const te::Program& program);

// "C: R_i, ..." -> ("C", where the rest starts); ("", 0) without "NAME:".
std::pair<std::string, size_t> splitSelection(const std::string& text);
// The contraction named `tensor` (its output), or the program's only one
// when `tensor` is empty; a UserError starting with `origin` otherwise, with
// each stage's reason when there is none.
Contraction selectContraction(const te::Program& program, const std::string& tensor,
                              const std::string& origin);

}  // namespace tessel::microkernel
