#include "runtime/Buffer.h"

#include <cstdlib>
#include <cstring>

#include "abi/KernelPrelude.h"

namespace tessel::runtime {

namespace {
constexpr size_t kPageBytes = 4096;
}  // namespace

Buffer::Buffer(te::DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  size_ = 1;
  for (int64_t d : shape_) size_ *= d;
  // Buffers of a page or more start on a page boundary. Where malloc puts
  // them depends on what was freed before (glibc serves them from the heap,
  // at any page offset, or maps pages afresh, all at one offset): kernels
  // that stream several such buffers ran 10-20% slower with all of them at
  // the same page offset, so two contestants with identical code differed
  // by that much. One placement for all, the one fresh pages give.
  size_t n = static_cast<size_t>(bytes());
  size_t alignment = n >= kPageBytes ? kPageBytes : 64;
  // A multiple of the alignment (as aligned_alloc wants) with at least 64
  // zeroed bytes past the end, never 0 bytes.
  size_t alloc = (n + 64 + alignment - 1) / alignment * alignment;
  auto* p = static_cast<unsigned char*>(std::aligned_alloc(alignment, alloc));
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, alloc);
  storage_.reset(p, [](unsigned char* q) { std::free(q); });
}

double Buffer::get(int64_t i) const {
  const unsigned char* p = storage_.get();
  switch (dtype_) {
    case te::DType::F32:
      return reinterpret_cast<const float*>(p)[i];
    case te::DType::F64:
      return reinterpret_cast<const double*>(p)[i];
    case te::DType::F16:
      return tessel_f16_to_f32(reinterpret_cast<const uint16_t*>(p)[i]);
    case te::DType::BF16:
      return tessel_bf16_to_f32(reinterpret_cast<const uint16_t*>(p)[i]);
    case te::DType::I32:
      return reinterpret_cast<const int32_t*>(p)[i];
    case te::DType::I8:
      return reinterpret_cast<const int8_t*>(p)[i];
    case te::DType::U8:
      return reinterpret_cast<const uint8_t*>(p)[i];
    case te::DType::Bool:
      return reinterpret_cast<const uint8_t*>(p)[i] ? 1.0 : 0.0;
  }
  return 0;
}

void Buffer::set(int64_t i, double v) {
  unsigned char* p = storage_.get();
  switch (dtype_) {
    case te::DType::F32:
      reinterpret_cast<float*>(p)[i] = static_cast<float>(v);
      return;
    case te::DType::F64:
      reinterpret_cast<double*>(p)[i] = v;
      return;
    case te::DType::F16:
      reinterpret_cast<uint16_t*>(p)[i] = tessel_f32_to_f16(static_cast<float>(v));
      return;
    case te::DType::BF16:
      reinterpret_cast<uint16_t*>(p)[i] = tessel_f32_to_bf16(static_cast<float>(v));
      return;
    case te::DType::I32:
      reinterpret_cast<int32_t*>(p)[i] = tessel_to_i32(v);
      return;
    case te::DType::I8:
      reinterpret_cast<int8_t*>(p)[i] = tessel_to_i8(v);
      return;
    case te::DType::U8:
      reinterpret_cast<uint8_t*>(p)[i] = tessel_to_u8(v);
      return;
    case te::DType::Bool:
      reinterpret_cast<uint8_t*>(p)[i] = v != 0 ? 1 : 0;
      return;
  }
}

Buffer Buffer::clone() const {
  Buffer copy(dtype_, shape_);
  std::memcpy(copy.data(), data(), static_cast<size_t>(bytes()));
  return copy;
}

void Buffer::fill(double v) {
  for (int64_t i = 0; i < size_; ++i) set(i, v);
}

void Buffer::randomize(std::mt19937_64& rng) {
  if (te::isFloat(dtype_)) {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (int64_t i = 0; i < size_; ++i) set(i, d(rng));
  } else if (dtype_ == te::DType::Bool) {
    for (int64_t i = 0; i < size_; ++i) set(i, static_cast<double>(rng() & 1));
  } else {
    std::uniform_int_distribution<int> d(dtype_ == te::DType::U8 ? 0 : -8, 8);
    for (int64_t i = 0; i < size_; ++i) set(i, d(rng));
  }
}

void Buffer::randomizeIndices(std::mt19937_64& rng, int64_t extent) {
  std::uniform_int_distribution<int64_t> d(0, extent > 0 ? extent - 1 : 0);
  for (int64_t i = 0; i < size_; ++i) set(i, static_cast<double>(d(rng)));
}

}  // namespace tessel::runtime
