// Host tensor buffer: a dtype, a static shape and 64-byte aligned (page-aligned
// from a page on) row-major storage in the dtype's C layout (f16/bf16 as 16-bit patterns). Shared by the
// interpreter, the kernel runner and the checker.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "tessel/te.h"

namespace tessel::runtime {

// Copies are cheap handles that share storage (the runner hands the same
// inputs to the kernel and the interpreter); clone() makes a deep copy.
class Buffer {
 public:
  Buffer() = default;
  Buffer(te::DType dtype, std::vector<int64_t> shape);

  te::DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t size() const { return size_; }  // number of elements
  int64_t bytes() const { return size_ * te::dtypeBytes(dtype_); }
  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }

  // Element access through double (exact for every supported dtype).
  double get(int64_t flat) const;
  void set(int64_t flat, double v);  // rounds to the dtype
  void fill(double v);
  Buffer clone() const;
  // Values suited to testing each dtype: floats in [-1, 1), integers in a small
  // range, bools 0/1. Deterministic for a given generator state.
  void randomize(std::mt19937_64& rng);
  // Integers uniform in [0, extent): inputs that index other tensors.
  void randomizeIndices(std::mt19937_64& rng, int64_t extent);

 private:
  te::DType dtype_ = te::DType::F32;
  std::vector<int64_t> shape_;
  int64_t size_ = 0;
  std::shared_ptr<unsigned char> storage_;
};

}  // namespace tessel::runtime
