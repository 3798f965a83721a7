
#include "abi/KernelPrelude.h"
#include "tessel/te.h"

namespace tessel::te {

const char* dtypeName(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F64:
      return "f64";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::I32:
      return "i32";
    case DType::I8:
      return "i8";
    case DType::U8:
      return "u8";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

std::optional<DType> dtypeFromName(const std::string& name) {
  for (DType t :
       {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I8, DType::U8, DType::Bool})
    if (name == dtypeName(t)) return t;
  return std::nullopt;
}

int dtypeBytes(DType t) {
  switch (t) {
    case DType::F64:
      return 8;
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F16:
    case DType::BF16:
      return 2;
    case DType::I8:
    case DType::U8:
    case DType::Bool:
      return 1;
  }
  return 0;
}

bool isFloat(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16; }
bool isInteger(DType t) { return t == DType::I32 || t == DType::I8 || t == DType::U8; }

namespace {
int rank(DType t) {
  switch (t) {
    case DType::Bool:
      return 0;
    case DType::I8:
    case DType::U8:
      return 1;
    case DType::I32:
      return 2;
    case DType::F16:
    case DType::BF16:
      return 3;
    case DType::F32:
      return 4;
    case DType::F64:
      return 5;
  }
  return 0;
}

float toF32(double v) { return static_cast<float>(v); }
}  // namespace

DType promote(DType a, DType b) {
  if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16)) return DType::F32;
  if (a == DType::I8 && b == DType::U8) return DType::I32;
  if (a == DType::U8 && b == DType::I8) return DType::I32;
  return rank(a) >= rank(b) ? a : b;
}

double roundToDType(double v, DType t) {
  switch (t) {
    case DType::F64:
      return v;
    case DType::F32:
      return toF32(v);
    // Same conversions as the generated kernels (runtime/KernelPrelude.h).
    case DType::BF16:
      return tessel_bf16_to_f32(tessel_f32_to_bf16(toF32(v)));
    case DType::F16:
      return tessel_f16_to_f32(tessel_f32_to_f16(toF32(v)));
    case DType::I32:
      return tessel_to_i32(v);
    case DType::I8:
      return tessel_to_i8(v);
    case DType::U8:
      return tessel_to_u8(v);
    case DType::Bool:
      return v != 0 ? 1.0 : 0.0;
  }
  return v;
}

}  // namespace tessel::te
